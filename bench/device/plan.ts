/**
 * The device bench's workload and its time budget. A lent GPU gives a command 10 minutes and the
 * engine's speed there was never measured, so every measurement gets a share of what is left,
 * and a model whose creation or measurements would not fit is reported as skipped instead of
 * being cut into a figure that means something else.
 */
import { round } from '../lib/stats';
import type { Skipped } from '../lib/types';
import type { Workload } from '../lib/workload';

/** Timed figures per model and format: prefill/decode at batch 1, at batch 16, a LoRA step. */
export const MEASUREMENTS_PER_CELL = 3;
/**
 * A measurement allowed `budgetMs` takes up to about twice that: warm-up calls (up to two, the
 * first compiling shaders) and the extra repetitions cheap ones earn (cheapMs, a quarter here).
 */
const SLACK = 2;
/** Below this per measurement, a 4B-shaped step cannot show even its warm-up. */
export const MIN_MEASUREMENT_MS = 2000;
/**
 * What creating random weights is assumed to cost before one creation was timed: a seeded draw
 * and its packing per parameter in JavaScript, then the upload (20 s for a 0.5B model).
 */
export const FIRST_GUESS_MS_PER_PARAM = 40e-6;

export interface MatmulSize {
  n: number;
  /** Products per timed repetition (lib/matmul.ts). */
  productsPerRep: number;
}

export interface DeviceWorkload extends Workload {
  /** Smallest first: each is tried only if the one before predicts it fits (matmulFits). */
  matmuls: MatmulSize[];
}

/** Most milliseconds one matmul size may take. */
export const MATMUL_BUDGET_MS = 20_000;

/**
 * Full: 128-token prompts (a short chat turn), 8 decode steps timed together per repetition, a LoRA step on 16 x 128 tokens
 * with 32 loss tokens each; matmuls at 1024^3 (npm run bench's size) and 4096^3, 8 products per
 * wait, which a GPU needs to be measured rather than its submit and read. --quick: tiny sizes for
 * a CPU emulator.
 * budgetMs is set per model by planCell.
 */
export function deviceWorkload(quick: boolean): DeviceWorkload {
  return {
    quick,
    promptTokens: quick ? 8 : 128,
    decodeSteps: quick ? 4 : 8,
    batches: [1, 16],
    reps: 3,
    maxReps: quick ? 5 : 10,
    cheapMs: 0,
    train: { batch: 16, completionTokens: quick ? 4 : 32 },
    matmulN: quick ? 256 : 4096,
    matmuls: quick
      ? [
          { n: 128, productsPerRep: 1 },
          { n: 256, productsPerRep: 1 },
        ]
      : [
          { n: 1024, productsPerRep: 1 },
          { n: 4096, productsPerRep: 8 },
        ],
    budgetMs: 0,
  };
}

export interface CellPlan {
  /** What creating this model's weights is expected to take. */
  createEstimateMs: number;
  /** Most milliseconds one of its measurements may take (Workload.budgetMs). */
  budgetMs: number;
  cheapMs: number;
}

/**
 * The next model's share of the time left: every model still to run (this one first) is first
 * given its expected creation time, and what remains is split among them by parameter count,
 * since prefill and training work grow with it, then evenly among the model's measurements; at
 * least MIN_MEASUREMENT_MS each. A model that cannot get that much even alone is skipped (the
 * models after it may still be smaller). `params` lists the parameter counts of the models still
 * to run, this one first.
 */
export function planCell(leftMs: number, params: number[], msPerParam: number): CellPlan | Skipped {
  const createEstimateMs = params[0] * msPerParam;
  const creations = params.reduce((s, p) => s + p * msPerParam, 0);
  const share = params[0] / params.reduce((s, p) => s + p, 0);
  if (leftMs - createEstimateMs < MEASUREMENTS_PER_CELL * SLACK * MIN_MEASUREMENT_MS) {
    return {
      skipped:
        `over the run's time budget: ${(leftMs / 1000).toFixed(0)} s were left, and creating its weights was expected to take ` +
        `~${(createEstimateMs / 1000).toFixed(0)} s plus ${MEASUREMENTS_PER_CELL} measurements of at least ${MIN_MEASUREMENT_MS / 1000} s (raise --budget)`,
    };
  }
  const budgetMs = Math.max(MIN_MEASUREMENT_MS, ((leftMs - creations) * share) / (MEASUREMENTS_PER_CELL * SLACK));
  return { createEstimateMs, budgetMs: Math.round(budgetMs), cheapMs: Math.round(budgetMs / 4) };
}

/**
 * Whether the next matmul size fits its budget at the rate the previous size ran: one warm-up
 * repetition of a 4096^3 x 8 on a CPU emulator would take ten minutes, and nothing can stop it.
 */
export function matmulFits(prev: MatmulSize & { gflops: number }, next: MatmulSize, reps: number, budgetMs: number): true | Skipped {
  const repMs = (2 * next.n ** 3 * next.productsPerRep) / (prev.gflops * 1e9) / 1e-3;
  // The repetitions and up to two warm-ups.
  if (repMs * (reps + 2) <= budgetMs) return true;
  return {
    skipped:
      `over the time budget: at the ${prev.n}^3 rate (${prev.gflops} GFLOP/s) a repetition of ${next.productsPerRep} ${next.n}^3 products ` +
      `would take ~${(repMs / 1000).toFixed(1)} s, so ${reps} and the warm-ups ~${((repMs * (reps + 2)) / 1000).toFixed(0)} s, more than the ${budgetMs / 1000} s allowed`,
  };
}

/** The creation rate to plan the next models with: the slowest seen so far, or the first guess. */
export function msPerParam(seen: { ms: number; params: number }[]): number {
  return seen.length ? Math.max(...seen.map((s) => s.ms / s.params)) : FIRST_GUESS_MS_PER_PARAM;
}

/** Floating-point operations of a prefill, from the projection and LM-head work (lib/work.ts). */
export function gflopsFrom(macsPerToken: number, tokensPerS: number): number {
  return round((2 * macsPerToken * tokensPerS) / 1e9);
}
