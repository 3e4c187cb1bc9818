import { describe, expect, it } from 'vitest';
import { madeByCommand } from './reproduce';
import { configForArm, exampleConfig, STORY_LR } from '../runtime/run-config';
import {
  reproductionMarkdown,
  reproductionSvg,
  reproductionTable,
  sweepMarkdown,
  sweepTable,
  verdict,
  wishComparison,
  wishComparisonMarkdown,
  wishMarkdown,
  wishRatesMarkdown,
  wishRatesTable,
  wishTable,
  type RunScores,
} from './reproduce-report';

const runs: RunScores[] = [
  {
    arm: 'binary',
    seed: 1,
    scores: [
      { step: 0, score: 0.25 },
      { step: 8, score: 0 },
    ],
  },
  {
    arm: 'binary',
    seed: 2,
    scores: [
      { step: 0, score: 0.5 },
      { step: 8, score: 0.5 },
    ],
  },
  {
    arm: 'combined',
    seed: 1,
    scores: [
      { step: 0, score: 0.25 },
      { step: 8, score: 0.75 },
    ],
  },
  {
    arm: 'combined',
    seed: 2,
    scores: [
      { step: 0, score: 0.5 },
      { step: 8, score: 1 },
    ],
  },
];

describe('the reproduction report', () => {
  it('tabulates the mean and a bootstrap interval per arm and step, the base from each seed’s step 0 at every step', () => {
    const table = reproductionTable(runs, [0, 8]);
    expect(table.seeds).toEqual([1, 2]);
    expect(table.rows.map((r) => r.arm)).toEqual(['base', 'binary', 'combined']);
    expect(table.rows[0].cells[0]).toMatchObject({ mean: 0.375, perSeed: [0.25, 0.5], n: 2 });
    expect(table.rows[0].cells[1]).toMatchObject({ mean: 0.375, perSeed: [0.25, 0.5] });
    const combined = table.rows[2].cells[1]!;
    expect(combined.mean).toBe(0.875);
    // Two seeds: the resampled means can only be 0.75, 0.875 or 1.
    expect([combined.lo, combined.hi]).toEqual([0.75, 1]);
    const md = reproductionMarkdown(table);
    expect(md).toContain('| Combined | 0.375 [0.250, 0.500] | 0.875 [0.750, 1.000] | 0.76 |');
    expect(md).toContain('| Base (untrained) | 0.375 [0.250, 0.500] | 0.375 [0.250, 0.500] | 0.17 |');
  });

  it('pairs differences by seed and orders two arms only where the interval leaves zero out', () => {
    const table = reproductionTable(runs, [0, 8]);
    const pair = (a: string, b: string) => table.paired.find((p) => p.a === a && p.b === b)!;
    // Combined − base is +0.5 on both seeds: an interval of one point, which excludes zero.
    expect(pair('combined', 'base').cells[1]).toMatchObject({ mean: 0.5, lo: 0.5, hi: 0.5 });
    expect(verdict(pair('combined', 'base'), 2)).toBe('learns');
    // Binary − base is −0.25 and 0: its interval [−0.25, 0] touches zero.
    expect(pair('binary', 'base').ahead).toBeNull();
    expect(verdict(pair('binary', 'base'), 2)).toBe('not distinguished at 2 seeds');
    expect(pair('combined', 'binary')).toMatchObject({ ahead: 'combined' });
    expect(reproductionMarkdown(table)).toContain('| Combined − Binary RL | +0.625 [+0.500, +0.750] | Combined ahead |');
    expect(table.paired.some((p) => p.b === 'combined-shuffled')).toBe(false);
    // One seed: a point, not an interval, and no verdict.
    const one = reproductionTable(
      runs.filter((r) => r.seed === 1),
      [0, 8],
    );
    expect(
      verdict(
        one.paired.find((p) => p.a === 'combined' && p.b === 'base')!,
        1,
      ),
    ).toBe('one seed orders nothing');
  });

  it('pairs right hints against the other child’s on the same seeds, and reports the per-wish rates where the evaluations carry them', () => {
    // Per seed: OPD meets the name in 0.5 / 0.75 of the stories, its other-child control in 0.25 / 0.25, and names the other child more as it trains.
    const rated = (arm: RunScores['arm'], seed: number, score: [number, number], name: [number, number], other?: [number, number]): RunScores => ({
      arm,
      seed,
      scores: [0, 8].map((step, i) => ({
        step,
        score: score[i],
        rates: { 'wish:name': name[i], 'wish:pet': 1, story: 1, ...(other ? { 'other:name': other[i], 'other:pet': other[i] / 2 } : {}) },
      })),
    });
    const rateRuns = [
      rated('opd', 1, [0.25, 0.5], [0, 0.5]),
      rated('opd', 2, [0.25, 0.75], [0, 0.75]),
      rated('opd-other-child', 1, [0.25, 0.25], [0, 0.25], [0, 0.5]),
      rated('opd-other-child', 2, [0.25, 0.5], [0, 0.25], [0.25, 0.5]),
    ];
    const table = reproductionTable(rateRuns, [0, 8]);
    const pair = table.paired.find((p) => p.a === 'opd' && p.b === 'opd-other-child')!;
    expect(pair.cells[1]).toMatchObject({ mean: 0.25, lo: 0.25, hi: 0.25, perSeed: [0.25, 0.25] });
    expect(pair.ahead).toBe('opd');
    expect(table.paired.find((p) => p.a === 'opd-other-child' && p.b === 'base')).toBeDefined();
    const md = reproductionMarkdown(table);
    expect(md).toContain("| OPD − OPD, another child's hints | +0.250 [+0.250, +0.250] | OPD ahead |");

    const rates = wishRatesTable(rateRuns, 8)!;
    expect(rates.columns.map((c) => c.title)).toEqual(['pet', 'name', 'story', "other child's pet", "other child's name"]);
    expect(rates.rows.map((r) => r.arm)).toEqual(['base', 'opd', 'opd-other-child']);
    // The base has no other child.
    expect(rates.rows[0].cells.slice(3)).toEqual([null, null]);
    expect(rates.rows[1].cells[1]).toMatchObject({ mean: 0.625, perSeed: [0.5, 0.75] });
    expect(rates.rows[1].cells[4]).toBeNull();
    expect(rates.rows[2].cells[4]).toMatchObject({ mean: 0.5 });
    expect(rates.paired.map((p) => p.title)).toEqual(["OPD − OPD, another child's hints", "OPD, another child's hints: step 8 − step 0"]);
    expect(rates.paired[0].cells[1]).toMatchObject({ mean: 0.375, perSeed: [0.25, 0.5] });
    // The drift toward the other child's name over training, paired within each run.
    expect(rates.paired[1].cells[4]).toMatchObject({ mean: 0.375, perSeed: [0.5, 0.25] });
    const rmd = wishRatesMarkdown(rates, [1, 2]);
    expect(rmd).toContain("| arm | pet | name | story | other child's pet | other child's name |");
    expect(rmd).toContain('| Base (untrained), step 0 | 1.000 [1.000, 1.000] | 0.000 [0.000, 0.000] | 1.000 [1.000, 1.000] |  |  |');
    expect(rmd).toContain("| OPD, another child's hints: step 8 − step 0 | +0.000 [+0.000, +0.000] | +0.250 [+0.250, +0.250] |");
    // Evaluations without rates: no table.
    expect(wishRatesTable(runs, 8)).toBeNull();
    // Only the other child's counts (evaluations without per-wish rates): no row or difference of blanks.
    const counts = rateRuns.map((r) => ({
      ...r,
      scores: r.scores.map((s) => ({ ...s, rates: Object.fromEntries(Object.entries(s.rates!).filter(([k]) => k.startsWith('other:'))) })),
    }));
    const only = wishRatesTable(counts, 8)!;
    expect(only.rows.map((r) => r.arm)).toEqual(['opd-other-child']);
    expect(only.paired.map((p) => p.title)).toEqual(["OPD, another child's hints: step 8 − step 0"]);
  });

  it('draws one line per arm with its interval band in plain SVG, without script', () => {
    const svg = reproductionSvg(reproductionTable(runs, [0, 8]));
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<polyline/g)).toHaveLength(3);
    expect(svg).toContain('>Binary RL</text>');
    expect(svg).not.toMatch(/<script|on\w+=/i);
  });

  it('reports the gain per wish combination and the spread across them', () => {
    const combos: RunScores[] = [
      {
        arm: 'combined',
        seed: 1,
        wishes: 'cat / Tom / kite',
        scores: [
          { step: 0, score: 0 },
          { step: 8, score: 0.5 },
        ],
      },
      {
        arm: 'combined',
        seed: 2,
        wishes: 'cat / Tom / kite',
        scores: [
          { step: 0, score: 0.25 },
          { step: 8, score: 0.75 },
        ],
      },
      {
        arm: 'combined',
        seed: 1,
        wishes: 'frog / Pip / hat',
        scores: [
          { step: 0, score: 0.25 },
          { step: 8, score: 0.25 },
        ],
      },
    ];
    const rows = wishTable(combos, 'combined', 8);
    expect(rows.map((r) => [r.wishes, r.gain.mean])).toEqual([
      ['cat / Tom / kite', 0.5],
      ['frog / Pip / hat', 0],
    ]);
    expect(wishMarkdown(rows, 'combined', 8, [1, 2])).toContain('from +0.000 to +0.500');
  });

  it("reports each combination's name rate and its lead over another child's hints, paired by seed", () => {
    const run = (arm: 'opd' | 'opd-other-child', seed: number, wishes: string, last: number, name?: number): RunScores => ({
      arm,
      seed,
      wishes,
      scores: [
        { step: 0, score: 0.25, rates: { 'wish:name': 0 } },
        { step: 8, score: last, rates: name === undefined ? {} : { 'wish:name': name } },
      ],
    });
    const runs = [
      run('opd', 1, 'cat / Tom / hat', 0.75, 1),
      run('opd', 2, 'cat / Tom / hat', 0.5, 0.5),
      run('opd-other-child', 1, 'cat / Tom / hat', 0.5),
      // Seed 2's control is missing: the difference pairs seed 1 only.
      run('opd', 1, 'bunny / Hazel / flower', 0.25, 0),
      run('opd-other-child', 1, 'bunny / Hazel / flower', 0.5),
    ];
    const rows = wishTable(runs, 'opd', 8);
    expect(rows.map((r) => [r.wishes, r.name?.mean, r.vsOtherChild?.mean, r.vsOtherChild?.n])).toEqual([
      ['cat / Tom / hat', 0.75, 0.25, 1],
      ['bunny / Hazel / flower', 0, -0.25, 1],
    ]);
    const md = wishMarkdown(rows, 'opd', 8, [1, 2]);
    expect(md).toContain("| name, step 8 | − another child's hints |");
    expect(md).toContain('the name in 0.375');
    expect(md).toContain("right hints − another child's +0.000");
    // Without per-wish rates or a control, the table keeps its four columns.
    expect(
      wishMarkdown(
        wishTable(
          runs.filter((r) => r.arm === 'opd').map((r) => ({ ...r, scores: r.scores.map(({ step, score }) => ({ step, score })) })),
          'opd',
          8,
        ),
        'opd',
        8,
        [1, 2],
      ),
    ).not.toContain('name, step');
  });

  it('pairs two experiments of the same combinations by seed, and pools the children but the one left out per seed', () => {
    const run = (seed: number, wishes: string, last: number, name: number): RunScores => ({
      arm: 'opd',
      seed,
      wishes,
      scores: [
        { step: 0, score: 0.25, rates: { 'wish:name': 0 } },
        { step: 8, score: last, rates: { 'wish:name': name } },
      ],
    });
    const a = [
      run(1, 'cat / Tom / hat', 0.75, 1),
      run(2, 'cat / Tom / hat', 0.5, 0.5),
      run(1, 'frog / Pip / cake', 0.5, 0.5),
      run(2, 'frog / Pip / cake', 0.25, 0),
      run(1, 'dog / Max / ball', 1, 1),
      // Seed 3 has no partner in B: it is left out.
      run(3, 'cat / Tom / hat', 1, 1),
    ];
    const b = [
      run(2, 'cat / Tom / hat', 0.25, 0),
      run(1, 'cat / Tom / hat', 0.5, 0.5),
      run(1, 'frog / Pip / cake', 0.5, 0),
      run(2, 'frog / Pip / cake', 0.25, 0),
      run(1, 'dog / Max / ball', 0, 0),
    ];
    const c = wishComparison(a, b, 8, 'dog / Max / ball');
    expect(c.seeds).toEqual([1, 2]);
    expect(c.rows.map((r) => [r.wishes, r.name!.a.mean, r.name!.b.mean, r.name!.diff.perSeed, r.score.diff.perSeed])).toEqual([
      ['cat / Tom / hat', 0.75, 0.25, [0.5, 0.5], [0.25, 0.25]],
      ['frog / Pip / cake', 0.25, 0, [0.5, 0], [0, 0]],
      ['dog / Max / ball', 1, 0, [1], [1]],
    ]);
    // Per seed, the mean over Tom and Pip: seed 1 (1 + 0.5) / 2 - (0.5 + 0) / 2 = 0.5, seed 2 0.25.
    expect(c.across!.wishes).toEqual(['cat / Tom / hat', 'frog / Pip / cake']);
    expect(c.across!.name!.diff.perSeed).toEqual([0.5, 0.25]);
    const md = wishComparisonMarkdown(c, ['forward KL', 'reverse KL']);
    expect(md).toContain('| wishes (pet / name / favourite) | name: forward KL | reverse KL | forward KL − reverse KL | score: forward KL |');
    expect(md).toContain('| the 2 children nothing was tuned on | 0.500 [');
    expect(md).toContain('over seeds 1, 2');
  });

  it('picks the learning rate with the highest mean per arm', () => {
    const sweep: RunScores[] = [1e-3, 2e-3].flatMap((lr, k) =>
      [1, 2].map((seed) => ({
        arm: 'opd' as const,
        seed,
        lr,
        scores: [
          { step: 0, score: 0 },
          { step: 8, score: k ? 0.25 : 0.5 },
        ],
      })),
    );
    const [row] = sweepTable(sweep, 8);
    expect(row.chosen).toBe(1e-3);
    expect(sweepMarkdown([row], 8, [1, 2])).toContain('| OPD | 0.500 [0.500, 0.500] | 0.250 [0.250, 0.250] | 0.001 |');
  });

  it('takes the lowest of rates whose means tie, also where the sums round apart in the last bit', () => {
    // (1/12 + 1/8) / 2 and (0 + 5/24) / 2 are the same share of stories, 1 ulp apart as floats.
    const perSeed: Record<number, number[]> = { 2.5e-4: [1 / 12, 1 / 8], 1e-3: [0, 5 / 24] };
    const sweep: RunScores[] = [2.5e-4, 1e-3].flatMap((lr) =>
      [1, 2].map((seed, i) => ({ arm: 'binary' as const, seed, lr, scores: [{ step: 16, score: perSeed[lr][i] }] })),
    );
    const [row] = sweepTable(sweep, 16);
    expect(row.cells[1].score!.mean).toBeGreaterThan(row.cells[0].score!.mean);
    expect(row.chosen).toBe(2.5e-4);
  });

  it('gives each arm its own preset and learning rate, and keeps the config’s other training settings', () => {
    const base = exampleConfig('storyteller');
    expect(configForArm(base, 'combined').preset).toEqual(base.preset);
    const binary = configForArm(base, 'binary');
    expect(binary.preset.method).toBe('binary');
    expect(binary.preset.optimizer.lr).toBe(STORY_LR.binary);
    // The batch size carries over; which zero-advantage samples train is Binary's own rule.
    expect(binary.preset.batch).toEqual({ ...base.preset.batch, zeroAdvantage: 'at-least-one-per-session' });
    expect(binary.label).toBe('storyteller (binary, seed 1)');
    const shuffled = configForArm(base, 'combined-shuffled');
    expect([shuffled.method, shuffled.preset.advantage.hintSource]).toEqual(['combined', 'shuffled']);
    // A rate set by hand is every arm's.
    const byHand = { ...base, preset: { ...base.preset, optimizer: { ...base.preset.optimizer, lr: 5e-3 } } };
    expect(configForArm(byHand, 'opd').preset.optimizer.lr).toBe(5e-3);
  });
});

describe('the command the reports say they were made by', () => {
  it('names every option that changes a result, and a --policy folder by its name, never its local path', () => {
    const o = { seeds: [1, 2], steps: 16, evalEvery: 8, arms: ['opd'], wishes: [{ subject: 'frog', name: 'Pip', favourite: 'cake' }], lrs: null };
    expect(madeByCommand('story.json', o)).toBe(
      'nextstate reproduce --config story.json --seeds 1,2 --steps 16 --eval-every 8 --methods opd --wishes frog/Pip/cake',
    );
    expect(madeByCommand('story.json', { ...o, policy: '/home/me/models/deep-demo' })).toMatch(/ --wishes frog\/Pip\/cake --policy deep-demo$/);
    expect(madeByCommand('story.json', { ...o, wishes: null, lrs: [0.001], policy: 'bundled:storyteller-demo' })).toMatch(
      / --lr 0\.001 --policy bundled:storyteller-demo$/,
    );
  });
});
