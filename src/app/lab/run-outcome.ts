/**
 * What a run came to, in one line for its page and its row on Runs, the way a run table
 * summarises a run: training steps done, the last evaluation's score (and the first's, the
 * untrained base), and how long it ran. Read from the chart rows (storage's metrics), which a
 * run's records give too, so a stored run, an imported one and the one just finished say the same.
 */
import type { RunRecord } from '../../rl/records';
import type { Metric } from '../../storage/index';
import { metricOf } from '../../storage/metrics';

type Point = Pick<Metric, 'kind' | 'ts' | 'values'>;

export interface RunOutcome {
  /** Training steps logged, skipped ones included. */
  steps: number;
  /** The last evaluation's score (tool calls: accuracy); null without a scored evaluation. */
  score: number | null;
  /** The first evaluation's score: the policy before training. */
  baseScore: number | null;
  /** From the run's creation to its last training step or evaluation; null before either. */
  durationMs: number | null;
}

const scoreOf = (p: Point): number | null => {
  const v = p.values.score ?? p.values.accuracy;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
};

export function runOutcome(points: Iterable<Point>, created: number): RunOutcome {
  let steps = 0;
  let score: number | null = null;
  let baseScore: number | null = null;
  let evaluated = false;
  let last: number | null = null;
  for (const p of points) {
    if (p.kind === 'train_step') steps++;
    else {
      const s = scoreOf(p);
      if (!evaluated) baseScore = s;
      evaluated = true;
      if (s !== null) score = s;
    }
    last = Math.max(last ?? p.ts, p.ts);
  }
  return { steps, score, baseScore, durationMs: last === null ? null : Math.max(0, last - created) };
}

/** A run's outcome from its records, through the chart rows storage would derive from them. */
export function recordsOutcome(records: readonly RunRecord[], created: number): RunOutcome {
  return runOutcome(
    records.flatMap((r) => metricOf(0, r) ?? []),
    created,
  );
}

/** "1 of 8 steps · score 0.25 (0.13 before training) · 5 s". `planned`: the steps the config asks for. */
export function outcomeText(o: RunOutcome, planned?: number): string {
  const parts = [planned ? `${o.steps} of ${planned} step${planned === 1 ? '' : 's'}` : `${o.steps} step${o.steps === 1 ? '' : 's'}`];
  if (o.score !== null) parts.push(`score ${o.score.toFixed(2)}${o.baseScore !== null && o.steps > 0 ? ` (${o.baseScore.toFixed(2)} before training)` : ''}`);
  else parts.push('no score');
  if (o.durationMs !== null) parts.push(formatDuration(o.durationMs));
  return parts.join(' · ');
}

/** "5 s", "3 min 20 s", "2 h 5 min": as precise as a glance at a run needs. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min${s % 60 ? ` ${s % 60} s` : ''}`;
  return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`;
}
