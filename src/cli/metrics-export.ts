/**
 * Per-step metrics under the names Hugging Face TRL's trainers log (as W&B and TensorBoard show
 * them: `train/loss`, `train/kl`, `train/clip_ratio/low_mean`, ...), so a run made here can sit
 * beside a TRL or slime run in the same dashboard or notebook. Every series the lab charts is
 * here: those TRL has a name for take it; the method's own (votes, hint acceptance, OPD's
 * advantage gap) keep the lab's meaning under a `train/` name that says it. The run file keeps
 * the lab's own names.
 */
import type { EvaluationRecord, RunRecord } from '../rl/records';
import { stepSeries, type StepPoint } from '../storage/step-series';

/** TRL's name for each charted step series (W&B's `train/` section). */
export const TRL_NAMES: Readonly<Record<Exclude<keyof StepPoint, 'step' | 'version' | 'ts' | 'skipped'>, string>> = {
  loss: 'train/loss',
  kl: 'train/kl',
  entropy: 'train/entropy',
  clipFracLow: 'train/clip_ratio/low_mean',
  clipFracHigh: 'train/clip_ratio/high_mean',
  meanReward: 'train/reward',
  logpGap: 'train/sampling/sampling_logp_difference/mean',
  samples: 'train/num_samples',
  meanAbsAdv: 'train/advantages/abs_mean',
  votePos: 'train/votes/positive_frac',
  voteNeg: 'train/votes/negative_frac',
  voteZero: 'train/votes/zero_frac',
  opdAcceptance: 'train/opd/hint_accept_rate',
  opdGap: 'train/opd/advantage_gap_mean',
  dropped: 'train/dropped_turns',
  genTokensPerSec: 'train/generation_tokens_per_second',
  trainTokensPerSec: 'train/train_tokens_per_second',
};

/** One logged step: `train/global_step` (TRL's step axis: updates done) and its values. */
export type MetricsRow = Record<string, number | string | null>;

/**
 * One row per optimizer step (train_step's `step` counts updates done, as TRL's global step),
 * evaluations merged into the row of the step they followed; a step-0 evaluation gets a row of
 * its own. Values the engine could not compute are null, not 0.
 */
export function trlMetricRows(records: readonly RunRecord[], o: { learningRate?: number } = {}): MetricsRow[] {
  const rows = new Map<number, MetricsRow>();
  const row = (step: number) => {
    let r = rows.get(step);
    if (!r) rows.set(step, (r = { 'train/global_step': step }));
    return r;
  };
  const byStep = new Map(records.flatMap((r) => (r.kind === 'train_step' ? [[r.step, r] as const] : [])));
  let numTokens = 0;
  for (const point of stepSeries(records)) {
    const r = row(point.step);
    for (const [field, name] of Object.entries(TRL_NAMES)) r[name] = point[field as keyof typeof TRL_NAMES];
    const stats = byStep.get(point.step)?.stats;
    numTokens += stats?.tokens ?? 0;
    r['train/grad_norm'] = finiteOrNull(stats?.gradNorm);
    r['train/policy_loss'] = finiteOrNull(stats?.policyLoss);
    // TRL's num_tokens counts every token trained so far; step_time is in seconds.
    r['train/num_tokens'] = numTokens;
    r['train/step_time'] = typeof stats?.stepMs === 'number' && Number.isFinite(stats.stepMs) ? stats.stepMs / 1000 : null;
    if (o.learningRate !== undefined) r['train/learning_rate'] = o.learningRate;
    r['train/skipped'] = point.skipped;
  }
  for (const e of records.filter((x): x is EvaluationRecord => x.kind === 'evaluation')) {
    const r = row(e.step ?? 0);
    for (const [key, value] of Object.entries(e.scores)) r[`eval/${e.name}${key === 'score' || key === e.name ? '' : `/${key}`}`] = value;
  }
  return [...rows.values()].sort((a, b) => (a['train/global_step'] as number) - (b['train/global_step'] as number));
}

function finiteOrNull(x: number | null | undefined): number | null {
  return typeof x === 'number' && Number.isFinite(x) ? x : null;
}

/** The rows as JSON lines, one object per step, as W&B's history export reads them. */
export function metricsJsonl(rows: readonly MetricsRow[]): string {
  return rows.map((r) => JSON.stringify(r) + '\n').join('');
}

/**
 * The rows as CSV (RFC 4180): one column per name any row has, `train/global_step` first, an
 * empty cell where a row has no value, and text cells (a skip reason) quoted. A text cell that a
 * spreadsheet would read as a formula (an imported run's text is untrusted) starts with `'`.
 */
export function metricsCsv(rows: readonly MetricsRow[]): string {
  const columns = ['train/global_step', ...new Set(rows.flatMap((r) => Object.keys(r)).filter((k) => k !== 'train/global_step'))];
  const cell = (v: number | string | null | undefined) => {
    if (v === null || v === undefined) return '';
    if (typeof v === 'number') return String(v);
    const text = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\n') + '\n';
}
