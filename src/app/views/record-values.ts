/** How the views read values out of run records. */
import type { ChatMessage } from '../../rl/messages';
import type { InteractionRecord } from '../../rl/records';

/** One key per (session, turn): the records of one turn share it. */
export function turnKey(session: string, turn: number): string {
  return `${session}\u0000${turn}`;
}

/** The number when it is finite, else null (a statistic the engine could not compute). */
export function finite(x: number | null | undefined): number | null {
  return typeof x === 'number' && Number.isFinite(x) ? x : null;
}

/** What every view of one turn says about it, from the turn's interaction record. */
export interface TurnHeader {
  session: string;
  turn: number;
  turnType: 'main' | 'side';
  /** The policy version that generated the answer. */
  version: number;
  /** The message the policy answered (the request's last message), null when there was none. */
  prompt: ChatMessage | null;
  response: string;
}

export function turnHeader(r: InteractionRecord): TurnHeader {
  return {
    session: r.session,
    turn: r.turn,
    turnType: r.turnType,
    version: r.version,
    prompt: r.messages.length ? r.messages[r.messages.length - 1] : null,
    response: r.response,
  };
}
