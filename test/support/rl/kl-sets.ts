/** Checks shared by the KL terms over a set (src/rl/reverse-kl.ts, src/rl/forward-kl.ts). */
import { expect } from 'vitest';
import type { KlWithGrad } from '../../../src/rl/reverse-kl';

/** A KL over one position's set: the members' global log-probs, the teacher's, and whether a tail bin is kept. */
export type SetKl = (logp: readonly number[], teacherLogp: readonly number[], tail: boolean) => KlWithGrad;

/** Central differences of f at x, coordinate by coordinate. */
export function numericGrad(f: (x: number[]) => number, x: readonly number[], h = 1e-6): number[] {
  return x.map((_, i) => {
    const at = (d: number) => f(x.map((v, j) => (j === i ? v + d : v)));
    return (at(h) - at(-h)) / (2 * h);
  });
}

export function logSoftmax(z: readonly number[]): number[] {
  const m = Math.max(...z);
  const lse = m + Math.log(z.reduce((s, x) => s + Math.exp(x - m), 0));
  return z.map((x) => x - lse);
}

/** The gradient in the members' log-probs against central differences of the KL itself. */
export function expectMemberGrad(kl: SetKl, logp: readonly number[], teacherLogp: readonly number[], tail: boolean, digits = 7): void {
  const { grad } = kl(logp, teacherLogp, tail);
  const numeric = numericGrad((x) => kl(x, teacherLogp, tail).kl, logp);
  grad.forEach((g, v) => expect(g).toBeCloseTo(numeric[v], digits));
}

/**
 * What the engine computes: the members' log-probs gathered from a logits row, their gradient taken
 * back through the gather, d log p_v / d z_j = [v = j] - p_j, against central differences in the logits.
 */
export function expectLogitGrad(kl: SetKl, tail: boolean): void {
  const z = [0.3, -1.2, 1.5, 0.1, -0.4, 0.9, -2.2];
  const set = [2, 5, 0];
  const q = [Math.log(0.5), Math.log(0.2), Math.log(0.15)];
  const lp = logSoftmax(z);
  const { grad } = kl(
    set.map((j) => lp[j]),
    q,
    tail,
  );
  const sum = grad.reduce((a, b) => a + b, 0);
  const dz = z.map((_, j) => (set.includes(j) ? grad[set.indexOf(j)] : 0) - Math.exp(lp[j]) * sum);
  const numeric = numericGrad(
    (x) =>
      kl(
        set.map((j) => logSoftmax(x)[j]),
        q,
        tail,
      ).kl,
    z,
  );
  dz.forEach((g, j) => expect(g).toBeCloseTo(numeric[j], 7));
}
