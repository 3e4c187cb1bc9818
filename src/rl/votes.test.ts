import { describe, it, expect } from 'vitest';
import { majorityVote } from './votes';

describe('majorityVote', () => {
  const cases: [string, (number | null)[], number][] = [
    ['clear majority +1', [1, 1, -1], 1],
    ['clear majority -1', [-1, -1, 1], -1],
    ['majority 0', [0, 0, 1], 0],
    ['three-way tie', [1, -1, 0], 0],
    ['two-way tie', [1, -1], 0],
    ['even tie of pairs', [1, 1, -1, -1], 0],
    ['all failed', [null, null, null], 0],
    ['no votes', [], 0],
    ['failed votes ignored', [1, null, null], 1],
    ['failed votes ignored in a contest', [-1, null, 0, -1], -1],
    ['single vote', [-1], -1],
    ['non-finite counts as failed', [Number.NaN, 1], 1],
  ];
  it.each(cases)('%s', (_name, scores, expected) => {
    expect(majorityVote(scores)).toBe(expected);
  });
});
