/**
 * The turns a served run had not finished with when it stopped: a main turn still waiting for
 * its next state, one whose next state had come but whose judgement was not committed (a
 * kill -9 while it was judged), and one judged whose sample was not (a kill -9 between the two
 * commits). All are in the log already, since every interaction is journaled before its reply
 * goes out; a resumed server waits on the first again, judges the second, and buffers the
 * third's sample rebuilt from its records, so a stop loses no turn.
 */
import { opdAdvantages } from '../rl/advantages';
import type { ChatMessage } from '../rl/messages';
import { hintSelectionOf, klTermOf, opdTermOf, type MethodName, type MethodPreset } from '../rl/presets';
import type { InteractionRecord, JudgeResultRecord, RunRecord } from '../rl/records';
import { assembleSample, type PolicyResponse, type TrainingSample } from '../rl/samples';
import { clippedOpdAdvantages } from '../rl/topk-hints';
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
  /** Judged turns' samples that were never buffered (no sample record), rebuilt from their records: buffered once the loop runs. */
  unbuffered: TrainingSample[];
}

export interface UnfinishedOptions {
  /** The reply as the client got it back (tool calls parsed), which its next request repeats. */
  reply: (r: InteractionRecord) => ChatMessage;
  /** Whether the server paired the session's requests by their messages (it named the session). */
  paired: (session: string) => boolean;
  /** How the run judges and weighs a turn: what rebuilds a judged turn's sample. */
  run: { method: MethodName; preset: MethodPreset };
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

/**
 * The sample judgeAndBuffer (loop-core.ts) assembled for a judged turn, from its interaction and
 * judge_result records: the binary result's score is the reward, the hint result's teacherLogp
 * gives the OPD advantages against the logged log-probs. Null where the judgement gave none (the
 * method dropped the turn), or where the log cannot give it exactly: a judge's result missing,
 * or a top-k OPD term, whose teacher sets no record keeps.
 */
function rebuiltSample(i: InteractionRecord, results: readonly JudgeResultRecord[], run: UnfinishedOptions['run']): TrainingSample | null {
  const { preset } = run;
  const binary = results.find((r) => r.judge === 'binary');
  const hint = results.find((r) => r.judge === 'hint');
  if ((preset.judge.binaryVotes > 0 && !binary) || (preset.judge.hintVotes > 0 && !hint)) return null;
  const teacherLogp = hint?.teacherLogp ?? null;
  if (teacherLogp && (opdTermOf(preset) === 'topk-distill' || klTermOf(preset))) return null;
  const { clip } = hintSelectionOf(preset);
  const opd = teacherLogp && (clip > 0 ? clippedOpdAdvantages(teacherLogp, i.logprobs, clip) : opdAdvantages(teacherLogp, i.logprobs));
  const judgement = { reward: binary?.score ?? null, opd, ...(teacherLogp && clip > 0 ? { opdClip: { clip, teacherLogp } } : {}) };
  const turn = observed(i);
  const sample = assembleSample({ ...turn, nextState: null, closedBy: 'next-request', closedAt: i.ts }, judgement, run.method, preset.advantage.weights);
  // The next state is not needed to train, only to judge, and the judging is done.
  return sample && { ...sample, judged: true, ...(turn.response.tools ? { tools: turn.response.tools } : {}) };
}

export function unfinishedTurns(records: readonly RunRecord[], o: UnfinishedOptions): UnfinishedTurns {
  const key = (r: { session: string; turn: number }) => `${r.session}#${r.turn}`;
  const results = new Map<string, JudgeResultRecord[]>();
  for (const r of records) if (r.kind === 'judge_result') results.set(key(r), [...(results.get(key(r)) ?? []), r]);
  const judged = new Set(results.keys());
  // A sample record means buffered (or trained since); a turn an earlier resume left behind stays so.
  const settled = new Set(records.flatMap((r) => (r.kind === 'sample' ? [key(r)] : [])));
  for (const r of records) if (r.kind === 'runtime_event') for (const s of r.interrupted ?? []) for (const turn of s.turns) settled.add(key({ ...s, turn }));
  const unbuffered: TrainingSample[] = [];
  for (const r of records) {
    const turnResults = r.kind === 'interaction' && r.turnType === 'main' && !settled.has(key(r)) ? results.get(key(r)) : undefined;
    const sample = r.kind === 'interaction' && turnResults ? rebuiltSample(r, turnResults, o.run) : null;
    if (sample) unbuffered.push(sample);
  }
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
  return { waiting, unjudged, unbuffered };
}
