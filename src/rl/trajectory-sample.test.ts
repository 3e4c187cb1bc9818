/**
 * A two-step tool-call trajectory as one sample, against numbers worked by hand from the
 * reference's formulas: generate_with_retool.py lays the trajectory out as prompt, step 0, tool
 * output (loss_mask 0, rollout log-prob 0), step 1; slime's step_wise estimator puts each step's
 * advantage on its span and multiplies by the mask; sum_of_sample_mean divides a sample's masked
 * sum by its mask's sum (token-mean: the batch's masked sum by the batch's mask sum).
 */
import { describe, expect, it } from 'vitest';
import { LengthMismatchError } from './errors';
import { checkLossMask, countedTokens, LossMaskError, maskAdvantages } from './loss-mask';
import { ppoBatchLoss, type PpoSettings } from './ppo';
import { joinedOrNull, joinTrajectory, TrajectoryJoinError, tryJoinTrajectory } from './trajectory-sample';

// Prompt [1, 2]; step 0 writes [10, 11]; the policy then reads [90, 91, 92] (the tool result
// and the turn markers); step 1 writes [12].
const STEP_0 = { promptIds: [1, 2], tokenIds: [10, 11], logprobs: [-0.5, -1], advantage: 1.5 };
const STEP_1 = { promptIds: [1, 2, 10, 11, 90, 91, 92], tokenIds: [12], logprobs: [-0.25], advantage: -0.5 };

describe('joinTrajectory', () => {
  it('lays a 2-step trajectory out as the reference does: observation tokens masked, advantage 0, log-prob 0', () => {
    const j = joinTrajectory([STEP_0, STEP_1]);
    expect(j.promptIds).toEqual([1, 2]);
    expect(j.tokenIds).toEqual([10, 11, 90, 91, 92, 12]);
    expect(j.lossMask).toEqual([1, 1, 0, 0, 0, 1]);
    expect(j.logprobs).toEqual([-0.5, -1, 0, 0, 0, -0.25]);
    expect(j.advantages).toEqual([1.5, 1.5, 0, 0, 0, -0.5]);
    expect(j.spans).toEqual([
      [0, 2],
      [5, 6],
    ]);
  });

  it('is the step itself for a one-step trajectory', () => {
    expect(joinTrajectory([STEP_0])).toMatchObject({ tokenIds: [10, 11], lossMask: [1, 1], advantages: [1.5, 1.5] });
  });

  it('refuses a step whose prompt does not continue the sequence, naming the per-step option', () => {
    const rewritten = { ...STEP_1, promptIds: [1, 2, 10, 99, 90] };
    expect(() => joinTrajectory([STEP_0, rewritten])).toThrow(TrajectoryJoinError);
    expect(() => joinTrajectory([STEP_0, rewritten])).toThrow(/position 3 of 4.*toolCallSamples "step"/);
    expect(() => joinTrajectory([STEP_0, { ...STEP_1, promptIds: [1, 2, 10] }])).toThrow(TrajectoryJoinError);
    expect(() => joinTrajectory([])).toThrow(TrajectoryJoinError);
    expect(() => joinTrajectory([{ ...STEP_0, logprobs: [-1] }])).toThrow(LengthMismatchError);
  });
});

describe('tryJoinTrajectory', () => {
  it('gives the joined steps, or why they do not join', () => {
    expect(tryJoinTrajectory([STEP_0, STEP_1])).toEqual({ joined: joinTrajectory([STEP_0, STEP_1]) });
    expect(tryJoinTrajectory([STEP_0, { ...STEP_1, promptIds: undefined }])).toEqual({ fallback: 'no-prompt-ids' });
    expect(tryJoinTrajectory([STEP_0, { ...STEP_1, promptIds: [1, 2, 10, 99, 90] }])).toEqual({ fallback: 'prompt-mismatch' });
    expect(joinedOrNull([STEP_0, { ...STEP_1, promptIds: [1, 2, 10, 99, 90] }])).toBeNull();
    expect(joinedOrNull([])).toBeNull();
    expect(() => tryJoinTrajectory([])).toThrow(TrajectoryJoinError);
    expect(() => tryJoinTrajectory([{ ...STEP_0, logprobs: [-1] }])).toThrow(LengthMismatchError);
  });
});

describe('the loss of a trajectory sample, by hand', () => {
  const j = joinTrajectory([STEP_0, STEP_1]);
  // The trainer's log-probs: off the old policy on the policy's tokens (rho inside the band), and
  // anything on the observation tokens, which must not matter.
  const oldLogp = [-0.5, -1, -3, -0.2, -7, -0.25];
  const logp = [-0.45, -1.1, 2, -9, 0.5, -0.2];
  const trajectory = { logp, oldLogp, advantages: j.advantages, lossMask: j.lossMask };
  // A second, one-step sample in the batch: A = 1 on 2 tokens, rho = 1.
  const other = { logp: [-1, -2], oldLogp: [-1, -2], advantages: [1, 1] };
  const s: PpoSettings = { epsLow: 0.2, epsHigh: 0.28, klCoef: 0, aggregation: 'sample-mean' };

  // L_t = -min(rho A, clip(rho) A) on the 3 policy tokens:
  //   t0: rho = e^0.05 = 1.051271, A = 1.5 -> -1.576907
  //   t1: rho = e^-0.1 = 0.904837, A = 1.5 -> -1.357256
  //   t5: rho = e^0.05 = 1.051271, A = -0.5 -> +0.525636 (rho A = -0.525636 is the min)
  const L = [-1.5 * Math.exp(0.05), -1.5 * Math.exp(-0.1), 0.5 * Math.exp(0.05)];
  const trajectorySum = L[0] + L[1] + L[2];

  it('sample-mean: the trajectory is one sample, its sum divided by its 3 policy tokens, then by the batch of 2', () => {
    expect(trajectorySum).toBeCloseTo(-2.408527, 5);
    const got = ppoBatchLoss([trajectory, other], s);
    expect(got.policyLoss).toBeCloseTo((trajectorySum / 3 + -1) / 2, 10);
    expect(got.policyLoss).toBeCloseTo(-0.901421, 5);
    expect(got.tokens).toBe(5);
  });

  it('token-mean: the batch sum divided by the 5 policy tokens of the batch', () => {
    const got = ppoBatchLoss([trajectory, other], { ...s, aggregation: 'token-mean' });
    expect(got.policyLoss).toBeCloseTo((trajectorySum - 2) / 5, 10);
  });

  it('observation tokens contribute nothing: any log-prob or advantage there leaves loss and statistics as they were', () => {
    const base = ppoBatchLoss([trajectory, other], s);
    const wild = { ...trajectory, logp: [-0.45, -1.1, -40, 30, 1e3, -0.2], advantages: [1.5, 1.5, 1e6, -1e6, 7, -0.5] };
    expect(ppoBatchLoss([wild, other], s)).toEqual(base);
    // The same sample without its mask is another loss: the mask is what keeps them out.
    expect(ppoBatchLoss([{ ...wild, lossMask: undefined }, other], s).policyLoss).not.toBeCloseTo(base.policyLoss, 3);
  });

  it('the statistics are over the policy tokens only', () => {
    const got = ppoBatchLoss([trajectory], s);
    expect(got.meanAbsAdv).toBeCloseTo((1.5 + 1.5 + 0.5) / 3, 10);
    expect(got.logpGap).toBeCloseTo((0.05 + 0.1 + 0.05) / 3, 10);
  });
});

describe('loss masks', () => {
  it('count, check and zero what they mask', () => {
    expect(countedTokens([1, 0, 1, 0], 4)).toBe(2);
    expect(countedTokens(undefined, 4)).toBe(4);
    expect(maskAdvantages([1, 2, 3], [1, 0, 1])).toEqual([1, 0, 3]);
    expect(maskAdvantages([1, 2], undefined)).toEqual([1, 2]);
    expect(() => checkLossMask([1, 0], 3, 'sample 0')).toThrow(LossMaskError);
    expect(() => checkLossMask([1, 0.5], 2, 'sample 0')).toThrow(/entry 1 is 0.5/);
    expect(() => checkLossMask(undefined, 2, 'sample 0')).not.toThrow();
  });
});
