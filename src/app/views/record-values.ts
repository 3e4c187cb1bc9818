/** How the views read values out of run records. */
import type { ChatMessage } from '../../rl/messages';
import type { InteractionRecord } from '../../rl/records';
import type { TurnType } from '../../rl/sessions';
import { readReply } from '../../rl/readable-text';

export { finite, turnKey } from '../../storage/record-keys';

/** What every view of one turn says about it, from the turn's interaction record. */
export interface TurnHeader {
  session: string;
  turn: number;
  turnType: TurnType;
  /** The policy version that generated the answer. */
  version: number;
  /** The message the policy answered (the request's last message), null when there was none. */
  prompt: ChatMessage | null;
  /** The answer as it reads (readReply): byte tokens decoded, what is not text shown as an escape. */
  response: string;
}

export function turnHeader(r: InteractionRecord): TurnHeader {
  return {
    session: r.session,
    turn: r.turn,
    turnType: r.turnType,
    version: r.version,
    prompt: r.messages.length ? r.messages[r.messages.length - 1] : null,
    response: readReply(r.response, r.tokenTexts),
  };
}
