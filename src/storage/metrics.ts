/**
 * Chart rows derived from the run log. Charts read these instead of scanning every record
 * (interactions carry token arrays and dominate the log), and since they are a pure function
 * of the records they are rebuilt, not copied, on import and on migration.
 */
import type { EvaluationRecord, RunRecord, TrainStepRecord } from '../rl';

/** One point of a chart: a train step's statistics or an evaluation's scores. */
export interface Metric {
  /** seq of the record it was derived from. */
  seq: number;
  kind: 'train_step' | 'evaluation';
  /** "train" for train steps, the evaluation's name otherwise. */
  name: string;
  step: number | null;
  version: number;
  ts: number;
  /** Train stats (loss, kl, clip fractions, ...) plus `samples`; or the evaluation's scores. */
  values: Record<string, number | null>;
  /** Why a train step was skipped; null otherwise. */
  skipped: string | null;
}

function trainMetric(seq: number, r: TrainStepRecord): Metric {
  return {
    seq,
    kind: 'train_step',
    name: 'train',
    step: r.step,
    version: r.version,
    ts: r.ts,
    values: { ...r.stats, samples: r.samples },
    skipped: r.skipped,
  };
}

function evaluationMetric(seq: number, r: EvaluationRecord): Metric {
  return { seq, kind: 'evaluation', name: r.name, step: r.step ?? null, version: r.version, ts: r.ts, values: { ...r.scores }, skipped: null };
}

/** The metric a record contributes, or null for records charts do not plot. */
export function metricOf(seq: number, record: RunRecord): Metric | null {
  if (record.kind === 'train_step') return trainMetric(seq, record);
  if (record.kind === 'evaluation') return evaluationMetric(seq, record);
  return null;
}
