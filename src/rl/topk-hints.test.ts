import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, LengthMismatchError } from './errors';
import type { HintVote } from './hints';
import { chooseHintByOverlap, clipDifference, clippedOpdAdvantages, hintCandidates, overlapPerToken, overlapSize, winningTeacherLogp } from './topk-hints';

const vote = (score: 1 | 0 | -1 | null, hint: string | null): HintVote => ({ score, hint });

describe('hintCandidates', () => {
  it('keeps +1 votes with a hint longer than minChars, deduplicated, shortest first, capped', () => {
    const votes = [
      vote(1, '  Write the steps as plain sentences.  '), // 36
      vote(-1, 'Rejected votes never count, however long.'),
      vote(1, 'Use units.'), // 10: not longer than 10
      vote(1, 'Show each step.'), // 15
      vote(1, 'Write the steps as plain sentences.'), // repeat of the first once stripped
      vote(1, null),
      vote(1, 'Give the final number.'), // 22
    ];
    expect(hintCandidates(votes, 10, 3)).toEqual(['Show each step.', 'Give the final number.', 'Write the steps as plain sentences.']);
    expect(hintCandidates(votes, 10, 2)).toEqual(['Show each step.', 'Give the final number.']);
  });

  it('keeps vote order among equally long hints, and counts code points as the reference does', () => {
    expect(hintCandidates([vote(1, 'bbbbbbbbbbbb'), vote(1, 'aaaaaaaaaaaa')], 10, 3)).toEqual(['bbbbbbbbbbbb', 'aaaaaaaaaaaa']);
    // Ten emoji are ten characters in Python: not longer than 10.
    expect(hintCandidates([vote(1, '😀'.repeat(10))], 10, 3)).toEqual([]);
    expect(hintCandidates([vote(1, '😀'.repeat(11))], 10, 3)).toEqual(['😀'.repeat(11)]);
  });

  it('refuses to keep no candidate', () => {
    expect(() => hintCandidates([], 10, 0)).toThrow(InvalidArgumentError);
  });
});

describe('overlap', () => {
  it('counts shared ids of two top-k sets', () => {
    expect(overlapSize([1, 2, 3, 4], [4, 3, 9, 8])).toBe(2);
    expect(overlapSize([1, 2], [3, 4])).toBe(0);
    expect(overlapSize([7, 1, 5, 2], [2, 5, 1, 7])).toBe(4);
  });

  it('per token', () => {
    expect(
      overlapPerToken(
        [
          [1, 2],
          [3, 4],
          [5, 6],
        ],
        [
          [2, 9],
          [3, 4],
          [7, 8],
        ],
      ),
    ).toEqual([1, 2, 0]);
    expect(() => overlapPerToken([[1]], [])).toThrow(LengthMismatchError);
  });
});

describe('chooseHintByOverlap', () => {
  // Student top-2 sets at three tokens; three candidates' teachers.
  const student = [
    [10, 11],
    [20, 21],
    [30, 31],
  ];
  const cands = [
    [
      [10, 99],
      [98, 97],
      [30, 31],
    ], // O = 1, 0, 2 -> 3
    [
      [10, 11],
      [20, 21],
      [96, 95],
    ], // O = 2, 2, 0 -> 4
    [
      [94, 93],
      [20, 92],
      [30, 31],
    ], // O = 0, 1, 2 -> 3
  ];

  it('sequence: the largest summed overlap wins every token', () => {
    expect(chooseHintByOverlap(student, cands, 'sequence')).toEqual({ winner: 1, overlap: [3, 4, 3], perToken: [1, 1, 1], tokenWins: [0, 3, 0] });
  });

  it('token: each token takes its own best; ties go to the shorter (earlier) candidate', () => {
    // t0: 1,2,0 -> 1; t1: 0,2,1 -> 1; t2: 2,0,2 -> 0 (tie of 0 and 2).
    expect(chooseHintByOverlap(student, cands, 'token')).toEqual({ winner: 1, overlap: [3, 4, 3], perToken: [1, 1, 0], tokenWins: [1, 2, 0] });
  });

  it('a tie in the sum keeps the first candidate, the shortest hint', () => {
    const tied = [cands[0], cands[2]];
    expect(chooseHintByOverlap(student, tied, 'sequence').winner).toBe(0);
  });

  it('one candidate always wins; none is an error', () => {
    expect(chooseHintByOverlap(student, [cands[2]], 'sequence')).toMatchObject({ winner: 0, overlap: [3] });
    expect(() => chooseHintByOverlap(student, [], 'sequence')).toThrow(InvalidArgumentError);
  });
});

describe('winningTeacherLogp', () => {
  it('takes each token from its winning candidate', () => {
    const lp = [
      [-1, -2, -3],
      [-4, -5, -6],
    ];
    expect(winningTeacherLogp(lp, [1, 0, 1])).toEqual([-4, -2, -6]);
    expect(() => winningTeacherLogp(lp, [2, 0, 0])).toThrow(InvalidArgumentError);
  });
});

describe('clippedOpdAdvantages', () => {
  it('clips teacher minus student to [-clip, clip]', () => {
    // differences: 0.5, -2.5, 3, -1 -> clip 1: 0.5, -1, 1, -1
    expect(clippedOpdAdvantages([-1, -3, -0.5, -2], [-1.5, -0.5, -3.5, -1], 1)).toEqual([0.5, -1, 1, -1]);
  });

  it('clip 0 is no clip', () => {
    expect(clippedOpdAdvantages([-1, -3], [-1.5, -0.5], 0)).toEqual([0.5, -2.5]);
    expect(clipDifference(-7, 0)).toBe(-7);
  });

  it('refuses a negative clip, non-finite log-probs and a length mismatch', () => {
    expect(() => clippedOpdAdvantages([-1], [-1], -1)).toThrow(InvalidArgumentError);
    expect(() => clippedOpdAdvantages([-Infinity], [-1], 1)).toThrow(InvalidArgumentError);
    expect(() => clippedOpdAdvantages([-1, -2], [-1], 1)).toThrow(LengthMismatchError);
  });
});
