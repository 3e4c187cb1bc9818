/** Combined on the storyteller learns for a child nothing was tuned on. */
import { describe, expect, it } from 'vitest';
import { storyRun } from '../../test/support/runtime/story-run';

/**
 * A child whose pet's name the demo model never saw in fine-tuning: one of the README's wish
 * combinations, where Combined measures 0.063 -> 0.208 on seed 1 (+0.146) on the score that reads
 * each story for the wishes. The bound sits below that. Of the six combinations only this one and
 * bunny / Hazel have a name held out of fine-tuning; docs/reproduction.md reports all six.
 */
const OTHER_CHILD = { subject: 'duck', name: 'Noodle', favourite: 'boat' };
const OTHER_CHILD_GAIN = 0.1;

describe('storyteller on the demo model, Combined, a child other than the default', () => {
  it('gains at least OTHER_CHILD_GAIN from a base of at most 0.3', async () => {
    const [before, after] = await storyRun('combined', 1, OTHER_CHILD);
    expect(before).toBeLessThanOrEqual(0.3);
    expect(after - before).toBeGreaterThanOrEqual(OTHER_CHILD_GAIN);
  }, 600_000);
});
