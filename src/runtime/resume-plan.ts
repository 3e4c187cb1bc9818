/**
 * Turning storage's resume point into the run loop's resume option: the samples that waited in
 * the buffer, rebuilt from their sample record and the interaction it was about, and the next
 * session number, so a resumed run never reuses a session name.
 */
import type { BufferedSample } from '../rl/buffer';
import { copyMessage } from '../rl/messages';
import type { InteractionRecord, RunRecord, SampleRecord } from '../rl/records';
import { copyTopK, type PolicyResponse, type TrainingSample } from '../rl/samples';
import { joinedOrNull } from '../rl/trajectory-sample';
import type { ResumePoint } from '../storage/index';
import type { RunLoopOptions } from './loop-types';

/**
 * One past the highest session of the log: the personal loop names sessions s0, s1, ...; the
 * tool-call loop names rollout r of group g "g<g>.r<r>", and counts groups.
 */
export function nextSessionIndex(records: Iterable<RunRecord>): number {
  let next = 0;
  for (const r of records) {
    const m = r.session !== undefined ? /^(?:s(\d+)|g(\d+)\.r\d+)$/.exec(r.session) : null;
    if (m) next = Math.max(next, Number(m[1] ?? m[2]) + 1);
  }
  return next;
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
  };
}

/** The run loop's resume option from a plan: what every resuming caller hands it. */
export function loopResume(plan: ResumePlan): NonNullable<RunLoopOptions['resume']> {
  return { step: plan.step, version: plan.version, sessionsStarted: plan.sessionsStarted, samples: plan.samples, studentWork: plan.studentWork };
}
