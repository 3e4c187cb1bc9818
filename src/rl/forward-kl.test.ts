import { describe, expect, it } from 'vitest';
import { expectLogitGrad, expectMemberGrad } from '../../test/support/rl/kl-sets';
import { distillKlSet, distillKlTokenLoss } from './distill-kl';
import { InvalidArgumentError, LengthMismatchError } from './errors';
import { forwardKlSet } from './forward-kl';
import { reverseKlSet } from './reverse-kl';

describe('forward KL over a set', () => {
  // Global log-probs of a 3-member set (mass 0.7 under the student, 0.8 under the teacher).
  const cur = [Math.log(0.4), Math.log(0.2), Math.log(0.1)];
  const teacher = [Math.log(0.1), Math.log(0.5), Math.log(0.2)];

  it('renormalised: KL(q || p) of the two distributions restricted to the set', () => {
    const p = [4 / 7, 2 / 7, 1 / 7];
    const q = [1 / 8, 5 / 8, 2 / 8];
    const want = q.reduce((s, qv, v) => s + qv * Math.log(qv / p[v]), 0);
    expect(forwardKlSet(cur, teacher, false).kl).toBeCloseTo(want, 12);
  });

  it('with a tail bin: the set bins as they are, plus the rest of the vocabulary in one bin', () => {
    const want = 0.1 * Math.log(0.1 / 0.4) + 0.5 * Math.log(0.5 / 0.2) + 0.2 * Math.log(0.2 / 0.1) + 0.2 * Math.log(0.2 / 0.3);
    expect(forwardKlSet(cur, teacher, true).kl).toBeCloseTo(want, 12);
  });

  for (const tail of [false, true]) {
    const form = tail ? 'with a tail bin' : 'renormalised';
    it(`${form}: the gradient in the members' log-probs is central differences'`, () => expectMemberGrad(forwardKlSet, cur, teacher, tail));

    it(`${form}: through the log-softmax, the gradient in the logits is central differences'`, () => expectLogitGrad(forwardKlSet, tail));

    it(`${form}: zero, with no gradient, where the teacher agrees`, () => {
      const same = forwardKlSet(cur, cur, tail);
      expect(same.kl).toBeCloseTo(0, 12);
      same.grad.forEach((g) => expect(g).toBeCloseTo(0, 12));
    });
  }

  it("pulls up a member the student almost never writes by the teacher's probability of it; the reverse KL barely moves it", () => {
    // The student gives the teacher's favourite 1e-6 (a name it never samples).
    const student = [Math.log(1e-6), Math.log(0.6), Math.log(0.3)];
    const liked = [Math.log(0.5), Math.log(0.3), Math.log(0.1)];
    const forward = forwardKlSet(student, liked, true).grad[0];
    const reverse = reverseKlSet(student, liked, true).grad[0];
    // A step down the gradient raises log p of member 0: by about q_0 = 0.5 per unit step forward,
    // by ~1e-5 reverse.
    expect(-forward).toBeCloseTo(0.5, 5);
    expect(-reverse).toBeGreaterThan(0);
    expect(-reverse).toBeLessThan(1e-4);
  });

  it('with a tail bin, where the set holds all the mass the tail is held at the bound and is a constant', () => {
    const all = [Math.log(0.8), Math.log(0.4)];
    expectMemberGrad(forwardKlSet, all, teacher.slice(0, 2), true, 6);
    expect(Number.isFinite(forwardKlSet(all, [0, -50], true).kl)).toBe(true);
  });

  it('is what the distillation terms "forward-kl" and "forward-kl-tail" train, per position; sets must line up', () => {
    expect(distillKlSet('forward-kl-tail', cur, teacher)).toEqual(forwardKlSet(cur, teacher, true));
    expect(distillKlSet('forward-kl', cur, teacher)).toEqual(forwardKlSet(cur, teacher, false));
    expect(distillKlSet('reverse-kl-tail', cur, teacher)).toEqual(reverseKlSet(cur, teacher, true));
    expect(distillKlTokenLoss('forward-kl', [cur, cur.slice(0, 1)], [teacher, teacher.slice(0, 1)])).toEqual([
      expect.closeTo(forwardKlSet(cur, teacher, false).kl, 12),
      0,
    ]);
    expect(() => forwardKlSet(cur, teacher.slice(1), true)).toThrow(LengthMismatchError);
    expect(() => forwardKlSet([], [], false)).toThrow(InvalidArgumentError);
  });
});
