/** The loss gradient the backward pass starts from, against central differences of the CPU reference loss. */
import { describe, expect, it } from 'vitest';
import { ppoBatchLoss, type PpoSampleInput, type PpoSettings } from '../rl/ppo';
import { ppoLossGrad } from './loss';

function numericGrad(samples: PpoSampleInput[], s: PpoSettings, h = 1e-6): number[][] {
  return samples.map((x, i) =>
    x.logp.map((_, t) => {
      const at = (d: number) =>
        ppoBatchLoss(
          samples.map((y, j) => (j === i ? { ...y, logp: y.logp.map((v, k) => (k === t ? v + d : v)) } : y)),
          s,
        ).loss;
      return (at(h) - at(-h)) / (2 * h);
    }),
  );
}

describe('ppoLossGrad', () => {
  // rho inside the clip band everywhere; ref - logp = 3 on the last token, past the k3 clamp.
  const a: PpoSampleInput = { logp: [-1, -2, -0.5], oldLogp: [-1.05, -1.95, -0.5], advantages: [1, -0.5, 2], refLogp: [-1.2, -1.5, 2.5] };
  const b: PpoSampleInput = { logp: [-0.3, -0.7], oldLogp: [-0.3, -0.72], advantages: [-1, 0.25], refLogp: [-0.1, -0.9] };

  for (const aggregation of ['sample-mean', 'token-mean'] as const) {
    it(`matches central differences with KL, its clamp and a masked sample (${aggregation})`, () => {
      const s: PpoSettings = { epsLow: 0.2, epsHigh: 0.28, klCoef: 0.5, aggregation };
      const batch = [a, b, { ...b, trainable: false }];
      const analytic = ppoLossGrad(batch, s, { samples: 3, tokens: 5 });
      const numeric = numericGrad(batch, s);
      analytic.forEach((g, i) => g.forEach((x, t) => expect(x).toBeCloseTo(numeric[i][t], 5)));
      // The clamped token feels only the policy term; the masked sample feels nothing.
      expect(analytic[2].every((x) => x === 0)).toBe(true);
    });
  }

  it('matches central differences with the unclamped k3 estimator, whose gradient reaches every token', () => {
    const s: PpoSettings = { epsLow: 0.2, epsHigh: 0.28, klCoef: 0.5, klType: 'k3', aggregation: 'sample-mean' };
    const analytic = ppoLossGrad([a, b], s);
    const numeric = numericGrad([a, b], s);
    analytic.forEach((g, i) => g.forEach((x, t) => expect(x).toBeCloseTo(numeric[i][t], 4)));
    // Past low_var_kl's bound (ref - logp = 3) the KL term still pulls the token.
    const clamped = ppoLossGrad([a, b], { ...s, klType: 'low_var_kl' });
    expect(Math.abs(analytic[0][2] - clamped[0][2])).toBeGreaterThan(1);
  });
});
