import { combinedAdvantages, summarizeAdvantages, type AdvantageWeights } from './advantages';
import type { BufferedSample } from './buffer';
import type { ChatMessage } from './messages';
import { LengthMismatchError } from './errors';
import { assertSameLength } from './numbers';
import type { MethodName } from './presets';
import type { SampleRecord } from './records';
import type { DistillTerm, TopKDistillTarget } from './topk-distill';
import type { ClosedTurn } from './sessions';
import type { TrajectoryFallback } from './trajectory-sample';

/** What the policy returned for one request. */
export interface PolicyResponse {
  text: string;
  tokenIds: readonly number[];
  /** Sampling log-prob of every token in tokenIds. */
  logprobs: readonly number[];
}

/** The judges' verdict on one closed turn. */
export interface TurnJudgement {
  /** r_final of the binary judge; null when it did not run (no next state, or OPD only). */
  reward: number | null;
  /** Per-token OPD advantages when a hint was accepted, else null. */
  opd: readonly number[] | null;
  /** When the preset clips A_OPD: the clip and the teacher log-probs of the chosen hint. */
  opdClip?: { clip: number; teacherLogp: readonly number[] };
  /**
   * With a hint, when the preset's OPD term is the top-k distillation term: the clip, the
   * student's top-k set at every response token and the chosen teacher's log-probs over it. With
   * `term` (the reverse-KL term): the teacher's top-k sets (or every id) and its log-probs over them.
   */
  opdTopK?: { clip: number; ids: readonly (readonly number[])[]; teacherLogp: readonly (readonly number[])[]; term?: DistillTerm };
}

/** A judged main turn, ready for the SampleBuffer. */
export interface TrainingSample {
  session: string;
  turn: number;
  version: number;
  messages: ChatMessage[];
  response: PolicyResponse;
  nextState: ChatMessage | null;
  reward: number | null;
  /** The per-token advantages as judged, against the rollout's log-probs (the sample record's). */
  advantages: number[];
  /**
   * w_opd when `advantages` hold an OPD term, else 0: the trainer re-bases that term on the
   * policy version it trains (TrainSample.opdWeight).
   */
  opdWeight: number;
  /**
   * Present when the OPD term is clipped: the trainer re-bases teacher - old and clips it again
   * (TrainSample.opdClip).
   */
  opdClip?: { clip: number; teacherLogp: number[] };
  /** The top-k distillation or reverse-KL term, in place of an OPD term in `advantages` (TrainSample.opdTopK). */
  opdTopK?: { weight: number; clip: number; ids: number[][]; teacherLogp: number[][]; term?: DistillTerm };
  judged: boolean;
  /**
   * Per-token loss mask over the response (src/rl/loss-mask.ts), present on a sample that holds
   * tokens the policy only read: a tool-call trajectory as one sample (joinTrajectory), whose
   * tool outputs are 0. Absent: every token is the policy's.
   */
  lossMask?: number[];
  /** Why this per-step sample stands in for a trajectory that did not join (SampleRecord.trajectoryFallback). */
  trajectoryFallback?: TrajectoryFallback;
  /**
   * The tools the prompt was rendered with, where they vary by request (a served agent's); absent:
   * the track's own (LoopSettings.tools), so training renders the prompt it sampled from.
   */
  tools?: readonly object[];
}

/**
 * Turns a closed main turn and its judgement into a training sample.
 *
 * binary: A = w_binary * r on every token (r = 0 when unjudged), always a sample, as the
 * reference submits every turn and masks the zero ones later.
 * opd: A = w_opd * A^OPD; no accepted hint means no sample (null), as in the reference.
 * combined: A = w_binary * r + w_opd * A^OPD. Where no hint was accepted the rollout's own
 * log-probs are the teacher, as the reference's combine server sets them, so A^OPD = 0 here and
 * the trainer's re-basing makes the term w_opd * (rollout - old) (unclipped). A turn with
 * neither a hint nor a nonzero r (an ambiguous judge, or no next state) gives no sample, as the
 * reference's combine server drops it rather than spend a batch slot on it.
 *
 * A^OPD here is against the rollout's log-probs; the trainer re-bases it on the policy it trains.
 * With the top-k distillation or reverse-KL term (judgement.opdTopK) the advantages keep only
 * w_binary * r and the term travels beside them, weighted w_opd.
 *
 * @throws LengthMismatchError when the OPD advantages do not cover the response tokens
 */
export function assembleSample(
  turn: ClosedTurn<PolicyResponse>,
  judgement: TurnJudgement,
  method: MethodName,
  weights: AdvantageWeights,
): TrainingSample | null {
  const tokens = turn.response.tokenIds.length;
  const opd = method === 'binary' ? null : judgement.opd;
  if (method === 'opd' && opd === null) return null;
  if (opd) assertSameLength(`OPD advantages of ${turn.session}#${turn.turn}`, turn.response.tokenIds, opd);
  const reward = method === 'opd' ? null : judgement.reward;
  if (method === 'combined' && opd === null && (reward ?? 0) === 0) return null;
  const topK = opd && judgement.opdTopK;
  if (topK && (topK.ids.length !== tokens || topK.teacherLogp.length !== tokens)) {
    throw new LengthMismatchError(`top-k sets of ${turn.session}#${turn.turn}`, tokens, Math.min(topK.ids.length, topK.teacherLogp.length));
  }
  const zeros = new Array<number>(tokens).fill(0);
  return {
    session: turn.session,
    turn: turn.turn,
    version: turn.version,
    messages: turn.messages,
    response: turn.response,
    nextState: turn.nextState,
    reward,
    judged: turn.nextState !== null,
    ...(topK
      ? {
          advantages: combinedAdvantages(reward ?? 0, zeros, weights),
          opdWeight: 0,
          opdTopK: copyTopK({ ...topK, weight: weights.opd }),
        }
      : {
          advantages: combinedAdvantages(reward ?? 0, opd ?? zeros, weights),
          opdWeight: opd || method === 'combined' ? weights.opd : 0,
          ...(opd && judgement.opdClip ? { opdClip: { clip: judgement.opdClip.clip, teacherLogp: [...judgement.opdClip.teacherLogp] } } : {}),
        }),
  };
}

/** The run-log record of a sample as the buffer tagged it. */
export function sampleRecord(sample: BufferedSample<TrainingSample>, ts: number): SampleRecord {
  return {
    kind: 'sample',
    version: sample.version,
    ts,
    session: sample.session,
    turn: sample.turn,
    trainable: sample.trainable,
    promoted: sample.promoted,
    reward: sample.reward,
    advantages: summarizeAdvantages(sample.advantages),
    perToken: [...sample.advantages],
    ...(sample.lossMask ? { lossMask: [...sample.lossMask] } : {}),
    ...(sample.trajectoryFallback ? { trajectoryFallback: sample.trajectoryFallback } : {}),
    ...(sample.opdWeight !== 0 ? { opdWeight: sample.opdWeight } : {}),
    ...(sample.opdWeight !== 0 && sample.opdClip ? { opdClip: { clip: sample.opdClip.clip, teacherLogp: [...sample.opdClip.teacherLogp] } } : {}),
    ...(sample.opdTopK ? { opdTopK: copyTopK(sample.opdTopK) } : {}),
  };
}

/** A deep copy of a top-k term, for a record or a sample rebuilt from one. */
export function copyTopK(t: TopKDistillTarget): NonNullable<TrainingSample['opdTopK']> {
  return { weight: t.weight, clip: t.clip, ids: t.ids.map((s) => [...s]), teacherLogp: t.teacherLogp.map((s) => [...s]), ...(t.term ? { term: t.term } : {}) };
}
