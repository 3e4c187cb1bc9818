/**
 * The choice to split small jobs, driven by made-up costs: it must settle on the cheaper way,
 * try the other way seldom when that keeps losing, and follow a change of conditions.
 */
import { describe, expect, it } from 'vitest';
import { SplitChoice } from './split-choice';

/** Runs `jobs` small jobs of 1 unit each at the given costs; returns how many were split. */
function drive(choice: SplitChoice, jobs: number, cost: { alone: number; split: number }): number {
  let splits = 0;
  for (let i = 0; i < jobs; i++) {
    const split = choice.split();
    if (split) splits++;
    choice.record(split, split ? cost.split : cost.alone, 1);
  }
  return splits;
}

describe('SplitChoice', () => {
  it('splits nearly every small job while splitting is cheaper', () => {
    const choice = new SplitChoice();
    const splits = drive(choice, 10_000, { alone: 2, split: 1 });
    expect(splits / 10_000).toBeGreaterThan(0.85);
  });

  it('keeps small jobs alone while splitting costs more, trying it ever more seldom', () => {
    const choice = new SplitChoice();
    drive(choice, 1_000, { alone: 1, split: 5 });
    // Losing trials stop after two jobs and wait twice as long each time.
    const later = drive(choice, 100_000, { alone: 1, split: 5 });
    expect(later).toBeGreaterThan(0);
    expect(later / 100_000).toBeLessThan(0.002);
  });

  it('stops a losing trial after two jobs', () => {
    const choice = new SplitChoice();
    drive(choice, 200, { alone: 1, split: 1.5 });
    // Alone is the way now; the next trial of splitting, at 10x the cost, lasts two jobs.
    let run = 0;
    let longest = 0;
    for (let i = 0; i < 5_000; i++) {
      const split = choice.split();
      run = split ? run + 1 : 0;
      longest = Math.max(longest, run);
      choice.record(split, split ? 10 : 1, 1);
    }
    expect(longest).toBe(2);
  });

  it('goes back to splitting when the other process leaves the cores', () => {
    const choice = new SplitChoice();
    drive(choice, 5_000, { alone: 1, split: 5 });
    drive(choice, 40_000, { alone: 2, split: 1 });
    expect(drive(choice, 1_000, { alone: 2, split: 1 })).toBeGreaterThan(850);
  });

  it('keeps a way it measured over one it never has', () => {
    const choice = new SplitChoice();
    // The first trial splits: its cost is compared with nothing yet and becomes the way.
    expect(choice.split()).toBe(true);
  });
});
