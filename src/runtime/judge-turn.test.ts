import { describe, expect, it } from 'vitest';
import { MAX_VOTES } from '../rl/presets';
import { voteSeed } from './judge-turn';

describe('voteSeed', () => {
  it('gives every vote of every judge on every turn its own seed', () => {
    const seen = new Set<number>();
    for (let turn = 1; turn <= 20; turn++)
      for (const judge of ['binary', 'hint'] as const)
        for (let vote = 0; vote < MAX_VOTES; vote++) seen.add(voteSeed(7, turn, judge, vote));
    expect(seen.size).toBe(20 * 2 * MAX_VOTES);
  });

  it('keeps the seeds recorded runs were sampled with', () => {
    expect(voteSeed(1, 3, 'binary', 2)).toBe(1 + 3 * 1000 + 2);
    expect(voteSeed(1, 3, 'hint', 0)).toBe(1 + 3 * 1000 + 100);
  });
});
