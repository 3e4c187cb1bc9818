/**
 * The turns a served run had not finished with when it stopped: a main turn still waiting for
 * its next state, and one whose next state had come but whose judgement was not committed (a
 * kill -9 while it was judged). Both are in the log already, since every interaction is
 * journaled before its reply goes out; a resumed server waits on the first again and judges the
 * second, so a stop loses no turn.
 */
import type { ChatMessage } from '../rl/messages';
import type { InteractionRecord, RunRecord } from '../rl/records';
import type { PolicyResponse } from '../rl/samples';
import type { ClosedTurn, ObservedTurn } from '../rl/sessions';
import { SessionPairing } from './serve-pairing';

/** What the session tracker keeps of a served reply: the response plus the tools its prompt was rendered with. */
export type ServedResponse = PolicyResponse & { tools?: readonly object[] };

/** A main turn that waits for its next state, with its session's request counts since it (re)started. */
export interface WaitingTurn {
  turn: ObservedTurn<ServedResponse>;
  turns: number;
  mainTurns: number;
}

export interface UnfinishedTurns {
  waiting: WaitingTurn[];
  unjudged: ClosedTurn<ServedResponse>[];
}

export interface UnfinishedOptions {
  /** The reply as the client got it back (tool calls parsed), which its next request repeats. */
  reply: (r: InteractionRecord) => ChatMessage;
  /** Whether the server paired the session's requests by their messages (it named the session). */
  paired: (session: string) => boolean;
}

function observed(r: InteractionRecord): ObservedTurn<ServedResponse> {
  return {
    session: r.session,
    turn: r.turn,
    turnType: r.turnType,
    version: r.version,
    messages: r.messages,
    response: { text: r.response, tokenIds: r.tokenIds, logprobs: r.logprobs, ...(r.tools ? { tools: r.tools } : {}) },
    at: r.ts,
  };
}

/**
 * The next state `next` gave `turn`, by the rule the server applied when `next` came: right after
 * the reply for a session it paired, else the request's last message.
 */
function nextStateOf(turn: InteractionRecord, next: InteractionRecord, o: UnfinishedOptions): ChatMessage | null {
  if (!o.paired(turn.session)) return next.messages.at(-1) ?? null;
  const pairing = new SessionPairing();
  pairing.remember(turn.session, turn.messages, o.reply(turn));
  const paired = pairing.match(next.messages);
  return (paired ? next.messages[paired.replyAt + 1] : next.messages.at(-1)) ?? null;
}

export function unfinishedTurns(records: readonly RunRecord[], o: UnfinishedOptions): UnfinishedTurns {
  const judged = new Set(records.flatMap((r) => (r.kind === 'judge_result' ? [`${r.session}#${r.turn}`] : [])));
  const sessions = new Map<string, { pending: InteractionRecord | null; turns: number; mainTurns: number }>();
  const unjudged: ClosedTurn<ServedResponse>[] = [];
  for (const r of records) {
    if (r.kind === 'session_end') sessions.delete(r.session);
    if (r.kind !== 'interaction') continue;
    const state = sessions.get(r.session) ?? { pending: null, turns: 0, mainTurns: 0 };
    sessions.set(r.session, state);
    state.turns++;
    if (r.turnType !== 'main') continue;
    state.mainTurns++;
    const before = state.pending;
    if (before && !judged.has(`${before.session}#${before.turn}`))
      unjudged.push({ ...observed(before), nextState: nextStateOf(before, r, o), closedBy: 'next-request', closedAt: r.ts });
    state.pending = r;
  }
  const waiting = [...sessions.values()].flatMap(({ pending, turns, mainTurns }) => (pending ? [{ turn: observed(pending), turns, mainTurns }] : []));
  return { waiting, unjudged };
}
