/** The loss gradient the backward pass starts from, against central differences of the CPU reference loss. */
import { describe, expect, it } from 'vitest';
import { ppoBatchLoss, type PpoSampleInput, type PpoSettings } from '../rl/ppo';
import { DISTILL_TERMS } from '../rl/topk-distill';
import { ppoLossGrad, reverseKlLossGrad, topKLossGrad } from './loss';

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

  for (const aggregation of ['sample-mean', 'token-mean'] as const) {
    it(`gives a masked (observation) token zero gradient and matches central differences elsewhere (${aggregation})`, () => {
      const s: PpoSettings = { epsLow: 0.2, epsHigh: 0.28, klCoef: 0.5, klType: 'k3', aggregation };
      // A trajectory sample: two policy tokens, a tool output of two tokens, one policy token.
      const trajectory: PpoSampleInput = {
        logp: [-1, -2, -0.1, -4, -0.5],
        oldLogp: [-1.05, -1.95, -3, -0.2, -0.5],
        advantages: [1, 1, 9, -9, -0.5],
        refLogp: [-1.2, -1.5, 1, -8, -0.4],
        lossMask: [1, 1, 0, 0, 1],
      };
      const batch = [trajectory, b];
      const analytic = ppoLossGrad(batch, s, { samples: 2, tokens: 5 });
      const numeric = numericGrad(batch, s);
      analytic.forEach((g, i) => g.forEach((x, t) => expect(x).toBeCloseTo(numeric[i][t], 5)));
      expect([analytic[0][2], analytic[0][3]]).toEqual([0, 0]);
      // Sample-mean weighs each policy token 1 / (3 policy tokens x 2 samples). On the last, rho = 1:
      // -A = 0.5 from the surrogate, beta (1 - e^(ref - logp)) = 0.5 (1 - e^0.1) from k3.
      if (aggregation === 'sample-mean') expect(analytic[0][4]).toBeCloseTo((0.5 + 0.5 * (1 - Math.exp(0.1))) / 6, 6);
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

describe('topKLossGrad', () => {
  // Two positions with top-3 sets; rho off 1 on some members, and one member's rho past the band
  // in the direction of its advantage, where the clipped branch wins and the gradient is 0.
  const topk = {
    weight: 0.75,
    clip: 1,
    ids: [
      [4, 9, 2],
      [7, 1, 3],
    ],
    teacherLogp: [
      [-0.2, -1.5, -4],
      [-3, -0.4, -0.9],
    ],
    logp: [
      [-0.9, -1.4, -2.5],
      [-1.0, -0.2, -1.6],
    ],
    oldLogp: [
      [-1.0, -1.3, -2.4],
      [-1.05, -0.8, -1.7],
    ],
  };
  const sample: PpoSampleInput = { logp: [-1, -0.5], oldLogp: [-1.02, -0.5], advantages: [0.5, 0.5], topk };
  const other: PpoSampleInput = { logp: [-0.3, -0.7, -2], oldLogp: [-0.3, -0.72, -2], advantages: [-1, 0.25, 1] };

  for (const aggregation of ['sample-mean', 'token-mean'] as const) {
    it(`matches central differences of the CPU reference loss in every set member (${aggregation})`, () => {
      const s: PpoSettings = { epsLow: 0.2, epsHigh: 0.2, klCoef: 0, aggregation };
      const batch = [sample, other];
      const grads = topKLossGrad(batch, s)[0]!;
      expect(topKLossGrad(batch, s)[1]).toBeNull();
      const h = 1e-6;
      grads.forEach((row, t) =>
        row.forEach((g, v) => {
          const at = (d: number) =>
            ppoBatchLoss([{ ...sample, topk: { ...topk, logp: topk.logp.map((r, i) => r.map((x, j) => (i === t && j === v ? x + d : x))) } }, other], s).loss;
          expect(g).toBeCloseTo((at(h) - at(-h)) / (2 * h), 5);
        }),
      );
      // rho = e^0.6 on member [1][1] with a positive advantage: past 1 + 0.2, clipped, no gradient.
      expect(grads[1][1]).toBe(0);
      expect(grads[0].every((g) => g !== 0)).toBe(true);
      // The sampled tokens' gradient is the PPO term's alone.
      expect(Array.from(ppoLossGrad(batch, s)[0])).toEqual(Array.from(ppoLossGrad([{ ...sample, topk: undefined }, other], s)[0]));
    });
  }
});

describe('topKLossGrad with a KL over the sets, and reverseKlLossGrad', () => {
  const sets = {
    weight: 0.6,
    clip: 0,
    ids: [
      [4, 9, 2],
      [7, 1, 3],
    ],
    teacherLogp: [
      [-0.2, -1.5, -4],
      [-3, -0.4, -0.9],
    ],
    logp: [
      [-0.9, -1.4, -2.5],
      [-1.0, -0.7, -1.6],
    ],
    oldLogp: [[], []],
  };
  const other: PpoSampleInput = { logp: [-0.3, -0.7, -2], oldLogp: [-0.3, -0.72, -2], advantages: [-1, 0.25, 1] };

  for (const term of DISTILL_TERMS) {
    for (const aggregation of ['sample-mean', 'token-mean'] as const) {
      it(`${term}: matches central differences of the CPU reference loss in every set member (${aggregation})`, () => {
        const s: PpoSettings = { epsLow: 0.2, epsHigh: 0.28, klCoef: 0, aggregation };
        const topk = { ...sets, term };
        const sample: PpoSampleInput = { logp: [-1, -0.5], oldLogp: [-1, -0.5], advantages: [0, 0], topk };
        const grads = topKLossGrad([sample, other], s)[0]!;
        const h = 1e-6;
        grads.forEach((row, t) =>
          row.forEach((g, v) => {
            const at = (d: number) =>
              ppoBatchLoss([{ ...sample, topk: { ...topk, logp: topk.logp.map((r, i) => r.map((x, j) => (i === t && j === v ? x + d : x))) } }, other], s).loss;
            expect(g).toBeCloseTo((at(h) - at(-h)) / (2 * h), 6);
          }),
        );
        expect(grads.flatMap((r) => Array.from(r)).every((g) => g !== 0)).toBe(true);
      });
    }
  }

  it('the whole-vocabulary term: d loss / d KL_t is w_opd times the token weight, and a masked sample has none', () => {
    const s: PpoSettings = { epsLow: 0.2, epsHigh: 0.28, klCoef: 0, aggregation: 'sample-mean' };
    const sample: PpoSampleInput = { logp: [-1, -0.5], oldLogp: [-1, -0.5], advantages: [0, 0], reverseKl: { weight: 0.6, kl: [0.3, 1.1] } };
    const batch = [sample, other, { ...sample, trainable: false }];
    const [g, none, masked] = reverseKlLossGrad(batch, s);
    expect(none).toBeNull();
    expect(masked).toBeNull();
    const h = 1e-6;
    g!.forEach((x, t) => {
      const at = (d: number) =>
        ppoBatchLoss([{ ...sample, reverseKl: { weight: 0.6, kl: sample.reverseKl!.kl.map((k, i) => (i === t ? k + d : k)) } }, other, batch[2]], s).loss;
      expect(x).toBeCloseTo((at(h) - at(-h)) / (2 * h), 6);
    });
    expect(ppoBatchLoss(batch, s).loss - ppoBatchLoss([{ ...sample, reverseKl: undefined }, other, batch[2]], s).loss).toBeCloseTo(
      (0.6 * (0.3 + 1.1)) / 2 / 3,
      12,
    );
  });

  it('the top-k select surrogate has no gradient on a member whose log-ratio the +-20 clamp holds', () => {
    const s: PpoSettings = { epsLow: 0.2, epsHigh: 0.28, klCoef: 0, aggregation: 'sample-mean' };
    const topk = { weight: 1, clip: 0, ids: [[1, 2]], teacherLogp: [[-0.5, -1]], logp: [[-0.4, -26]], oldLogp: [[-0.5, -1]] };
    const g = topKLossGrad([{ logp: [-0.4], oldLogp: [-0.5], advantages: [0], topk }], s)[0]!;
    expect(g[0][1]).toBe(0);
    expect(g[0][0]).not.toBe(0);
  });
});
