/**
 * Binary RL on the same storyteller runs as learning-opd.test.ts: one reward for a whole story
 * moves it far less than OPD's per-token signal.
 */
import { describe, expect, it } from 'vitest';
import { BINARY_MARGIN, CLAIM_SEEDS, mean, OPD_GAIN, storyRun } from '../../test/support/runtime/story-run';

describe('storyteller on the demo model, Binary RL, rules user/judge/evaluator', () => {
  it('gains at least BINARY_MARGIN less than OPD_GAIN on average over the same seeds', async () => {
    const runs: [number, number][] = [];
    for (const seed of CLAIM_SEEDS) runs.push(await storyRun('binary', seed));
    expect(mean(runs.map(([before, after]) => after - before))).toBeLessThanOrEqual(OPD_GAIN - BINARY_MARGIN);
  }, 900_000);
});
