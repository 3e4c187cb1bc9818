/**
 * What every measurement runs: one workload object, chosen once by the Node side and handed to
 * the page, so the engine in Node, the engine in the browser and the peer see the same token
 * ids and shapes.
 */
import { mulberry32 } from '../../src/gpu/random';

export interface Workload {
  quick: boolean;
  promptTokens: number;
  /** Consecutive decode steps timed together as one repetition of the decode rate. */
  decodeSteps: number;
  batches: number[];
  /** Timed repetitions of prefill, training steps and matmul products, at least (decode: one). */
  reps: number;
  /** Up to this many repetitions when they fit in `cheapMs`. */
  maxReps: number;
  cheapMs: number;
  /**
   * Training sequences have the same shape as the largest inference batch (batch x
   * promptTokens tokens), so the train/prefill ratio compares like with like.
   */
  train: { batch: number; completionTokens: number };
  matmulN: number;
  /** Most milliseconds one measurement may take; see warmUp() in stats.ts. */
  budgetMs: number;
}

export function workloadFor(quick: boolean, budgetS?: number): Workload {
  return {
    quick,
    promptTokens: quick ? 16 : 32,
    decodeSteps: quick ? 4 : 8,
    batches: [1, 16],
    reps: 3,
    maxReps: 16,
    cheapMs: 2000,
    train: { batch: 16, completionTokens: quick ? 4 : 8 },
    matmulN: quick ? 256 : 1024,
    budgetMs: (budgetS ?? (quick ? 20 : 60)) * 1000,
  };
}

/**
 * Deterministic prompt ids, the same for every runner. Ids 0-2 are often special (unk, bos,
 * eos) and very high ids are special in Qwen vocabularies, so ids come from [3, 32000).
 * Sequence 0 of every batch is the same, so batch 1 is a prefix of batch 16.
 */
export function promptIds(batch: number, tokens: number, vocabSize: number): number[][] {
  const hi = Math.min(vocabSize, 32000);
  return Array.from({ length: batch }, (_, b) => {
    const r = mulberry32(1000 + b);
    return Array.from({ length: tokens }, () => 3 + Math.floor(r() * (hi - 3)));
  });
}
