import { describe, it, expect } from 'vitest';
import { InvalidArgumentError, LengthMismatchError } from './errors';
import { aggregateLoss, clipFractions, k3, ppoBatchLoss, ppoTokenLoss } from './ppo';

const L15 = Math.log(1.5);
const L05 = Math.log(0.5);

describe('ppoTokenLoss (eps 0.2 / 0.28)', () => {
  // rho = exp(logp - oldLogp); L = -min(rho A, clip(rho, 0.8, 1.28) A)
  const cases: [string, number, number, number][] = [
    ['on-policy, positive A', 0, 2, -2],
    ['on-policy, negative A', 0, -1, 1],
    ['rho 1.5, A > 0: clipped at 1.28', L15, 1, -1.28],
    ['rho 1.5, A < 0: unclipped', L15, -1, 1.5],
    ['rho 0.5, A > 0: unclipped', L05, 1, -0.5],
    ['rho 0.5, A < 0: clipped at 0.8', L05, -1, 0.8],
    ['rho 1.2 inside the range', Math.log(1.2), 2, -2.4],
  ];
  it.each(cases)('%s', (_name, logp, adv, expected) => {
    const [loss] = ppoTokenLoss([logp], [0], [adv], 0.2, 0.28);
    expect(loss).toBeCloseTo(expected, 12);
  });

  it('zero advantage gives +0', () => {
    expect(Object.is(ppoTokenLoss([L15], [0], [0], 0.2, 0.28)[0], 0)).toBe(true);
  });

  it('uses oldLogp, not 0, as the ratio base', () => {
    expect(ppoTokenLoss([-1 + L15], [-1], [1], 0.2, 0.28)[0]).toBeCloseTo(-1.28, 12);
  });

  it('refuses mismatched arrays and bad clip ranges', () => {
    expect(() => ppoTokenLoss([0, 0], [0], [1, 1], 0.2, 0.28)).toThrow(LengthMismatchError);
    expect(() => ppoTokenLoss([0], [0], [1, 1], 0.2, 0.28)).toThrow(LengthMismatchError);
    expect(() => ppoTokenLoss([0], [0], [1], 1, 0.28)).toThrow(InvalidArgumentError);
    expect(() => ppoTokenLoss([0], [0], [1], 0.2, -0.1)).toThrow(InvalidArgumentError);
  });
});

describe('k3', () => {
  const cases: [string, number, number, number][] = [
    ['equal policies', -2, -2, 0],
    ['ref - logp = 1', 0, -1, Math.E - 2],
    ['ref - logp = -1', -1, 0, 1 / Math.E],
  ];
  it.each(cases)('%s', (_name, ref, logp, expected) => {
    expect(k3([ref], [logp])[0]).toBeCloseTo(expected, 12);
  });
  it('is never negative', () => {
    for (const d of [-5, -0.1, 0.1, 5]) expect(k3([d], [0])[0]).toBeGreaterThanOrEqual(0);
  });
  it('is clamped to 10, as the reference clamps low_var_kl', () => {
    // ref - logp = 3 gives e^3 - 4 = 16.1 unclamped.
    expect(k3([3], [0])[0]).toBe(10);
    expect(k3([2], [0])[0]).toBeCloseTo(Math.exp(2) - 3, 12);
  });
  it('is unclamped as "k3", as slime computes --kl-loss-type k3 (the tool-call script)', () => {
    expect(k3([3], [0], 'k3')[0]).toBeCloseTo(Math.exp(3) - 4, 12);
    expect(k3([3], [0], 'low_var_kl')[0]).toBe(10);
    const far = { logp: [0], oldLogp: [0], advantages: [0], refLogp: [3] };
    const settings = { epsLow: 0.2, epsHigh: 0.28, klCoef: 1, aggregation: 'sample-mean' as const };
    expect(ppoBatchLoss([far], { ...settings, klType: 'k3' }).kl).toBeCloseTo(Math.exp(3) - 4, 12);
    expect(ppoBatchLoss([far], settings).kl).toBe(10);
  });
});

describe('aggregateLoss', () => {
  const perToken = [[1, 2, 3], [10]];
  const cases: [string, 'sample-mean' | 'token-mean', number[][] | undefined, number][] = [
    ['sample-mean: mean of per-sample means', 'sample-mean', undefined, (2 + 10) / 2],
    ['token-mean: one mean over tokens', 'token-mean', undefined, 16 / 4],
    ['sample-mean with masks (masked sample still counts)', 'sample-mean', [[1, 1, 0], [0]], (1.5 + 0) / 2],
    ['token-mean with masks', 'token-mean', [[1, 1, 0], [0]], 3 / 2],
  ];
  it.each(cases)('%s', (_name, mode, masks, expected) => {
    expect(aggregateLoss(perToken, mode, masks)).toBeCloseTo(expected, 12);
  });
  it('is 0 for an empty batch or no unmasked tokens', () => {
    expect(aggregateLoss([], 'sample-mean')).toBe(0);
    expect(aggregateLoss([[1]], 'token-mean', [[0]])).toBe(0);
  });
  it('refuses masks of the wrong shape', () => {
    expect(() => aggregateLoss(perToken, 'token-mean', [[1, 1, 1]])).toThrow(LengthMismatchError);
    expect(() => aggregateLoss(perToken, 'token-mean', [[1, 1], [1]])).toThrow(LengthMismatchError);
  });
});

describe('clipFractions', () => {
  it('counts the tokens where the clipped branch wins', () => {
    const stats = clipFractions([L15, L15, L05, L05, 0], [0, 0, 0, 0, 0], [1, -1, 1, -1, 1], 0.2, 0.28);
    expect(stats).toEqual({ clippedLow: 1, clippedHigh: 1, tokens: 5, clipFracLow: 0.2, clipFracHigh: 0.2 });
  });
  it('is zero for no tokens', () => {
    expect(clipFractions([], [], [], 0.2, 0.28)).toEqual({ clippedLow: 0, clippedHigh: 0, tokens: 0, clipFracLow: 0, clipFracHigh: 0 });
  });
});

describe('ppoBatchLoss', () => {
  const s1 = { logp: [L15, 0], oldLogp: [0, 0], advantages: [1, 2], refLogp: [L15 + 1, 0] };
  const s2 = { logp: [L05], oldLogp: [0], advantages: [-1], refLogp: [L05] };
  // token losses: s1 [-1.28, -2] (mean -1.64), s2 [0.8]; k3: s1 [e - 2, 0], s2 [0]
  const k3s1 = (Math.E - 2) / 2;

  it('sample-mean with KL', () => {
    const got = ppoBatchLoss([s1, s2], { epsLow: 0.2, epsHigh: 0.28, klCoef: 0.1, aggregation: 'sample-mean' });
    expect(got.policyLoss).toBeCloseTo((-1.64 + 0.8) / 2, 12);
    expect(got.kl).toBeCloseTo(k3s1 / 2, 12);
    expect(got.loss).toBeCloseTo(-0.42 + 0.1 * (k3s1 / 2), 12);
    expect(got.clipFracHigh).toBeCloseTo(1 / 3, 12);
    expect(got.clipFracLow).toBeCloseTo(1 / 3, 12);
    expect(got.meanAbsAdv).toBeCloseTo(4 / 3, 12);
    expect(got.logpGap).toBeCloseTo((L15 - L05) / 3, 12);
    expect(got.tokens).toBe(3);
  });

  it('token-mean without KL', () => {
    const got = ppoBatchLoss([s1, s2], { epsLow: 0.2, epsHigh: 0.28, klCoef: 0, aggregation: 'token-mean' });
    expect(got.policyLoss).toBeCloseTo((-1.28 - 2 + 0.8) / 3, 12);
    expect(got.kl).toBe(0);
    expect(got.loss).toBeCloseTo(got.policyLoss, 12);
  });

  it('a masked sample counts in the sample mean but not in the statistics', () => {
    const got = ppoBatchLoss([s1, { ...s2, trainable: false }], {
      epsLow: 0.2,
      epsHigh: 0.28,
      klCoef: 0,
      aggregation: 'sample-mean',
    });
    expect(got.policyLoss).toBeCloseTo(-1.64 / 2, 12);
    expect(got.tokens).toBe(2);
    expect(got.clipFracHigh).toBeCloseTo(0.5, 12);
    expect(got.clipFracLow).toBe(0);
  });

  it('a masked sample needs no reference log-probs and adds no KL', () => {
    const { refLogp: _unused, ...noRef } = s2;
    void _unused;
    const settings = { epsLow: 0.2, epsHigh: 0.28, klCoef: 0.1, aggregation: 'token-mean' } as const;
    const got = ppoBatchLoss([s1, { ...noRef, trainable: false }], settings);
    expect(got).toEqual(ppoBatchLoss([s1], settings));
  });

  it('needs reference log-probs when the KL term is on', () => {
    const { refLogp: _unused, ...noRef } = s1;
    void _unused;
    expect(() => ppoBatchLoss([noRef], { epsLow: 0.2, epsHigh: 0.28, klCoef: 0.1, aggregation: 'sample-mean' })).toThrow(InvalidArgumentError);
  });
});
