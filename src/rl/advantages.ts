import { int, num, object, type Infer } from '../base/check';
import { InvalidArgumentError } from './errors';
import { assertCount, assertFinite, assertSameLength, mean, unsignedZero } from './numbers';

/**
 * OPD per-token advantage: A_t = log pi_teacher(a_t | s_enhanced) - log pi_theta(a_t | s_t).
 * Positive where the hint makes the sampled token more likely, i.e. where the student should
 * move toward what it would have said had it known the hint.
 *
 * @param teacherLogp - log-probs of the response tokens under the hint-conditioned teacher
 * @param studentLogp - log-probs of the same tokens under the policy that sampled them
 * @throws LengthMismatchError, InvalidArgumentError (non-finite log-prob)
 */
export function opdAdvantages(teacherLogp: readonly number[], studentLogp: readonly number[]): number[] {
  assertSameLength('opdAdvantages(teacherLogp, studentLogp)', studentLogp, teacherLogp);
  return teacherLogp.map((t, i) => {
    assertFinite(`teacherLogp[${i}]`, t);
    assertFinite(`studentLogp[${i}]`, studentLogp[i]);
    return opdAdvantage(t, studentLogp[i]);
  });
}

/** One token's A_t^OPD = log pi_teacher(a_t) - log pi_student(a_t). */
export function opdAdvantage(teacherLogp: number, studentLogp: number): number {
  return teacherLogp - studentLogp;
}

/** Weights of the two signals in the combined advantage (a preset's advantage.weights): AdvantageWeights' one definition. */
export const advantageWeightsShape = object({
  /** w_binary, multiplies the turn's final judge score. */
  binary: num(),
  /** w_opd, multiplies the per-token OPD advantage. */
  opd: num(),
});
export type AdvantageWeights = Infer<typeof advantageWeightsShape>;

/**
 * Binary RL advantage: the final score r for every response token.
 *
 * @param reward - r_final from the majority vote
 * @param tokens - number of response tokens
 */
export function binaryAdvantages(reward: number, tokens: number): number[] {
  assertFinite('reward', reward);
  assertCount('tokens', tokens);
  return new Array<number>(tokens).fill(unsignedZero(reward));
}

/**
 * Combined advantage per token: A_t = w_binary * r + w_opd * A_t^OPD. The response length
 * comes from `opd`; a turn without an accepted hint has no directive signal, so pass zeros
 * of the response length (then A_t = w_binary * r).
 *
 * @param reward - r_final from the binary judge (0 when unjudged)
 * @param opd - per-token OPD advantages
 * @param weights - w_binary and w_opd (both 1 in the reference)
 */
export function combinedAdvantages(reward: number, opd: readonly number[], weights: AdvantageWeights): number[] {
  assertFinite('reward', reward);
  return opd.map((a, i) => {
    assertFinite(`opd[${i}]`, a);
    return unsignedZero(weights.binary * reward + weights.opd * a);
  });
}

/**
 * Step rewards for general agents: r_t = o + mean of the PRM votes for step t.
 * Failed votes (null) are left out of the mean; a step with no valid vote gets r_t = o.
 *
 * @param outcome - o, the trajectory outcome
 * @param stepVotes - the m votes of every step, in step order
 */
export function stepwiseRewards(outcome: number, stepVotes: readonly (readonly (number | null)[])[]): number[] {
  assertFinite('outcome', outcome);
  return stepVotes.map((votes) => {
    const valid = votes.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    return outcome + mean(valid);
  });
}

/** One action's step index and reward, the input of standardizeByStep. */
export interface StepSample {
  step: number;
  reward: number;
}

/** Added to the standard deviation so near-constant groups do not blow up. */
export const STD_EPSILON = 1e-6;

/**
 * Standardizes rewards within groups of actions that share a step index:
 * A = (r - mean) / (std + 1e-6), with the population standard deviation.
 *
 * A group where every reward is equal carries no ranking, so its samples are dropped
 * (null), except a group of one, which keeps its raw reward: with a single rollout per
 * step there is nothing to compare against, and dropping it would discard all data.
 *
 * @returns one entry per input sample, in input order: its advantage, or null if dropped
 */
export function standardizeByStep(samples: readonly StepSample[]): (number | null)[] {
  const groups = new Map<number, number[]>();
  samples.forEach((s, i) => {
    if (!Number.isInteger(s.step)) {
      throw new InvalidArgumentError(`samples[${i}].step is ${s.step}; step indices must be integers.`);
    }
    assertFinite(`samples[${i}].reward`, s.reward);
    const group = groups.get(s.step);
    if (group) group.push(i);
    else groups.set(s.step, [i]);
  });
  const out = new Array<number | null>(samples.length).fill(null);
  for (const members of groups.values()) {
    const rewards = members.map((i) => samples[i].reward);
    if (members.length === 1) {
      out[members[0]] = rewards[0];
      continue;
    }
    // Compared exactly: a computed variance of equal values can be a rounding error above 0.
    if (rewards.every((r) => r === rewards[0])) continue;
    const mu = mean(rewards);
    const std = Math.sqrt(mean(rewards.map((r) => (r - mu) ** 2)));
    members.forEach((i, k) => {
      out[i] = (rewards[k] - mu) / (std + STD_EPSILON);
    });
  }
  return out;
}

/** What a sample record stores about its advantages besides the per-token values: AdvantageSummary's one definition. */
export const advantageSummaryChecker = object({
  tokens: int(),
  mean: num(),
  min: num(),
  max: num(),
  meanAbs: num(0),
  /** Tokens whose advantage is not zero. */
  nonZero: int(),
});
export type AdvantageSummary = Infer<typeof advantageSummaryChecker>;

/** Summary statistics of one sample's per-token advantages (all zeros for no tokens). */
export function summarizeAdvantages(advantages: readonly number[]): AdvantageSummary {
  if (advantages.length === 0) return { tokens: 0, mean: 0, min: 0, max: 0, meanAbs: 0, nonZero: 0 };
  let min = Infinity;
  let max = -Infinity;
  let nonZero = 0;
  for (const a of advantages) {
    if (a < min) min = a;
    if (a > max) max = a;
    if (a !== 0) nonZero++;
  }
  return {
    tokens: advantages.length,
    mean: mean(advantages),
    min: unsignedZero(min),
    max: unsignedZero(max),
    meanAbs: mean(advantages.map(Math.abs)),
    nonZero,
  };
}
