/**
 * Intervals for a reproduction over a handful of seeds: the mean with a 95 % percentile
 * bootstrap interval, for one arm's scores or for the paired differences of two arms on the same
 * seeds. The resampling is seeded, so a report is reproducible to the digit.
 */
import { mulberry32 } from '../gpu/random';

export interface Interval {
  mean: number;
  /** The 2.5 % and 97.5 % percentiles of the bootstrap means. */
  lo: number;
  hi: number;
  n: number;
}

/** Resamples per interval: enough that the percentiles move by less than the third digit. */
const RESAMPLES = 10_000;

export function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * The mean of `values` with its 95 % bootstrap interval (n = 1: the value itself, no width).
 *
 * @throws RangeError for no values
 */
export function bootstrapMean(values: readonly number[], seed = 1): Interval {
  if (values.length === 0) throw new RangeError('bootstrapMean needs at least one value');
  const n = values.length;
  const m = mean(values);
  if (n === 1) return { mean: m, lo: m, hi: m, n };
  const rand = mulberry32(seed);
  const means = new Float64Array(RESAMPLES);
  for (let r = 0; r < RESAMPLES; r++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[Math.floor(rand() * n)];
    means[r] = sum / n;
  }
  means.sort();
  const q = (p: number) => means[Math.min(RESAMPLES - 1, Math.max(0, Math.round(p * (RESAMPLES - 1))))];
  return { mean: m, lo: q(0.025), hi: q(0.975), n };
}

/** Whether an interval of a difference leaves zero out: the data order the two arms. */
export function excludesZero(i: Interval): boolean {
  return i.lo > 0 || i.hi < 0;
}
