/**
 * The reproduction's tables and chart: the personalization score per arm at chosen steps, the mean
 * over seeds with a 95 % bootstrap interval, paired differences between arms on the same seeds,
 * the gain per wish combination and the learning-rate sweep, as JSON, Markdown and an SVG chart.
 * Pure functions of the evaluation scores, so the README's tables are generated, never typed, and
 * the words that order two arms are written only where the paired interval excludes zero.
 */
import { ARM_TITLES, type Arm, type TrainedArm } from '../runtime/arms';
import { bootstrapMean, excludesZero, type Interval } from './reproduce-stats';
import { STORY_WISHES, wishRateKey } from '../sims/rules/story-score';

/** One run's evaluations: score by step. */
export interface RunScores {
  arm: TrainedArm;
  seed: number;
  /**
   * `rates`: what the evaluation record's scores hold beside the score (a storyteller's per-wish
   * rates, RATE_COLUMNS), and, for an other-child run, how often its stories name the other child.
   */
  scores: { step: number; score: number; rates?: Record<string, number> }[];
  /** The child's wishes as "subject / name / thing", for a run of a wish combination. */
  wishes?: string;
  /** The learning rate, for a run of the sweep. */
  lr?: number;
}

export type Cell = Interval & { perSeed: number[] };

export interface PairedDifference {
  a: Arm;
  b: Arm;
  /** a − b per step of the table, paired by seed. */
  cells: (Cell | null)[];
  /** At the last step: which arm the interval puts ahead, or null when it includes zero. */
  ahead: Arm | null;
}

export interface ReproductionTable {
  steps: number[];
  seeds: number[];
  /** "base" is each seed's untrained policy (its step-0 score, at every step). */
  rows: { arm: Arm; cells: (Cell | null)[] }[];
  paired: PairedDifference[];
}

/** The paper's Table 3 (Qwen3-4B, GPT-4o simulators): base, then each method after 8 / 16 steps. */
export const PAPER_TABLE3: Partial<Record<Arm, { 8: number; 16: number } | number>> = {
  base: 0.17,
  binary: { 8: 0.25, 16: 0.23 },
  opd: { 8: 0.25, 16: 0.72 },
  combined: { 8: 0.76, 16: 0.81 },
};

/** The differences the reproduction reports, each an arm against the one it should beat. */
export const PAIRS: readonly [Arm, Arm][] = [
  ['combined', 'base'],
  ['opd', 'base'],
  ['binary', 'base'],
  ['combined-shuffled', 'base'],
  ['combined', 'opd'],
  ['opd', 'binary'],
  ['combined', 'binary'],
  ['combined', 'combined-shuffled'],
  ['opd-other-child', 'base'],
  ['combined-other-child', 'base'],
  // Right hints − the other child's: what the hint's wish, not a hint as such, teaches.
  ['opd', 'opd-other-child'],
  ['combined', 'combined-other-child'],
];

function cell(values: number[]): Cell | null {
  return values.length ? { ...bootstrapMean(values), perSeed: values } : null;
}

const at = (run: RunScores | undefined, step: number) => run?.scores.find((s) => s.step === step)?.score;

/** Seed -> score of `arm` at `step`; the base arm is the seed's step 0 of any run. */
function scoresOf(runs: readonly RunScores[], arm: Arm, step: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const r of runs) {
    if (arm !== 'base' && r.arm !== arm) continue;
    const s = at(r, arm === 'base' ? 0 : step);
    if (s !== undefined && !out.has(r.seed)) out.set(r.seed, s);
  }
  return out;
}

export function reproductionTable(runs: readonly RunScores[], steps: readonly number[]): ReproductionTable {
  const seeds = [...new Set(runs.map((r) => r.seed))].sort((a, b) => a - b);
  const arms: Arm[] = ['base', ...new Set(runs.map((r) => r.arm))];
  const rows = arms.map((arm) => ({ arm, cells: steps.map((step) => cell([...scoresOf(runs, arm, step).values()])) }));
  const paired: PairedDifference[] = [];
  for (const [a, b] of PAIRS) {
    if (!arms.includes(a) || !arms.includes(b)) continue;
    const cells = steps.map((step) => {
      if (step === 0) return null;
      const [sa, sb] = [scoresOf(runs, a, step), scoresOf(runs, b, step)];
      return cell(seeds.filter((s) => sa.has(s) && sb.has(s)).map((s) => sa.get(s)! - sb.get(s)!));
    });
    const last = cells.at(-1);
    // One seed has no spread to resample: it orders nothing.
    paired.push({ a, b, cells, ahead: last && last.n > 1 && excludesZero(last) ? (last.mean > 0 ? a : b) : null });
  }
  return { steps: [...steps], seeds, rows, paired };
}

const f3 = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
const withInterval = (c: Cell | null, fmt = f3) => (c ? `${fmt(c.mean)} [${fmt(c.lo)}, ${fmt(c.hi)}]` : 'n/a');

function paperCell(arm: Arm, step: number): string {
  const p = PAPER_TABLE3[arm];
  if (p === undefined) return '';
  if (typeof p === 'number') return p.toFixed(2);
  return step === 8 || step === 16 ? p[step].toFixed(2) : '';
}

function seedList(seeds: readonly number[]): string {
  const run = seeds.length > 2 && seeds.every((s, i) => i === 0 || s === seeds[i - 1] + 1);
  return run ? `${seeds[0]}–${seeds.at(-1)}` : seeds.join(', ');
}

/** What a paired difference at the last step lets one say, in words. */
export function verdict(p: PairedDifference, seeds: number): string {
  if (p.ahead === null) return seeds === 1 ? 'one seed orders nothing' : `not distinguished at ${seeds} seeds`;
  if (p.b === 'base') return p.ahead === p.a ? 'learns' : 'falls below its start';
  return `${ARM_TITLES[p.ahead]} ahead`;
}

export function reproductionMarkdown(table: ReproductionTable): string {
  const paperSteps = table.steps.filter((s) => s === 8 || s === 16);
  const head = ['arm', ...table.steps.map((s) => `step ${s}`), ...paperSteps.map((s) => `paper, step ${s}`)];
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  for (const row of table.rows) {
    lines.push(`| ${[ARM_TITLES[row.arm], ...row.cells.map((c) => withInterval(c)), ...paperSteps.map((s) => paperCell(row.arm, s))].join(' | ')} |`);
  }
  const n = table.seeds.length;
  lines.push(
    '',
    `Mean and 95 % bootstrap interval over seeds ${seedList(table.seeds)} (${n} ${n === 1 ? 'run' : 'runs'} per arm; the base row is each seed's untrained policy). ` +
      "The paper's figures are Qwen3-4B with GPT-4o simulators.",
  );
  const diffSteps = table.steps.filter((s) => s > 0);
  if (table.paired.length) {
    const dh = ['difference (paired by seed)', ...diffSteps.map((s) => `step ${s}`), `at step ${table.steps.at(-1)}`];
    lines.push('', `| ${dh.join(' | ')} |`, `| ${dh.map(() => '---').join(' | ')} |`);
    for (const p of table.paired) {
      const cells = p.cells.filter((_, i) => table.steps[i] > 0).map((c) => withInterval(c, signed));
      lines.push(`| ${[`${ARM_TITLES[p.a]} − ${ARM_TITLES[p.b]}`, ...cells, verdict(p, n)].join(' | ')} |`);
    }
    lines.push('', 'A difference orders two arms only where its interval leaves zero out; otherwise they are not distinguished at this number of seeds.');
  }
  return lines.join('\n');
}

/** The rate keys of an other-child run's stories naming the other child's pet and name (reproduce.ts fills them). */
export const OTHER_PET = 'other:pet';
export const OTHER_NAME = 'other:name';

/**
 * The rates the report shows, in its order, where the evaluations carry them: the storyteller's
 * per-wish rates over the evaluation stories (the name is the one wish no other child shares),
 * its keyword and story scores, and the other child's pet and name in an other-child run's stories.
 */
export const RATE_COLUMNS: readonly { key: string; title: string }[] = [
  ...STORY_WISHES.map((id) => ({ key: wishRateKey(id), title: id })),
  { key: 'keywords', title: 'keywords' },
  { key: 'story', title: 'story' },
  { key: OTHER_PET, title: "other child's pet" },
  { key: OTHER_NAME, title: "other child's name" },
];

export interface WishRates {
  step: number;
  columns: { key: string; title: string }[];
  /** The base at step 0 (without the other child's columns: it has no other child), every arm at `step`; an arm with none of the rates has no row. */
  rows: { arm: Arm; cells: (Cell | null)[] }[];
  /** Per column: right hints − the other child's on the same seeds, and each other-child arm's `step` − step 0 (where any column has one). */
  paired: { title: string; cells: (Cell | null)[] }[];
}

const rateAt = (run: RunScores, step: number, key: string) => run.scores.find((s) => s.step === step)?.rates?.[key];

/** Seed -> `key`'s rate of `arm` at `step` (the base: step 0 of any run). */
function ratesOf(runs: readonly RunScores[], arm: Arm, step: number, key: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const r of runs) {
    if (arm !== 'base' && r.arm !== arm) continue;
    const v = rateAt(r, arm === 'base' ? 0 : step, key);
    if (v !== undefined && !out.has(r.seed)) out.set(r.seed, v);
  }
  return out;
}

/** The other-child controls and the arm each is paired with (the same method on the judge's own hints). */
const OTHER_CHILD_PAIRS: readonly [Arm, TrainedArm][] = [
  ['opd', 'opd-other-child'],
  ['combined', 'combined-other-child'],
];

/** The per-wish rates at `step`, or null when no evaluation carries any. */
export function wishRatesTable(runs: readonly RunScores[], step: number): WishRates | null {
  const columns = RATE_COLUMNS.filter((c) => runs.some((r) => r.scores.some((s) => s.rates?.[c.key] !== undefined)));
  if (!columns.length) return null;
  const other = (key: string) => key === OTHER_PET || key === OTHER_NAME;
  const arms: Arm[] = ['base', ...new Set(runs.map((r) => r.arm))];
  const some = (cells: (Cell | null)[]) => cells.some((c) => c !== null);
  // An arm without a rate of these (the base, OPD, where only the other child's are counted) has no row.
  const rows = arms
    .map((arm) => ({ arm, cells: columns.map((c) => (arm === 'base' && other(c.key) ? null : cell([...ratesOf(runs, arm, step, c.key).values()]))) }))
    .filter((r) => some(r.cells));
  const paired: WishRates['paired'] = [];
  for (const [a, b] of OTHER_CHILD_PAIRS) {
    if (!arms.includes(a) || !arms.includes(b)) continue;
    const cells = columns.map((c) => {
      const [ra, rb] = [ratesOf(runs, a, step, c.key), ratesOf(runs, b, step, c.key)];
      return cell([...ra.keys()].filter((s) => rb.has(s)).map((s) => ra.get(s)! - rb.get(s)!));
    });
    if (some(cells)) paired.push({ title: `${ARM_TITLES[a]} − ${ARM_TITLES[b]}`, cells });
  }
  for (const [, b] of OTHER_CHILD_PAIRS) {
    if (!arms.includes(b) || step === 0) continue;
    const mine = runs.filter((r) => r.arm === b);
    const cells = columns.map((c) =>
      cell(
        mine.flatMap((r) =>
          rateAt(r, step, c.key) !== undefined && rateAt(r, 0, c.key) !== undefined ? [rateAt(r, step, c.key)! - rateAt(r, 0, c.key)!] : [],
        ),
      ),
    );
    if (some(cells)) paired.push({ title: `${ARM_TITLES[b]}: step ${step} − step 0`, cells });
  }
  return { step, columns, rows, paired };
}

export function wishRatesMarkdown(t: WishRates, seeds: readonly number[]): string {
  const titles = t.columns.map((c) => c.title);
  const lines = [`| arm | ${titles.join(' | ')} |`, `| --- | ${titles.map(() => '---').join(' | ')} |`];
  for (const row of t.rows) {
    const label = row.arm === 'base' ? `${ARM_TITLES.base}, step 0` : `${ARM_TITLES[row.arm]}, step ${t.step}`;
    lines.push(`| ${[label, ...row.cells.map((c) => (c ? withInterval(c) : ''))].join(' | ')} |`);
  }
  if (t.paired.length) {
    lines.push('', `| difference (paired by seed) | ${titles.join(' | ')} |`, `| --- | ${titles.map(() => '---').join(' | ')} |`);
    for (const p of t.paired) lines.push(`| ${[p.title, ...p.cells.map((c) => (c ? withInterval(c, signed) : ''))].join(' | ')} |`);
  }
  lines.push(
    '',
    `The share of evaluation stories that meet each wish, mean and 95 % bootstrap interval over seeds ${seedList(seeds)}. ` +
      "The name is the one wish no other child shares. The other child's pet and name are counted, as whole words, in the stories of the runs " +
      "whose teacher read the hints written for that child; a control that learns this child's name less, and the other child's more, says OPD learns the wish its hint carries.",
  );
  return lines.join('\n');
}

export interface WishRow {
  wishes: string;
  base: Cell;
  last: Cell;
  gain: Cell;
  /** The share of evaluation stories at `step` that call the pet by this child's name, where the evaluations count it. */
  name: Cell | null;
  /** Right hints − another child's, paired by seed, at `step`, where that control ran on this combination. */
  vsOtherChild: Cell | null;
}

/** Per wish combination: `arm`'s base, last-step score, gain and name rate over seeds, in the order first run. */
export function wishTable(runs: readonly RunScores[], arm: TrainedArm, step: number): WishRow[] {
  const control = OTHER_CHILD_PAIRS.find(([a]) => a === arm)?.[1];
  const combos = [...new Set(runs.filter((r) => r.wishes && r.arm === arm).map((r) => r.wishes!))];
  return combos.flatMap((wishes) => {
    const mine = runs.filter((r) => r.wishes === wishes && r.arm === arm && at(r, 0) !== undefined && at(r, step) !== undefined);
    if (!mine.length) return [];
    const controls = new Map(runs.filter((r) => r.wishes === wishes && r.arm === control && at(r, step) !== undefined).map((r) => [r.seed, at(r, step)!]));
    const names = mine.flatMap((r) => {
      const v = rateAt(r, step, wishRateKey('name'));
      return v === undefined ? [] : [v];
    });
    return [
      {
        wishes,
        base: cell(mine.map((r) => at(r, 0)!))!,
        last: cell(mine.map((r) => at(r, step)!))!,
        gain: cell(mine.map((r) => at(r, step)! - at(r, 0)!))!,
        name: cell(names),
        vsOtherChild: cell(mine.filter((r) => controls.has(r.seed)).map((r) => at(r, step)! - controls.get(r.seed)!)),
      },
    ];
  });
}

/** "mean [lo, hi], from min to max" of one figure per combination, the spread a reader needs beside the mean. */
function across(values: number[], format: (x: number) => string): string {
  const b = bootstrapMean(values);
  return `${format(b.mean)} [${format(b.lo)}, ${format(b.hi)}], from ${format(Math.min(...values))} to ${format(Math.max(...values))}`;
}

export function wishMarkdown(rows: readonly WishRow[], arm: TrainedArm, step: number, seeds: readonly number[]): string {
  const withName = rows.some((r) => r.name);
  const withControl = rows.some((r) => r.vsOtherChild);
  const plain = (x: number) => x.toFixed(3);
  const header = [
    'wishes (pet / name / favourite)',
    'step 0',
    `${ARM_TITLES[arm]}, step ${step}`,
    'gain',
    ...(withName ? [`name, step ${step}`] : []),
    ...(withControl ? ["− another child's hints"] : []),
  ];
  const lines = [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => {
      const cells = [r.wishes, withInterval(r.base), withInterval(r.last), withInterval(r.gain, signed)];
      if (withName) cells.push(r.name ? withInterval(r.name) : '');
      if (withControl) cells.push(r.vsOtherChild ? withInterval(r.vsOtherChild, signed) : '');
      return `| ${cells.join(' | ')} |`;
    }),
  ];
  if (rows.length > 1) {
    const parts = [
      `mean gain ${across(
        rows.map((r) => r.gain.mean),
        signed,
      )}`,
    ];
    const names = rows.flatMap((r) => (r.name ? [r.name.mean] : []));
    if (names.length > 1) parts.push(`the name in ${across(names, plain)} of the evaluation stories`);
    const control = rows.flatMap((r) => (r.vsOtherChild ? [r.vsOtherChild.mean] : []));
    if (control.length > 1) parts.push(`right hints − another child's ${across(control, signed)}`);
    lines.push(
      '',
      `Across the ${rows.length} combinations (the mean of the combinations' means, its 95 % bootstrap interval and the range): ${parts.join('; ')}; seeds ${seedList(seeds)} per combination.`,
    );
  }
  if (withControl)
    lines.push(
      '',
      `"− another child's hints" is ${ARM_TITLES[arm]} minus the same method taught with the hints written for another child, paired by seed: above zero, the hint's content steered what this child's runs learned.`,
    );
  return lines.join('\n');
}

export interface SweepRow {
  arm: TrainedArm;
  cells: { lr: number; score: Cell | null }[];
  chosen: number;
}

/**
 * Means closer than this are a tie. Scores are shares of a few dozen stories, so two rates that
 * score the same stories can differ only in a float's last bit, by the order of the sum.
 */
const SWEEP_TIE = 1e-9;

/**
 * Per arm and learning rate, the score at `step` over seeds; the chosen rate has the highest mean,
 * and of rates tied on it the lowest (the smaller change to the policy for the same score).
 */
export function sweepTable(runs: readonly RunScores[], step: number): SweepRow[] {
  const lrs = [...new Set(runs.map((r) => r.lr!).filter((x) => x !== undefined))].sort((a, b) => a - b);
  const arms = [...new Set(runs.map((r) => r.arm))];
  return arms.map((arm) => {
    const cells = lrs.map((lr) => ({ lr, score: cell(runs.filter((r) => r.arm === arm && r.lr === lr).flatMap((r) => at(r, step) ?? [])) }));
    const best = cells.reduce((a, b) => ((b.score?.mean ?? -1) > (a.score?.mean ?? -1) + SWEEP_TIE ? b : a));
    return { arm, cells, chosen: best.lr };
  });
}

export function sweepMarkdown(rows: readonly SweepRow[], step: number, seeds: readonly number[]): string {
  const lrs = rows[0]?.cells.map((c) => c.lr) ?? [];
  const lines = [
    `| arm | ${lrs.map((lr) => `lr ${lr}`).join(' | ')} | chosen |`,
    `| --- | ${lrs.map(() => '---').join(' | ')} | --- |`,
    ...rows.map((r) => `| ${ARM_TITLES[r.arm]} | ${r.cells.map((c) => withInterval(c.score)).join(' | ')} | ${r.chosen} |`),
    '',
    `The score at step ${step} on the training openings (the evaluation openings are not looked at), mean and 95 % bootstrap interval over seeds ${seedList(seeds)}; each arm takes the rate with the highest mean, the lowest of rates tied on it.`,
  ];
  return lines.join('\n');
}

const COLOURS: Record<Arm, string> = {
  base: '#666666',
  binary: '#d95f02',
  opd: '#7570b3',
  combined: '#1b9e77',
  'combined-shuffled': '#e7298a',
  'opd-other-child': '#a6761d',
  'combined-other-child': '#66a61e',
};

/** Mean score per arm against step with its 95 % interval as a band; plain SVG, no script. */
export function reproductionSvg(table: ReproductionTable, o: { width?: number; height?: number } = {}): string {
  const width = o.width ?? 640;
  const height = o.height ?? 360;
  const pad = { left: 48, right: 170, top: 24, bottom: 40 };
  const steps = table.steps;
  const maxStep = Math.max(1, ...steps);
  const x = (step: number) => pad.left + (step / maxStep) * (width - pad.left - pad.right);
  const y = (score: number) => pad.top + (1 - score) * (height - pad.top - pad.bottom);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
  ];
  for (const v of [0, 0.25, 0.5, 0.75, 1]) {
    parts.push(
      `<line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${pad.left - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(2)}</text>`,
    );
  }
  for (const s of steps) parts.push(`<text x="${x(s)}" y="${height - pad.bottom + 16}" text-anchor="middle">${s}</text>`);
  parts.push(`<text x="${(pad.left + width - pad.right) / 2}" y="${height - 6}" text-anchor="middle">training step</text>`);
  parts.push(
    `<text x="14" y="${(pad.top + height - pad.bottom) / 2}" transform="rotate(-90 14 ${(pad.top + height - pad.bottom) / 2})" text-anchor="middle">personalization score</text>`,
  );
  table.rows.forEach((row, i) => {
    const points = steps.flatMap((step, k) => (row.cells[k] ? [{ step, c: row.cells[k] }] : []));
    const colour = COLOURS[row.arm];
    const band = [...points.map((p) => `${x(p.step)},${y(p.c.hi)}`), ...[...points].reverse().map((p) => `${x(p.step)},${y(p.c.lo)}`)].join(' ');
    parts.push(`<polygon points="${band}" fill="${colour}" fill-opacity="0.15"/>`);
    const dash = row.arm === 'base' ? ' stroke-dasharray="4 3"' : '';
    parts.push(`<polyline points="${points.map((p) => `${x(p.step)},${y(p.c.mean)}`).join(' ')}" fill="none" stroke="${colour}" stroke-width="2"${dash}/>`);
    for (const p of points) parts.push(`<circle cx="${x(p.step)}" cy="${y(p.c.mean)}" r="3" fill="${colour}"/>`);
    parts.push(`<text x="${width - pad.right + 10}" y="${pad.top + 16 + i * 18}" fill="${colour}">${ARM_TITLES[row.arm]}</text>`);
  });
  parts.push(`<text x="${width - pad.right + 10}" y="${pad.top + 16 + table.rows.length * 18 + 8}" fill="#666">bands: 95 % intervals</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

/** One wish combination's name rate and score in two experiments, and A − B paired by seed. */
export interface ComparisonRow {
  wishes: string;
  name: { a: Cell; b: Cell; diff: Cell } | null;
  score: { a: Cell; b: Cell; diff: Cell };
}

export interface WishComparison {
  step: number;
  seeds: number[];
  rows: ComparisonRow[];
  /**
   * Over the combinations but `exclude` (the child the demo model was tuned on): per seed the mean
   * over them of A and of B, so each seed is one paired draw.
   */
  across: { wishes: string[]; name: { a: Cell; b: Cell; diff: Cell } | null; score: { a: Cell; b: Cell; diff: Cell } } | null;
}

/**
 * Two experiments of the same wish combinations and seeds (one arm each, e.g. two OPD terms), paired
 * by seed: per combination the name rate and the score at `step`, and A − B. Only the seeds both
 * ran for a combination count; `exclude` leaves a combination out of the pooled row.
 */
export function wishComparison(a: readonly RunScores[], b: readonly RunScores[], step: number, exclude?: string): WishComparison {
  const key = (r: RunScores) => `${r.wishes}\u0000${r.seed}`;
  const inB = new Map(b.filter((r) => r.wishes && at(r, step) !== undefined).map((r) => [key(r), r]));
  const pairs = a
    .filter((r) => r.wishes && at(r, step) !== undefined && inB.has(key(r)))
    .map((r) => ({ wishes: r.wishes!, seed: r.seed, a: r, b: inB.get(key(r))! }));
  const triple = (xa: number[], xb: number[]) => ({ a: cell(xa)!, b: cell(xb)!, diff: cell(xa.map((x, i) => x - xb[i]))! });
  const named = (ps: typeof pairs) => {
    const xa = ps.map((p) => rateAt(p.a, step, wishRateKey('name')));
    const xb = ps.map((p) => rateAt(p.b, step, wishRateKey('name')));
    return xa.every((x) => x !== undefined) && xb.every((x) => x !== undefined) ? { xa: xa as number[], xb: xb as number[] } : null;
  };
  const combos = [...new Set(pairs.map((p) => p.wishes))];
  const rows = combos.map((wishes): ComparisonRow => {
    const ps = pairs.filter((p) => p.wishes === wishes).sort((x, y) => x.seed - y.seed);
    const n = named(ps);
    return {
      wishes,
      name: n && triple(n.xa, n.xb),
      score: triple(
        ps.map((p) => at(p.a, step)!),
        ps.map((p) => at(p.b, step)!),
      ),
    };
  });
  const pooled = combos.filter((w) => w !== exclude);
  // A seed joins the pooled row only where it ran every pooled combination, so each draw averages the same children.
  const seeds = [...new Set(pairs.map((p) => p.seed))].sort((x, y) => x - y);
  const full = seeds.filter((s) => pooled.every((w) => pairs.some((p) => p.seed === s && p.wishes === w)));
  let across: WishComparison['across'] = null;
  if (pooled.length > 1 && full.length) {
    const perSeed = (pick: (ps: typeof pairs) => { xa: number[]; xb: number[] } | null) => {
      const sums = full.map((s) => pick(pairs.filter((p) => p.seed === s && pooled.includes(p.wishes))));
      if (sums.some((x) => x === null)) return null;
      const m = (xs: number[]) => xs.reduce((u, v) => u + v, 0) / xs.length;
      return triple(
        sums.map((x) => m(x!.xa)),
        sums.map((x) => m(x!.xb)),
      );
    };
    across = {
      wishes: pooled,
      name: perSeed(named),
      score: perSeed((ps) => ({ xa: ps.map((p) => at(p.a, step)!), xb: ps.map((p) => at(p.b, step)!) }))!,
    };
  }
  return { step, seeds, rows, across };
}

export function wishComparisonMarkdown(c: WishComparison, labels: readonly [string, string]): string {
  const [a, b] = labels;
  const header = ['wishes (pet / name / favourite)', `name: ${a}`, b, `${a} − ${b}`, `score: ${a}`, b, `${a} − ${b}`];
  const cells = (x: ComparisonRow['name']) => (x ? [withInterval(x.a), withInterval(x.b), withInterval(x.diff, signed)] : ['', '', '']);
  const lines = [`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  for (const r of c.rows) lines.push(`| ${[r.wishes, ...cells(r.name), ...cells(r.score)].join(' | ')} |`);
  if (c.across)
    lines.push(`| ${[`the ${c.across.wishes.length} children nothing was tuned on`, ...cells(c.across.name), ...cells(c.across.score)].join(' | ')} |`);
  lines.push(
    '',
    `At step ${c.step}, mean and 95 % bootstrap interval over seeds ${seedList(c.seeds)}; "${a} − ${b}" is paired by seed. The name is the share of ` +
      'evaluation stories that call the pet by its name; the score is the personalization score.' +
      (c.across ? ` The last row averages each seed's runs over ${c.across.wishes.join(', ')}, then pairs the seeds.` : ''),
  );
  return lines.join('\n');
}
