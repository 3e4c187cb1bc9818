/**
 * The reproduction's table and chart: personalization score per method at chosen steps, mean and
 * spread over seeds, in the shape of the paper's Table 3, as JSON, Markdown and an SVG line chart.
 * Pure functions of the evaluation records, so the README's table is generated, never typed.
 */
import { METHOD_TITLES, type MethodName } from '../rl/presets';

/** One run's evaluations: score by step. */
export interface RunScores {
  method: MethodName;
  seed: number;
  scores: { step: number; score: number }[];
}

export interface ReproductionCell {
  mean: number;
  /** Sample standard deviation over seeds (0 for one seed). */
  sd: number;
  min: number;
  max: number;
  perSeed: number[];
}

export interface ReproductionTable {
  steps: number[];
  seeds: number[];
  /** "base" is each seed's untrained policy (step 0; every method starts from it). */
  rows: { method: 'base' | MethodName; cells: (ReproductionCell | null)[] }[];
}

/** The paper's Table 3 (Qwen3-4B, GPT-4o simulators): base, then each method after 8 / 16 steps. */
export const PAPER_TABLE3: Record<'base' | MethodName, { 8: number; 16: number } | number> = {
  base: 0.17,
  binary: { 8: 0.25, 16: 0.23 },
  opd: { 8: 0.25, 16: 0.72 },
  combined: { 8: 0.76, 16: 0.81 },
};

function cell(values: number[]): ReproductionCell | null {
  if (!values.length) return null;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const sd = values.length > 1 ? Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1)) : 0;
  return { mean, sd, min: Math.min(...values), max: Math.max(...values), perSeed: values };
}

const at = (run: RunScores, step: number) => run.scores.find((s) => s.step === step)?.score;

export function reproductionTable(runs: readonly RunScores[], steps: readonly number[]): ReproductionTable {
  const seeds = [...new Set(runs.map((r) => r.seed))].sort((a, b) => a - b);
  const methods = [...new Set(runs.map((r) => r.method))];
  // The base is the untrained policy: step 0 of any run of that seed (all methods share it).
  const base = seeds
    .map((seed) =>
      at(
        runs.find((r) => r.seed === seed)!,
        0,
      ),
    )
    .filter((x): x is number => x !== undefined);
  const rows: ReproductionTable['rows'] = [{ method: 'base', cells: steps.map(() => cell(base)) }];
  for (const method of methods) {
    const mine = runs.filter((r) => r.method === method);
    rows.push({ method, cells: steps.map((step) => cell(mine.map((r) => at(r, step)).filter((x): x is number => x !== undefined))) });
  }
  return { steps: [...steps], seeds, rows };
}

const TITLES: Record<'base' | MethodName, string> = { base: 'Base (no training)', ...METHOD_TITLES };

function paperCell(method: 'base' | MethodName, step: number): string {
  const p = PAPER_TABLE3[method];
  if (typeof p === 'number') return p.toFixed(2);
  return step === 8 || step === 16 ? p[step].toFixed(2) : '';
}

export function reproductionMarkdown(table: ReproductionTable): string {
  const fmt = (c: ReproductionCell | null) => (c ? `${c.mean.toFixed(3)} ± ${c.sd.toFixed(3)}` : 'n/a');
  const paperSteps = table.steps.filter((s) => s === 8 || s === 16);
  const head = ['method', ...table.steps.map((s) => `step ${s}`), ...paperSteps.map((s) => `paper, step ${s}`)];
  const lines = [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`];
  for (const row of table.rows) {
    const cells = row.method === 'base' ? [fmt(row.cells[0]), ...row.cells.slice(1).map(() => '')] : row.cells.map(fmt);
    lines.push(`| ${[TITLES[row.method], ...cells, ...paperSteps.map((s) => paperCell(row.method, s))].join(' | ')} |`);
  }
  lines.push('', `Mean ± standard deviation over seeds ${table.seeds.join(', ')}; the paper's figures are Qwen3-4B with GPT-4o simulators.`);
  return lines.join('\n');
}

const COLOURS: Record<MethodName, string> = { binary: '#d95f02', opd: '#7570b3', combined: '#1b9e77' };

/** Mean score per method against step, each seed's range as a band; plain SVG, no script. */
export function reproductionSvg(runs: readonly RunScores[], o: { width?: number; height?: number } = {}): string {
  const width = o.width ?? 640;
  const height = o.height ?? 360;
  const pad = { left: 48, right: 120, top: 24, bottom: 40 };
  const steps = [...new Set(runs.flatMap((r) => r.scores.map((s) => s.step)))].sort((a, b) => a - b);
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
  const methods = [...new Set(runs.map((r) => r.method))];
  methods.forEach((method, i) => {
    const mine = runs.filter((r) => r.method === method);
    const points = steps
      .map((step) => {
        const values = mine.map((r) => at(r, step)).filter((v): v is number => v !== undefined);
        return values.length ? { step, mean: values.reduce((a, b) => a + b, 0) / values.length, min: Math.min(...values), max: Math.max(...values) } : null;
      })
      .filter((p) => p !== null);
    const colour = COLOURS[method];
    const band = [...points.map((p) => `${x(p.step)},${y(p.max)}`), ...points.reverse().map((p) => `${x(p.step)},${y(p.min)}`)].join(' ');
    points.reverse();
    parts.push(`<polygon points="${band}" fill="${colour}" fill-opacity="0.15"/>`);
    parts.push(`<polyline points="${points.map((p) => `${x(p.step)},${y(p.mean)}`).join(' ')}" fill="none" stroke="${colour}" stroke-width="2"/>`);
    for (const p of points) parts.push(`<circle cx="${x(p.step)}" cy="${y(p.mean)}" r="3" fill="${colour}"/>`);
    parts.push(`<text x="${width - pad.right + 10}" y="${pad.top + 16 + i * 18}" fill="${colour}">${TITLES[method]}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}
