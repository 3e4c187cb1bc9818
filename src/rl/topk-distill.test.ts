import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LengthMismatchError } from './errors';
import { checkTopKTarget, memberRatio, setAdvantages, setWeights, topKDistillTokenLoss } from './topk-distill';

describe('top-k distillation term', () => {
  it('weighs each set member by the old policy renormalised over the set', () => {
    const w = setWeights([Math.log(0.5), Math.log(0.25)]);
    expect(w[0]).toBeCloseTo(2 / 3, 12);
    expect(w[1]).toBeCloseTo(1 / 3, 12);
    // Far below the rest of the vocabulary, the weights still sum to one.
    expect(setWeights([-800, -801]).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it('is minus the weighted, clipped teacher-minus-old sum at rho = 1, summed over the set', () => {
    const old = [[Math.log(0.5), Math.log(0.25)]];
    const teacher = [[Math.log(0.5) + 3, Math.log(0.25) - 0.5]];
    // clip 1: the first difference (3) is held at 1, the second (-0.5) is kept.
    expect(setAdvantages(old[0], teacher[0], 1)).toEqual([(2 / 3) * 1, (1 / 3) * -0.5].map((x) => expect.closeTo(x, 12)));
    const [loss] = topKDistillTokenLoss(old, old, teacher, 1, 0.2, 0.28);
    expect(loss).toBeCloseTo(-(2 / 3 - 0.5 / 3), 12);
    // No clip: the difference itself.
    expect(topKDistillTokenLoss(old, old, teacher, 0, 0.2, 0.28)[0]).toBeCloseTo(-((2 / 3) * 3 - 0.5 / 3), 12);
  });

  it('stops pushing a member up once its ratio leaves the band', () => {
    const old = [[Math.log(0.5), Math.log(0.25)]];
    const teacher = [[Math.log(0.5) + 1, Math.log(0.25)]];
    const moved = [[Math.log(0.5) + 0.5, Math.log(0.25)]];
    // rho = e^0.5 > 1.28 on the member the teacher favours: its loss is the clipped constant.
    expect(topKDistillTokenLoss(moved, old, teacher, 0, 0.2, 0.28)[0]).toBeCloseTo(-1.28 * (2 / 3), 12);
  });

  it("clamps a member's log-ratio to +-20 before exp, as the reference guards it", () => {
    const old = [[-30, Math.log(0.5)]];
    const teacher = [[-29, Math.log(0.5) + 1]];
    // Member 1 sits 25 nats below its old log-prob with a positive advantage, where the unclipped
    // branch wins: its loss is -rho * A with rho = e^-20, not e^-25. Member 0 (25 above, A ~ e^-29)
    // is held by PPO's clip anyway.
    const cur = [[-5, Math.log(0.5) - 25]];
    const [loss] = topKDistillTokenLoss(cur, old, teacher, 0, 0.2, 0.28);
    const a = setAdvantages(old[0], teacher[0], 0);
    expect(a[1]).toBeGreaterThan(0.99);
    expect(loss).toBeCloseTo(-1.28 * a[0] - Math.exp(-20) * a[1], 14);
    expect(Math.abs(loss - (-1.28 * a[0] - Math.exp(-25) * a[1]))).toBeGreaterThan(1e-9);
    expect(memberRatio(0, 25)).toEqual({ rho: Math.exp(-20), held: true });
    expect(memberRatio(1, 0.5)).toEqual({ rho: Math.exp(0.5), held: false });
  });

  it('refuses a target whose shape does not match the response', () => {
    const target = { weight: 1, clip: 1, ids: [[1, 2]], teacherLogp: [[-1, -2]] };
    expect(() => checkTopKTarget(target, 1, 's')).not.toThrow();
    expect(() => checkTopKTarget(target, 2, 's')).toThrow(LengthMismatchError);
    expect(() => checkTopKTarget({ ...target, teacherLogp: [[-1]] }, 1, 's')).toThrow(LengthMismatchError);
    expect(() => checkTopKTarget({ ...target, ids: [[]], teacherLogp: [[]] }, 1, 's')).toThrow(InvalidArgumentError);
  });
});
