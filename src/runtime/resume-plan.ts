/**
 * Turning storage's resume point into the run loop's resume option: the samples that waited in
 * the buffer, rebuilt from their sample record and the interaction it was about, and the next
 * session number, so a resumed run never reuses a session name.
 */
import type { BufferedSample } from '../rl/buffer';
import { copyMessage } from '../rl/messages';
import { turnCount, type InteractionRecord, type RunRecord, type RuntimeEventRecord, type SampleRecord, type SessionTurns } from '../rl/records';
import { copyTopK, type PolicyResponse, type TrainingSample } from '../rl/samples';
import { joinedOrNull } from '../rl/trajectory-sample';
import type { ResumePoint } from '../storage/index';
import type { RunLoopOptions } from './loop-types';

/**
 * The index a run loop gave a session: the personal loop names sessions s0, s1, ... (a homework's
 * earlier phases s3.student, ...); the tool-call loop names rollout r of group g "g<g>.r<r>", and
 * counts groups. Null for any other name (a served client's).
 */
export function sessionIndexOf(session: string): number | null {
  const m = /^(?:s(\d+)(?:\.[a-z]+)?|g(\d+)\.r\d+)$/.exec(session);
  return m ? Number(m[1] ?? m[2]) : null;
}

/** One past the highest session index of the log. */
export function nextSessionIndex(records: Iterable<RunRecord>): number {
  let next = 0;
  for (const r of records) {
    const index = r.session !== undefined ? sessionIndexOf(r.session) : null;
    if (index !== null) next = Math.max(next, index + 1);
  }
  return next;
}

/** What a resumed loop goes on with besides its buffer: a served run's turns that wait for a next state or a judge. */
export type GoesOn = (session: string, turn: number) => boolean;

/**
 * The main turns a resumed run leaves behind, by session in log order: turns of the interrupted
 * step that never reached the buffer and that the run does not go on with, since it starts new
 * sessions after the old ones. When a turn reached the buffer depends on the loop:
 * - a free-running loop buffers each turn once it is judged, so a judge's result settles it (a
 *   sample, or none: dropped);
 * - a fixed schedule (`fixed`) buffers the results of each session index (its sessions: a
 *   homework's phases, a group's rollouts) in turn, once every earlier index's are in, one sample
 *   record after the other, so a judged turn waits for that. A sample logged for index i shows
 *   that every earlier index was buffered whole, and index i up to that sample; a stop may have
 *   cut index i's off after it. Its turns past its last sample, like a session with no sample at
 *   all there, may have been dropped rather than cut off: nothing in the log tells the two apart,
 *   so they are marked; either way they trained nothing.
 * Never listed: a turn `goesOn` (a served run's), one whose session ended before a next state
 * came (session_end.unjudgedTurn: no judge was ever due), and one an earlier resume listed.
 */
export function interruptedTurns(records: readonly RunRecord[], o: { fixed: boolean; goesOn?: GoesOn }): SessionTurns[] {
  const key = (session: string, turn: number) => `${session}#${turn}`;
  const settled = new Set<string>();
  // Per session, the last turn a sample covers: a trajectory's one sample (a loss mask) covers every step from its turn on.
  const covered = new Map<string, number>();
  let bufferedThrough = -1;
  for (const r of records) {
    if (r.kind === 'sample') {
      settled.add(key(r.session, r.turn));
      covered.set(r.session, Math.max(covered.get(r.session) ?? 0, r.lossMask ? Infinity : r.turn));
      bufferedThrough = Math.max(bufferedThrough, sessionIndexOf(r.session) ?? -1);
    } else if ((r.kind === 'judge_result' || r.kind === 'tool_step') && !o.fixed) settled.add(key(r.session, r.turn));
    else if (r.kind === 'session_end' && r.unjudgedTurn !== undefined) settled.add(key(r.session, r.unjudgedTurn));
    else if (r.kind === 'runtime_event') for (const s of r.interrupted ?? []) for (const t of s.turns) settled.add(key(s.session, t));
  }
  const buffered = (session: string, turn: number) => {
    const index = sessionIndexOf(session);
    if (index === null || index > bufferedThrough) return false;
    return index < bufferedThrough || turn <= (covered.get(session) ?? 0);
  };
  const out = new Map<string, Set<number>>();
  for (const r of records) {
    if (r.kind !== 'interaction' || r.turnType !== 'main' || settled.has(key(r.session, r.turn)) || o.goesOn?.(r.session, r.turn)) continue;
    if (o.fixed && buffered(r.session, r.turn)) continue;
    const turns = out.get(r.session) ?? new Set<number>();
    out.set(r.session, turns.add(r.turn));
  }
  return [...out].map(([session, turns]) => ({ session, turns: [...turns].sort((a, b) => a - b) }));
}

/** What a resumed run goes on with, and what it leaves behind: the line it prints and logs. */
export interface ResumeSummary {
  step: number;
  version: number;
  /** Samples back in the buffer. */
  samples: number;
  /** Buffered samples left out: their interaction is missing from the log. */
  dropped: number;
  /** What else goes on (a served run's waiting turns), in words; null when nothing. */
  goesOn: string | null;
  /** The turns left behind (interruptedTurns); null where the policy's server judges and trains them. */
  interrupted: SessionTurns[] | null;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The resume in one line, e.g. "resumed at step 5 (v5) with 3 buffered samples; 4 turns of the interrupted step 6 kept, marked interrupted, never trained (2 sessions)". */
export function resumeMessage(r: ResumeSummary): string {
  const parts = [`resumed at step ${r.step} (v${r.version}) with ${plural(r.samples, 'buffered sample')}${r.goesOn ? `, ${r.goesOn}` : ''}`];
  if (r.dropped > 0)
    parts.push(`${plural(r.dropped, 'buffered sample')} left out (${r.dropped === 1 ? 'its interaction is' : 'their interactions are'} missing from the log)`);
  if (r.interrupted) {
    const turns = turnCount(r.interrupted);
    parts.push(
      turns === 0
        ? `no turn of the interrupted step ${r.step + 1} was left behind`
        : `${plural(turns, 'turn')} of the interrupted step ${r.step + 1} kept, marked interrupted, never trained (${plural(r.interrupted.length, 'session')})`,
    );
  }
  return parts.join('; ');
}

/** The log's record of the last resume, if the run was resumed. */
export function lastResume(records: readonly RunRecord[]): RuntimeEventRecord | undefined {
  return records.findLast((r): r is RuntimeEventRecord => r.kind === 'runtime_event' && r.event === 'run_resumed');
}

/** The side session in which the policy writes the teacher scenario's student attempts (turn k + 1 is slot k). */
export const STUDENT_WORK_SESSION = 'student-work';

/** The student attempts a teacher run logged, by slot; the last record of a slot wins. */
export function recordedStudentWork(records: Iterable<RunRecord>): Map<number, string> {
  const work = new Map<number, string>();
  for (const r of records) if (r.kind === 'interaction' && r.session === STUDENT_WORK_SESSION && r.turnType === 'side') work.set(r.turn - 1, r.response);
  return work;
}

export interface ResumePlan {
  step: number;
  version: number;
  sessionsStarted: number;
  samples: BufferedSample<TrainingSample>[];
  studentWork: Map<number, string>;
  /** Buffered samples whose interaction is missing from the log: they cannot be trained on again. */
  dropped: number;
  /** The log the plan was made from, for the turns the resumed run leaves behind (interruptedTurns). */
  logged: readonly RunRecord[];
}

/** Each session's main interactions, in turn order: a trajectory sample's steps. */
function mainTurns(records: readonly RunRecord[]): Map<string, InteractionRecord[]> {
  const out = new Map<string, InteractionRecord[]>();
  for (const r of records) if (r.kind === 'interaction' && r.turnType === 'main') out.set(r.session, [...(out.get(r.session) ?? []), r]);
  for (const turns of out.values()) turns.sort((a, b) => a.turn - b.turn);
  return out;
}

/**
 * The ids a sample record trained on: its interaction's, or for a sample with a loss mask (a
 * tool-call trajectory) its session's steps from its turn on, joined again as the loop joined
 * them. Null when the log no longer holds them.
 */
function recordedResponse(
  s: SampleRecord,
  i: InteractionRecord,
  turns: readonly InteractionRecord[] | undefined,
): Pick<PolicyResponse, 'tokenIds' | 'logprobs'> | null {
  if (!s.lossMask) return i.tokenIds.length === s.perToken.length ? { tokenIds: [...i.tokenIds], logprobs: [...i.logprobs] } : null;
  const joined = joinedOrNull((turns ?? []).filter((t) => t.turn >= s.turn));
  const same = joined?.lossMask.length === s.lossMask.length && joined.lossMask.every((m, k) => m === s.lossMask![k]);
  return same ? { tokenIds: joined.tokenIds, logprobs: joined.logprobs } : null;
}

export function resumePlan(point: ResumePoint, records: Iterable<RunRecord>): ResumePlan {
  const samples: BufferedSample<TrainingSample>[] = [];
  const logged = [...records];
  const turns = mainTurns(logged);
  let dropped = 0;
  for (const { sample, interaction } of point.buffered) {
    const s = sample.record;
    const i = interaction?.record;
    const response = i ? recordedResponse(s, i, turns.get(s.session)) : null;
    if (!i || !response) {
      dropped++;
      continue;
    }
    samples.push({
      session: s.session,
      turn: s.turn,
      version: s.version,
      messages: i.messages.map(copyMessage),
      ...(i.tools ? { tools: structuredClone(i.tools) } : {}),
      response: { text: i.response, ...response },
      // The next state is not needed to train, only to judge, and the judging is done.
      nextState: null,
      reward: s.reward,
      advantages: [...s.perToken],
      ...(s.lossMask ? { lossMask: [...s.lossMask] } : {}),
      ...(s.trajectoryFallback ? { trajectoryFallback: s.trajectoryFallback } : {}),
      opdWeight: s.opdWeight ?? 0,
      ...(s.opdClip ? { opdClip: { clip: s.opdClip.clip, teacherLogp: [...s.opdClip.teacherLogp] } } : {}),
      ...(s.opdTopK ? { opdTopK: copyTopK(s.opdTopK) } : {}),
      judged: true,
      trainable: s.trainable,
      promoted: s.promoted,
    });
  }
  return {
    step: point.lastStep ?? 0,
    version: point.version,
    sessionsStarted: nextSessionIndex(logged),
    samples,
    studentWork: recordedStudentWork(logged),
    dropped,
    logged,
  };
}

/** The run loop's resume option from a plan: what every resuming caller hands it. */
export function loopResume(plan: ResumePlan): NonNullable<RunLoopOptions['resume']> {
  return {
    step: plan.step,
    version: plan.version,
    sessionsStarted: plan.sessionsStarted,
    samples: plan.samples,
    studentWork: plan.studentWork,
    logged: plan.logged,
    dropped: plan.dropped,
  };
}
