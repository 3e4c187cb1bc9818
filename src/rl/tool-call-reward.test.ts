import { describe, expect, it } from 'vitest';
import { outcomeReward } from './tool-call-reward';

describe('outcomeReward', () => {
  it("shapes a wrong answer by its rounds of tool calls as the reference's min(-0.6, -1 + (n - 2) / 2 * 0.1)", () => {
    // By hand: n = 0: -1 - 0.1 = -1.1; n = 1: -1.05; n = 2: -1; n = 4: -0.9; n = 8: -0.7; n = 10: -0.6; n = 14: min(-0.6, -0.4).
    const byHand: [number, number][] = [
      [0, -1.1],
      [1, -1.05],
      [2, -1],
      [4, -0.9],
      [8, -0.7],
      [10, -0.6],
      [14, -0.6],
    ];
    for (const [n, o] of byHand) expect(outcomeReward(-1, n, 'tool-calls'), `n = ${n}`).toBeCloseTo(o, 12);
  });

  it('leaves a right answer at +1, and every wrong one at -1 under the flat rule', () => {
    for (const n of [0, 3, 12]) {
      expect(outcomeReward(1, n, 'tool-calls')).toBe(1);
      expect(outcomeReward(1, n, 'flat')).toBe(1);
      expect(outcomeReward(-1, n, 'flat')).toBe(-1);
    }
  });
});
