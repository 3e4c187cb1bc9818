/** OPD on the storyteller learns the child's wishes on held-out openings and hint wordings. */
import { describe, expect, it } from 'vitest';
import { CLAIM_SEEDS, mean, OPD_GAIN, storyRun } from '../../test/support/runtime/story-run';

describe('storyteller on the demo model, OPD, rules user/judge/evaluator', () => {
  it('gains at least OPD_GAIN over its own step-0 score on every seed, from a base of at most 0.3', async () => {
    const runs: [number, number][] = [];
    for (const seed of CLAIM_SEEDS) runs.push(await storyRun('opd', seed));
    expect(mean(runs.map(([before]) => before))).toBeLessThanOrEqual(0.3);
    for (const [before, after] of runs) expect(after - before).toBeGreaterThanOrEqual(OPD_GAIN);
  }, 900_000);
});
