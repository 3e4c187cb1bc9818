/**
 * Turning storage's resume point into the run loop's resume option: the samples that waited in
 * the buffer, rebuilt from their sample record and the interaction it was about, and the next
 * session number, so a resumed run never reuses a session name.
 */
import type { BufferedSample } from '../rl/buffer';
import { copyMessage } from '../rl/messages';
import type { RunRecord } from '../rl/records';
import { copyTopK, type TrainingSample } from '../rl/samples';
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

export function resumePlan(point: ResumePoint, records: Iterable<RunRecord>): ResumePlan {
  const samples: BufferedSample<TrainingSample>[] = [];
  let dropped = 0;
  for (const { sample, interaction } of point.buffered) {
    const s = sample.record;
    const i = interaction?.record;
    if (!i || i.tokenIds.length !== s.perToken.length) {
      dropped++;
      continue;
    }
    samples.push({
      session: s.session,
      turn: s.turn,
      version: s.version,
      messages: i.messages.map(copyMessage),
      ...(i.tools ? { tools: structuredClone(i.tools) } : {}),
      response: { text: i.response, tokenIds: [...i.tokenIds], logprobs: [...i.logprobs] },
      // The next state is not needed to train, only to judge, and the judging is done.
      nextState: null,
      reward: s.reward,
      advantages: [...s.perToken],
      opdWeight: s.opdWeight ?? 0,
      ...(s.opdClip ? { opdClip: { clip: s.opdClip.clip, teacherLogp: [...s.opdClip.teacherLogp] } } : {}),
      ...(s.opdTopK ? { opdTopK: copyTopK(s.opdTopK) } : {}),
      judged: true,
      trainable: s.trainable,
      promoted: s.promoted,
    });
  }
  const logged = [...records];
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
