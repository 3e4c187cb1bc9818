import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../rl/records';
import { comparisonSetups } from '../lab/comparison';
import { defaultSetup, toAnyRunConfig, toRunConfig, withScenario, withTrack } from '../lab/setup';
import { armLines, armOfConfig, spreadText, wishesMet, type ArmRun } from './derive-arms';
import { WISH_RATES } from './derive-evaluations';

/** A personalization evaluation after `step` train steps, with a storyteller's wish rates when given. */
function evaluation(step: number, score: number | null, rates: Record<string, number> = {}): RunRecord {
  return {
    kind: 'evaluation',
    version: step,
    ts: 1000 + step,
    step,
    name: 'personalization',
    scores: { score, ...rates },
    perProblem: [{ id: 'p0', score }],
  } as RunRecord;
}

/** Every wish and the story rate at `rate`, but the name at `name`. */
const rates = (rate: number, name: number) => ({ ...Object.fromEntries(WISH_RATES.map((w) => [w.key, rate])), 'wish:name': name });

/** The comparison's runs on two seeds, each scored at steps 0 and 4 as `scores` says by arm and seed. */
function comparisonRuns(scores: Record<string, [number, number][]>): ArmRun[] {
  const setups = comparisonSetups(defaultSetup(), 2);
  return setups.map((s, i) => {
    const config = toRunConfig(s);
    const arm = armOfConfig(config)!;
    const [base, after] = scores[arm][Math.floor(i / 4)];
    return { config, records: [evaluation(0, base), evaluation(4, after)] };
  });
}

describe('armOfConfig', () => {
  it('reads the arm from the method and the hint source, and no arm from a tool-call run', () => {
    const configs = comparisonSetups(defaultSetup()).map((s) => toRunConfig(s));
    expect(configs.map(armOfConfig)).toEqual(['binary', 'opd', 'combined', 'combined-shuffled']);
    expect(armOfConfig(toAnyRunConfig(withTrack(defaultSetup(), 'toolcall')))).toBeNull();
    expect(armOfConfig({ method: 'sft' })).toBeNull();
    expect(armOfConfig(null)).toBeNull();
    // A run stored before hint sources existed read its own hint.
    expect(armOfConfig({ method: 'combined', preset: { advantage: {} } })).toBe('combined');
  });

  it('reads the other-child control of a storyteller comparison that asked for it', () => {
    const configs = comparisonSetups(defaultSetup(), 1, { otherChild: true }).map((s) => toRunConfig(s));
    expect(configs.map(armOfConfig)).toEqual(['binary', 'opd', 'combined', 'combined-shuffled', 'opd-other-child', 'combined-other-child']);
    expect(armOfConfig({ method: 'opd', preset: { advantage: { hintSource: 'other-child' } } })).toBe('opd-other-child');
    // A hint source this build does not know reads as the judge's own.
    expect(armOfConfig({ method: 'opd', preset: { advantage: { hintSource: 'someday' } } })).toBe('opd');
    const lines = armLines(configs.map((config, i) => ({ config, records: [evaluation(0, 0.25), evaluation(4, i / 10)] })))!;
    expect(lines.map((l) => l.title)).toEqual([
      'Base (untrained)',
      'Binary RL',
      'OPD',
      'Combined',
      'Combined, shuffled hints',
      "OPD, another child's hints",
      "Combined, another child's hints",
    ]);
  });
});

describe('armLines', () => {
  it('gives the base from every run’s step 0 and each arm’s mean and range over its seeds', () => {
    const lines = armLines(
      comparisonRuns({
        binary: [
          [0.1, 0.0],
          [0.2, 0.1],
        ],
        opd: [
          [0.1, 0.5],
          [0.2, 0.7],
        ],
        combined: [
          [0.1, 0.6],
          [0.2, 0.8],
        ],
        'combined-shuffled': [
          [0.1, 0.3],
          [0.2, 0.2],
        ],
      }),
    )!;
    expect(lines.map((l) => [l.arm, l.runs])).toEqual([
      ['base', 8],
      ['binary', 2],
      ['opd', 2],
      ['combined', 2],
      ['combined-shuffled', 2],
    ]);
    expect(lines[0].points).toEqual([{ step: 0, score: { mean: expect.closeTo(0.15), min: 0.1, max: 0.2, n: 8 } }]);
    const combined = lines.find((l) => l.arm === 'combined')!;
    expect(combined.points.map((p) => p.step)).toEqual([0, 4]);
    expect(combined.points[1].score).toEqual({ mean: expect.closeTo(0.7), min: 0.6, max: 0.8, n: 2 });
    const shuffled = lines.find((l) => l.arm === 'combined-shuffled')!;
    expect(shuffled.points[1].score).toEqual({ mean: expect.closeTo(0.25), min: 0.2, max: 0.3, n: 2 });
  });

  it('averages over the runs that have a score at a step, while the others are still going', () => {
    const runs = comparisonRuns({
      binary: [
        [0.1, 0.0],
        [0.2, 0.1],
      ],
      opd: [
        [0.1, 0.5],
        [0.2, 0.7],
      ],
      combined: [
        [0.1, 0.6],
        [0.2, 0.8],
      ],
      'combined-shuffled': [
        [0.1, 0.3],
        [0.2, 0.2],
      ],
    });
    // The second seed's Combined has only its step-0 evaluation; its control has not started.
    runs[6] = { ...runs[6], records: runs[6].records.slice(0, 1) };
    const lines = armLines(runs.slice(0, 7))!;
    const combined = lines.find((l) => l.arm === 'combined')!;
    expect(combined.points[1].score).toEqual({ mean: 0.6, min: 0.6, max: 0.6, n: 1 });
    expect(spreadText(combined.points[1].score, combined.runs)).toBe('0.600, 1 of 2 runs');
    expect(lines.find((l) => l.arm === 'combined-shuffled')!.runs).toBe(1);
    expect(lines[0].points[0].score.n).toBe(7);
  });

  it('is no comparison for one run, a tool-call run, runs of different scenarios, or runs without scores', () => {
    const [a, b] = comparisonSetups(defaultSetup()).map((s) => ({ config: toRunConfig(s), records: [evaluation(0, 0.2)] }));
    expect(armLines([a, b])).not.toBeNull();
    expect(armLines([a])).toBeNull();
    expect(armLines([a, { config: toAnyRunConfig(withTrack(defaultSetup(), 'toolcall')), records: [] }])).toBeNull();
    expect(armLines([a, { config: toRunConfig(withScenario(defaultSetup(), 'student')), records: [evaluation(0, 0.2)] }])).toBeNull();
    expect(
      armLines([
        { ...a, records: [] },
        { ...b, records: [] },
      ]),
    ).toBeNull();
  });
});

describe('wishesMet', () => {
  /** The other-child comparison on two seeds: step 0 and 4, the trained name rate by arm and seed. */
  function otherChildRuns(): ArmRun[] {
    const setups = comparisonSetups(defaultSetup(), 2, { otherChild: true });
    const perSeed = setups.length / 2;
    const name: Record<string, number> = {
      binary: 0.125,
      opd: 0.5,
      combined: 0.75,
      'combined-shuffled': 0.25,
      'opd-other-child': 0,
      'combined-other-child': 0.125,
    };
    return setups.map((s, i) => {
      const config = toRunConfig(s);
      const seed = Math.floor(i / perSeed);
      const records = [evaluation(0, 0.2, rates(0.5, 0.125 * seed)), evaluation(4, 0.5, rates(0.5 + 0.25 * seed, name[armOfConfig(config)!] + 0.125 * seed))];
      return { config, records };
    });
  }

  it('reads every arm at the last step and the base at step 0, with the range over seeds', () => {
    const lines = armLines(otherChildRuns())!;
    const met = wishesMet(lines)!;
    expect(met.step).toBe(4);
    expect(met.columns).toBe(WISH_RATES);
    expect(met.rows.map((r) => r.arm)).toEqual(['base', 'binary', 'opd', 'combined', 'combined-shuffled', 'opd-other-child', 'combined-other-child']);
    const cell = (arm: string, key: string) => {
      const row = met.rows.find((r) => r.arm === arm)!;
      return spreadText(row.rates[WISH_RATES.findIndex((w) => w.key === key)] ?? undefined, row.runs);
    };
    expect(cell('base', 'wish:name')).toBe('0.063 (0.000–0.125)');
    expect(cell('base', 'wish:pet')).toBe('0.500');
    expect(cell('opd', 'wish:name')).toBe('0.563 (0.500–0.625)');
    expect(cell('opd-other-child', 'wish:name')).toBe('0.063 (0.000–0.125)');
    expect(cell('combined-other-child', 'story')).toBe('0.625 (0.500–0.750)');
    expect(met.rows[0].runs).toBe(12);
  });

  it('reads the arms at the latest step all of them have reached, while some are still going', () => {
    const runs = otherChildRuns();
    // The second seed's OPD, other child's hints, has only its step-0 evaluation so far.
    const late = runs.findLastIndex((r) => armOfConfig(r.config) === 'opd-other-child');
    runs[late] = { ...runs[late], records: runs[late].records.slice(0, 1) };
    expect(wishesMet(armLines(runs)!)!.step).toBe(4);
    const first = runs.findIndex((r) => armOfConfig(r.config) === 'opd-other-child');
    runs[first] = { ...runs[first], records: runs[first].records.slice(0, 1) };
    const met = wishesMet(armLines(runs)!)!;
    expect(met.step).toBe(0);
    const opd = met.rows.find((r) => r.arm === 'opd')!;
    expect(spreadText(opd.rates[1] ?? undefined, opd.runs)).toBe('0.063 (0.000–0.125)');
  });

  it('is nothing for evaluations without wish rates', () => {
    const lines = armLines(comparisonSetups(defaultSetup()).map((s) => ({ config: toRunConfig(s), records: [evaluation(0, 0.2), evaluation(4, 0.4)] })))!;
    expect(lines.every((l) => l.wishes.length === 0)).toBe(true);
    expect(wishesMet(lines)).toBeNull();
  });
});

describe('spreadText', () => {
  it('writes the mean, the range when the runs differ, and how many runs when not all', () => {
    expect(spreadText({ mean: 0.5, min: 0.25, max: 0.75, n: 3 }, 3)).toBe('0.500 (0.250–0.750)');
    expect(spreadText({ mean: 0.5, min: 0.25, max: 0.75, n: 2 }, 3)).toBe('0.500 (0.250–0.750), 2 of 3 runs');
    expect(spreadText({ mean: 0.5, min: 0.5, max: 0.5, n: 1 }, 1)).toBe('0.500');
    expect(spreadText({ mean: 0.5, min: 0.5, max: 0.5, n: 3 }, 3)).toBe('0.500');
    expect(spreadText(undefined, 3)).toBe('–');
  });
});
