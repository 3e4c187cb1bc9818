/**
 * Timing helpers: medians, and warm-ups that also decide whether a measurement fits its time
 * budget. On a software adapter (SwiftShader) one decode step of a 152k-vocabulary model takes
 * seconds, so a fixed repetition count could run for an hour; a measurement that would not fit
 * is reported as skipped, with the warm-up time that showed it, instead of being shortened
 * into a number that means something else.
 */
import type { Rate, Skipped } from './types';

export function now(): number {
  return performance.now();
}

export async function timeMs(fn: () => Promise<unknown>): Promise<number> {
  const t0 = now();
  await fn();
  return now() - t0;
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Rounds to 4 significant digits: the JSON is read by people, and timings are not that exact. */
export function round(x: number): number {
  return x === 0 || !Number.isFinite(x) ? x : Number(x.toPrecision(4));
}

export function rate(samples: number[], warmups: number): Rate {
  return {
    median: round(median(samples)),
    min: round(Math.min(...samples)),
    max: round(Math.max(...samples)),
    reps: samples.length,
    warmups,
  };
}

export interface WarmedUp {
  warmups: number;
  /** Duration of the last warm-up call. */
  ms: number;
}

/**
 * Cheap measurements take more repetitions, up to `max`, while they fit in `targetMs`: a model
 * that decodes a step in a millisecond gets a median worth reading, at no real cost.
 */
export function repsFor(warm: WarmedUp, min: number, max: number, targetMs: number): number {
  return Math.max(min, Math.min(max, Math.floor(targetMs / Math.max(warm.ms, 1e-3))));
}

/**
 * Runs `fn` unmeasured until one call shows that `calls` more fit in `budgetMs`. The first call
 * compiles shaders and fills caches, so a slow first call earns a second try, unless it was so
 * slow that no compile time could explain it (the second call would only waste minutes).
 */
export async function warmUp(fn: () => Promise<unknown>, calls: number, budgetMs: number): Promise<WarmedUp | Skipped> {
  const seen: number[] = [];
  for (let i = 0; i < 2; i++) {
    const ms = await timeMs(fn);
    seen.push(ms);
    if (ms * calls <= budgetMs) return { warmups: i + 1, ms };
    if (ms * calls > COMPILE_FACTOR * budgetMs) break;
  }
  const shown = seen.map((ms) => `${(ms / 1000).toFixed(1)} s`).join(', then ');
  return {
    skipped:
      `over the time budget: a warm-up call took ${shown}, so ~${calls} measured calls would take ` +
      `~${((seen[seen.length - 1] * calls) / 1000).toFixed(0)} s, more than the ${(budgetMs / 1000).toFixed(0)} s allowed per measurement (raise --budget)`,
  };
}

/** First calls on SwiftShader were seen up to ~3x slower than later ones (shader compilation). */
const COMPILE_FACTOR = 3;
