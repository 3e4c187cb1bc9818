/**
 * The shape of the benchmark's JSON. Shared by the Node side and the bench page, so that both
 * halves of a run report the same fields and the ratios can be computed without guessing.
 * Rates are per second; byte counts are what the backend's memory() reports.
 */
import type { WeightFormat } from '../../src/gpu/quant';

/** Why a figure is missing. Never omitted silently: a reader must see what was not measured. */
export interface Skipped {
  skipped: string;
}

export type Maybe<T> = T | Skipped;

export function isSkipped(x: unknown): x is Skipped {
  return typeof x === 'object' && x !== null && 'skipped' in x;
}

/** A median over `reps` timed repetitions, taken after the warm-up calls. */
export interface Rate {
  median: number;
  min: number;
  max: number;
  reps: number;
  warmups: number;
}

export interface InferenceCell {
  batch: number;
  promptTokens: number;
  /** Time to the first token of a left-padded batch: prefill plus the first greedy pick. */
  prefillTokensPerS: Rate;
  /** Batch tokens per decode step; every step after the first is one repetition. */
  decodeTokensPerS: Rate;
}

export interface TrainingCell {
  batch: number;
  /** Prompt plus completion tokens of every sequence: what one step runs forward and backward. */
  tokensPerStep: number;
  /** Completion tokens, the ones the PPO loss covers. */
  lossTokensPerStep: number;
  lora: { rank: number; targets: string[] };
  tokensPerS: Rate;
  /** tokensPerS over the engine's own prefill rate on a batch of the same shape (mark: 0.33). */
  ratioToPrefill: Maybe<number>;
  /**
   * Projection and LM-head multiply-accumulates per token of a step over those of a prefill
   * (work.ts): 1 / workRatio is what ratioToPrefill reaches when both run at the same FLOP rate.
   */
  workRatio: number;
  /** ratioToPrefill * workRatio: the step's FLOP rate over prefill's (1 = as efficient). */
  relativeFlopRate: Maybe<number>;
  /** backend.memory().peak during a step, after resetPeakMemory(); largest over the repetitions. */
  peakBytes: number;
}

export interface LoadFigures {
  ms: number;
  /** The weight format the engine loaded (f32, like the peer's weights; see lib/engine.ts). */
  weightFormat: WeightFormat;
  /** Bytes of weights as the loader stored them. */
  weightBytes: number;
  /** backend.memory().allocated after loading, less what was allocated before. */
  allocatedBytes: number;
  /** backend.memory().peak while loading. */
  peakBytes: number;
}

export type BatchKey = `b${number}`;

export interface EngineRun {
  backend: 'cpu' | 'webgpu';
  where: 'node' | 'chromium';
  load: LoadFigures;
  inference: Record<BatchKey, Maybe<InferenceCell>>;
  /** Decode tokens/s at the largest batch over decode tokens/s at batch 1. */
  decodeBatchScaling: Maybe<number>;
  training: Maybe<TrainingCell>;
}

export interface PeerRun {
  library: string;
  device: 'webgpu' | 'wasm';
  dtype: 'fp32';
  load: { ms: number };
  inference: Record<BatchKey, Maybe<InferenceCell>>;
}

export interface MatmulCell {
  n: number;
  /** Products per timed repetition (each repetition ends in one read). */
  productsPerRep: number;
  gflops: Rate;
}

/** What the page reports about its WebGPU adapter (or why there is none). */
export interface AdapterReport {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  shaderF16: boolean;
  /** The engine's kernel family on this adapter (WebGPUBackendOptions.workgroupMemory). */
  kernels: 'workgroup-memory' | 'register-only';
}

/**
 * IndexedDB durability per training step (lib/durability.ts): the wall time of one step's
 * writes with the browser's default durability ("relaxed" in Chromium) for all, and with the
 * run row, step records and checkpoint strict, as the app writes them.
 */
export interface DurabilityCell {
  turnsPerStep: number;
  /** The checkpoint's safetensors bytes, saved once per step. */
  adapterBytes: number;
  transactionsPerStep: number;
  /** Of those, the strict ones in the app's mode: the checkpoint and the step's records. */
  strictTransactionsPerStep: number;
  msPerStep: { default: Rate; strict: Rate };
  /** Median strict minus median default: what strict durability costs a step. */
  extraMsPerStep: number;
}
