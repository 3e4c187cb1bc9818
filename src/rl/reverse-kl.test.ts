import { describe, expect, it } from 'vitest';
import { expectLogitGrad, expectMemberGrad, logSoftmax, numericGrad } from '../../test/support/rl/kl-sets';
import { LengthMismatchError } from './errors';
import { distillKlTokenLoss } from './distill-kl';
import { reverseKlFull, reverseKlSet } from './reverse-kl';

describe('reverse KL over the whole vocabulary', () => {
  const logits = [1.2, -0.3, 0.5, 2.0, -1.7, 0.0];
  const teacher = logSoftmax([0.2, 1.1, -0.4, 2.5, 0.3, -2.0]);

  it('is KL(p || q) and zero where the teacher agrees', () => {
    const p = logSoftmax(logits).map(Math.exp);
    const want = p.reduce((s, pj, j) => s + pj * (Math.log(pj) - teacher[j]), 0);
    expect(reverseKlFull(logits, teacher).kl).toBeCloseTo(want, 12);
    const same = reverseKlFull(logits, logSoftmax(logits));
    expect(same.kl).toBeCloseTo(0, 12);
    same.grad.forEach((g) => expect(g).toBeCloseTo(0, 12));
  });

  it('has the gradient p_j (log p_j - log q_j - KL) of central differences in the logits', () => {
    const { grad } = reverseKlFull(logits, teacher);
    const numeric = numericGrad((z) => reverseKlFull(z, teacher).kl, logits);
    grad.forEach((g, j) => expect(g).toBeCloseTo(numeric[j], 7));
  });

  it('refuses a teacher row of another length', () => {
    expect(() => reverseKlFull(logits, teacher.slice(1))).toThrow(LengthMismatchError);
  });
});

describe('reverse KL over a set', () => {
  // Global log-probs of a 3-member set (mass 0.7 under the student, 0.8 under the teacher).
  const cur = [Math.log(0.4), Math.log(0.2), Math.log(0.1)];
  const teacher = [Math.log(0.1), Math.log(0.5), Math.log(0.2)];

  it('renormalised: the KL of the two distributions restricted to the set', () => {
    const p = [4 / 7, 2 / 7, 1 / 7];
    const q = [1 / 8, 5 / 8, 2 / 8];
    const want = p.reduce((s, pv, v) => s + pv * Math.log(pv / q[v]), 0);
    expect(reverseKlSet(cur, teacher, false).kl).toBeCloseTo(want, 12);
  });

  it('with a tail bin: the set bins as they are, plus the rest of the vocabulary in one bin (the reference)', () => {
    const want = 0.4 * Math.log(0.4 / 0.1) + 0.2 * Math.log(0.2 / 0.5) + 0.1 * Math.log(0.1 / 0.2) + 0.3 * Math.log(0.3 / 0.2);
    expect(reverseKlSet(cur, teacher, true).kl).toBeCloseTo(want, 12);
  });

  for (const tail of [false, true]) {
    it(`${tail ? 'with a tail bin' : 'renormalised'}: the gradient in the members' log-probs is central differences'`, () =>
      expectMemberGrad(reverseKlSet, cur, teacher, tail));

    it(`${tail ? 'with a tail bin' : 'renormalised'}: through the log-softmax, the gradient in the logits is central differences'`, () =>
      expectLogitGrad(reverseKlSet, tail));
  }

  it('with a tail bin, where the set holds all the mass the tail is held at the bound and is a constant', () => {
    // Mass 1.2 (rounding in a real model gives a little over 1): clearly past the bound, so the
    // differences below stay on one side of it.
    const all = [Math.log(0.8), Math.log(0.4)];
    expectMemberGrad(reverseKlSet, all, teacher.slice(0, 2), true, 6);
    expect(Number.isFinite(reverseKlSet(all, [0, -50], true).kl)).toBe(true);
  });

  it('renormalised over the whole vocabulary, it is the full KL', () => {
    const z = [1.2, -0.3, 0.5, 2.0];
    const q = logSoftmax([0.2, 1.1, -0.4, 2.5]);
    const full = reverseKlFull(z, q);
    const set = reverseKlSet(logSoftmax(z), q, false);
    expect(set.kl).toBeCloseTo(full.kl, 12);
    // Members' gradients sum to 0 here, so the log-softmax passes them through unchanged.
    set.grad.forEach((g, j) => expect(g).toBeCloseTo(full.grad[j], 12));
  });

  it('per position, and refuses sets that do not line up', () => {
    expect(distillKlTokenLoss('reverse-kl', [cur, cur.slice(0, 1)], [teacher, teacher.slice(0, 1)])).toEqual([
      expect.closeTo(reverseKlSet(cur, teacher, false).kl, 12),
      0,
    ]);
    expect(() => distillKlTokenLoss('reverse-kl', [cur], [])).toThrow(LengthMismatchError);
    expect(() => reverseKlSet(cur, teacher.slice(1), true)).toThrow(LengthMismatchError);
  });
});
