import { describe, it, expect } from 'vitest';
import { binaryAdvantages, combinedAdvantages, opdAdvantages, standardizeByStep, stepwiseRewards, summarizeAdvantages, type StepSample } from './advantages';
import { InvalidArgumentError, LengthMismatchError } from './errors';

describe('opdAdvantages', () => {
  const cases: [string, number[], number[], number[]][] = [
    ['teacher minus student per token', [-0.125, -0.5, -2], [-0.25, -0.5, -1], [0.125, 0, -1]],
    ['empty response', [], [], []],
    ['hint makes a token far likelier', [-0.5], [-4.5], [4]],
  ];
  it.each(cases)('%s', (_name, teacher, student, expected) => {
    expect(opdAdvantages(teacher, student)).toEqual(expected);
  });

  it('refuses arrays of different length', () => {
    expect(() => opdAdvantages([-1, -2], [-1])).toThrow(LengthMismatchError);
  });

  it('refuses a non-finite log-prob, naming the token', () => {
    expect(() => opdAdvantages([-1, -Infinity], [-1, -1])).toThrow(InvalidArgumentError);
    expect(() => opdAdvantages([-1, -1], [Number.NaN, -1])).toThrow(/studentLogp\[0\]/);
  });
});

describe('binaryAdvantages', () => {
  const cases: [number, number, number[]][] = [
    [1, 3, [1, 1, 1]],
    [-1, 2, [-1, -1]],
    [0, 1, [0]],
    [1, 0, []],
  ];
  it.each(cases)('r=%d over %d tokens', (r, n, expected) => {
    expect(binaryAdvantages(r, n)).toEqual(expected);
  });
  it('refuses a bad token count', () => {
    expect(() => binaryAdvantages(1, -1)).toThrow(InvalidArgumentError);
    expect(() => binaryAdvantages(1, 1.5)).toThrow(InvalidArgumentError);
  });
});

describe('combinedAdvantages', () => {
  const cases: [string, number, number[], { binary: number; opd: number }, number[]][] = [
    ['both weights 1', 1, [0.5, 0, -1], { binary: 1, opd: 1 }, [1.5, 1, 0]],
    ['negative reward, other weights', -1, [0.5, 0, -1], { binary: 0.5, opd: 2 }, [0.5, -0.5, -2.5]],
    ['no hint: zeros give w*r', -1, [0, 0], { binary: 1, opd: 1 }, [-1, -1]],
    ['binary only', 1, [3, -3], { binary: 1, opd: 0 }, [1, 1]],
    ['OPD only', 1, [3, -3], { binary: 0, opd: 1 }, [3, -3]],
  ];
  it.each(cases)('%s', (_name, r, opd, w, expected) => {
    expect(combinedAdvantages(r, opd, w)).toEqual(expected);
  });
  it('yields 0, not -0', () => {
    expect(Object.is(combinedAdvantages(0, [-0], { binary: 1, opd: 1 })[0], 0)).toBe(true);
  });
});

describe('stepwiseRewards', () => {
  const cases: [string, number, (number | null)[][], number[]][] = [
    [
      'outcome plus mean vote per step',
      1,
      [
        [1, 1, -1],
        [-1, -1, -1],
        [0, 1],
      ],
      [1 + 1 / 3, 0, 1.5],
    ],
    [
      'failed votes leave the mean',
      0,
      [
        [1, null, null],
        [null, -1],
      ],
      [1, -1],
    ],
    ['a step without valid votes gets the outcome', 1, [[], [null]], [1, 1]],
    ['no steps', 1, [], []],
  ];
  it.each(cases)('%s', (_name, o, votes, expected) => {
    const got = stepwiseRewards(o, votes);
    expect(got).toHaveLength(expected.length);
    got.forEach((g, i) => expect(g).toBeCloseTo(expected[i], 12));
  });
});

describe('standardizeByStep', () => {
  it('z-scores within step groups, drops constant groups, keeps singletons raw', () => {
    const samples: StepSample[] = [
      { step: 0, reward: 1 },
      { step: 1, reward: 2 },
      { step: 3, reward: 0 },
      { step: 0, reward: -1 },
      { step: 2, reward: 5 },
      { step: 1, reward: 2 },
      { step: 3, reward: 1 },
      { step: 1, reward: 2 },
      { step: 3, reward: 2 },
    ];
    const got = standardizeByStep(samples);
    // step 0: mean 0, population std 1
    expect(got[0]).toBeCloseTo(1 / 1.000001, 12);
    expect(got[3]).toBeCloseTo(-1 / 1.000001, 12);
    // step 1: all equal, dropped
    expect([got[1], got[5], got[7]]).toEqual([null, null, null]);
    // step 2: alone, raw
    expect(got[4]).toBe(5);
    // step 3: mean 1, std sqrt(2/3) = 0.8164965809277260
    expect(got[2]).toBeCloseTo(-1 / 0.816497580927726, 12);
    expect(got[6]).toBe(0);
    expect(got[8]).toBeCloseTo(1 / 0.816497580927726, 12);
    expect(got[8]).toBeCloseTo(1.2247433713, 9);
  });

  it('handles an empty list', () => {
    expect(standardizeByStep([])).toEqual([]);
  });

  it('refuses a non-integer step', () => {
    expect(() => standardizeByStep([{ step: 0.5, reward: 1 }])).toThrow(InvalidArgumentError);
  });
});

describe('summarizeAdvantages', () => {
  const cases: [number[], ReturnType<typeof summarizeAdvantages>][] = [
    [[1, -2, 0, 3], { tokens: 4, mean: 0.5, min: -2, max: 3, meanAbs: 1.5, nonZero: 3 }],
    [[0, 0], { tokens: 2, mean: 0, min: 0, max: 0, meanAbs: 0, nonZero: 0 }],
    [[], { tokens: 0, mean: 0, min: 0, max: 0, meanAbs: 0, nonZero: 0 }],
  ];
  it.each(cases)('%j', (adv, expected) => {
    expect(summarizeAdvantages(adv)).toEqual(expected);
  });
});
