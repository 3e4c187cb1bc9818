/** The device bench's JSON, and the summary at its top that names each figure in one line. */
import type { WeightFormat } from '../../src/gpu/quant';
import type { ModelFigures } from '../lib/engine';
import type { MatmulCell, Maybe } from '../lib/types';
import { isSkipped } from '../lib/types';
import type { ShapeName } from './args';
import type { DeviceAdapter } from './gpu';
import type { Peak } from './peak';
import type { DeviceWorkload } from './plan';
import type { shapeSummary } from './shapes';

export interface FormatRun extends ModelFigures {
  format: WeightFormat;
  /** Most milliseconds each of its measurements was allowed (plan.ts planCell). */
  budgetMsPerMeasurement: number;
  create: {
    ms: number;
    estimateMs: number;
    /** backend.memory().allocated once the weights were on the device. */
    allocatedBytes: number;
  };
  /** Prefill's projection and LM-head FLOP rate at the largest batch (lib/work.ts), and its share of the peak. */
  prefillRate: Maybe<{ batch: number; gflops: number; shareOfPeak: Maybe<number> }>;
  /** backend.memory().peak over the creation and every measurement of this model. */
  peakBytes: number;
}

export interface DeviceMatmul extends MatmulCell {
  /** The median as TFLOP/s. */
  tflops: number;
  shareOfPeak: Maybe<number>;
}

export interface ShapeRun {
  shape: ReturnType<typeof shapeSummary>;
  formats: Partial<Record<WeightFormat, Maybe<FormatRun>>>;
}

export interface DeviceReport {
  benchmark: string;
  startedAt: string;
  durationS: number;
  /** False when the hard deadline cut the run short; the cells it did not reach say so. */
  complete: boolean;
  bundle: unknown;
  args: { quick: boolean; allowCpu: boolean; budgetS: number; seed: number };
  machine: Record<string, unknown>;
  adapter: DeviceAdapter;
  peak: Maybe<Peak>;
  workload: Omit<DeviceWorkload, 'budgetMs' | 'cheapMs'>;
  summary: Record<string, SummaryLine | { skipped: string }>;
  /** By size: n1024, n4096 (--quick: n128, n256). */
  matmul: Record<string, Maybe<DeviceMatmul>>;
  models: Partial<Record<ShapeName, ShapeRun>>;
}

/** tokens/s medians of one model in one format, "-" where a figure was skipped. */
export interface SummaryLine {
  prefillTokensPerS: Record<string, number | '-'>;
  decodeTokensPerS: Record<string, number | '-'>;
  trainTokensPerS: number | '-';
  peakMiB: number;
}

const MiB = 2 ** 20;

export function summaryLine(run: Maybe<FormatRun>): SummaryLine | { skipped: string } {
  if (isSkipped(run)) return run;
  const prefill: Record<string, number | '-'> = {};
  const decode: Record<string, number | '-'> = {};
  for (const [key, cell] of Object.entries(run.inference)) {
    prefill[key] = isSkipped(cell) ? '-' : cell.prefillTokensPerS.median;
    decode[key] = isSkipped(cell) ? '-' : cell.decodeTokensPerS.median;
  }
  return {
    prefillTokensPerS: prefill,
    decodeTokensPerS: decode,
    trainTokensPerS: isSkipped(run.training) ? '-' : run.training.tokensPerS.median,
    peakMiB: Math.round((run.peakBytes / MiB) * 10) / 10,
  };
}

/** "0.5b q4" -> its summary line, in the order the models were measured. */
export function summarize(models: DeviceReport['models']): DeviceReport['summary'] {
  const out: DeviceReport['summary'] = {};
  for (const [shape, run] of Object.entries(models)) {
    for (const [format, cell] of Object.entries(run!.formats)) out[`${shape} ${format}`] = summaryLine(cell!);
  }
  return out;
}
