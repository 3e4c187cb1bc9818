/**
 * The engine's one compute interface. The model, generation, scoring and training are written
 * once against it; `CpuBackend` (the reference, plain TypeScript) and `WebGPUBackend` (WGSL
 * kernels) implement it. Every op has a forward and, where training needs it, a backward
 * (llm.c's habit), and every WebGPU kernel is tested against the CPU op of the same name.
 *
 * Shapes are row-major. Ops return new tensors and never mutate inputs, except the ones named
 * `...InPlace` and `ropeWriteCache` (which fills the caches). Integer inputs (token ids,
 * positions) travel as Int32Array.
 */

import { EngineError } from './errors';
import type { Picks } from './ops/sample';
import type { WeightFormat } from './quant';
import type { SamplingOptions } from './sampler';
import type { WeightSource } from '../models/safetensors';

export interface Tensor {
  readonly shape: readonly number[];
  /** Number of elements. */
  readonly size: number;
  /** How the values are stored: f32, or a weight format (only weights are packed). */
  readonly dtype: WeightFormat;
}

/** Where a batch of new tokens sits in a KV cache of `maxT` slots per sequence. */
export interface AttentionShape {
  /** Sequences in the batch. */
  B: number;
  /** New tokens per sequence in this call (the batch is padded to the same T). */
  T: number;
  /** Cache slot of the first new token; queries sit at slots start..start+T-1. */
  start: number;
  /** Slots per sequence in the cache tensors [B, numKvHeads, maxT, headDim]. */
  maxT: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  /**
   * Left padding of each sequence: slots below padLeft[b] hold padding and are never attended.
   * Left-aligned batches let every sequence decode into the same slot.
   */
  padLeft: Int32Array;
}

// WeightSource lives with the checkpoint reader that makes most of them (src/models/safetensors.ts).
export type { WeightSource };

/** Values per row of the first dimension: the unit a split, a block or a row read never cuts. */
export function rowWidth(shape: readonly number[]): number {
  return shape.length === 0 ? 1 : sizeOf(shape) / (shape[0] || 1);
}

/** Refuses a packed format for anything but a matrix (the formats pack rows of a matrix in groups). */
export function checkWeightShape(shape: readonly number[], format: WeightFormat): void {
  if (format !== 'f32' && shape.length !== 2) throw new EngineError(`a ${format} weight must be a matrix [rows, cols], got [${shape}]`);
}

/** A WeightSource over values already in memory. */
export function arraySource(data: Float32Array, shape: readonly number[]): WeightSource {
  if (data.length !== sizeOf(shape)) throw new EngineError(`weight of shape [${shape}] needs ${sizeOf(shape)} values, got ${data.length}`);
  const width = rowWidth(shape);
  return { shape, rows: (start, count) => data.subarray(start * width, (start + count) * width) };
}

/** Values converted at a time when a weight is stored (4 MB of f32). */
const BLOCK_VALUES = 1 << 20;

/**
 * Visits rows [start, start + rows) of a weight source a block at a time; `at` is the block's
 * first row counted from `start`.
 */
export function eachRowBlock(src: WeightSource, start: number, rows: number, visit: (data: Float32Array, at: number) => void): void {
  const width = rowWidth(src.shape);
  const per = Math.max(1, Math.floor(BLOCK_VALUES / Math.max(1, width)));
  for (let r = 0; r < rows; r += per) {
    const n = Math.min(per, rows - r);
    const data = src.rows(start + r, n);
    if (data.length !== n * width) throw new EngineError(`a weight source gave ${data.length} values for ${n} rows of ${width}`);
    visit(data, r);
  }
}

export interface AdamWParams {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** 1-based step count, for bias correction. */
  step: number;
  /** Multiplies the gradient first (global-norm clipping and accumulation averaging). */
  gradScale: number;
}

/**
 * The backends a command or run names: cpu is the fast CPU backend (cpu-fast/, SIMD kernels on
 * every core), cpu-reference the plain-loop oracle it and the WebGPU kernels are checked against.
 */
export const BACKEND_NAMES = ['cpu', 'cpu-reference', 'webgpu'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

/** What a backend computes on, whichever BackendName loaded it. */
export type BackendKind = 'cpu' | 'webgpu';

export interface Backend {
  readonly kind: BackendKind;

  tensor(data: Float32Array, shape: readonly number[]): Tensor;
  /**
   * A long-lived weight matrix [rows, cols] stored in `format` (quant.ts): f32, f16, or q8 / q4
   * groups with f16 scales. Every op that takes a weight (linear, matmul's b, embedding,
   * gatherRows) reads any format and computes in f32 with the stored values; other ops and
   * in-place updates need f32.
   */
  weight(src: WeightSource, format: WeightFormat): Tensor;
  zeros(shape: readonly number[]): Tensor;
  read(t: Tensor): Promise<Float32Array>;
  dispose(t: Tensor): void;
  /** Bytes currently allocated and the peak since creation or the last reset. */
  memory(): { allocated: number; peak: number };
  resetPeakMemory(): void;

  /** table [V, D], ids [N] -> [N, D]. */
  embedding(table: Tensor, ids: Int32Array): Tensor;
  /** Rows of x picked by index: x [R, D], rows [N] -> [N, D]. */
  gatherRows(x: Tensor, rows: Int32Array): Tensor;
  /** The backward of gatherRows: src [N, D] placed at `rows` of a zero [R, D] (rows distinct). */
  scatterRows(src: Tensor, rows: Int32Array, R: number): Tensor;
  /** Transposed flags as in BLAS: op(a) [M, K] @ op(b) [K, N] -> [M, N]. */
  matmul(a: Tensor, b: Tensor, transA: boolean, transB: boolean): Tensor;
  /** c += scale * op(a) @ op(b): a gradient summed where it is produced, with no temporary. */
  matmulAddInPlace(c: Tensor, a: Tensor, b: Tensor, transA: boolean, transB: boolean, scale?: number): void;
  /**
   * nn.Linear: x [M, K], w [N, K], bias [N] -> x w^T + bias, [M, N]; plus `residual` [M, N]
   * when given (a transformer's skip connection, added as the output is stored).
   */
  linear(x: Tensor, w: Tensor, bias?: Tensor, residual?: Tensor): Tensor;
  /** a + scale * b, same shapes. */
  add(a: Tensor, b: Tensor, scale?: number): Tensor;
  /** a += scale * b. */
  addInPlace(a: Tensor, b: Tensor, scale?: number): void;

  /** RMSNorm over rows of width w.size (also per head, for Qwen3's q/k norm). */
  rmsnorm(x: Tensor, w: Tensor, eps: number): Tensor;
  rmsnormBackward(x: Tensor, w: Tensor, eps: number, dy: Tensor): Tensor;
  /** dw += d(sum dy * rmsnorm(x, w)) / dw; the row width is dw.size (full fine-tuning). */
  rmsnormWeightGradAddInPlace(dw: Tensor, x: Tensor, eps: number, dy: Tensor): void;
  /** The embedding's backward: dTable [V, D] row ids[n] += dOut [N, D] row n (ids may repeat). */
  embeddingBackwardAddInPlace(dTable: Tensor, ids: Int32Array, dOut: Tensor): void;

  /**
   * Rotate-half RoPE on x [N, heads * headDim] with positions [N]; `inverse` rotates by
   * -angle, which is the backward pass (a rotation's transpose is its inverse).
   */
  rope(x: Tensor, positions: Int32Array, headDim: number, theta: number, inverse?: boolean): Tensor;

  /**
   * One layer's attention inputs at once: returns rope(q) and writes rope(k) and v into the
   * caches at the batch's slots (one GPU launch where rope, rope and two copies would take four).
   */
  ropeWriteCache(x: { q: Tensor; k: Tensor; v: Tensor; kCache: Tensor; vCache: Tensor }, positions: Int32Array, theta: number, shape: AttentionShape): Tensor;
  /** Causal GQA attention of q [B*T, numHeads*headDim] over the caches -> [B*T, numHeads*headDim]. */
  attention(q: Tensor, kCache: Tensor, vCache: Tensor, shape: AttentionShape): Tensor;
  /**
   * Gradients of attention with start = 0 and maxT = T (training has no cache):
   * dq [B*T, numHeads*headDim], dk and dv [B*T, numKvHeads*headDim].
   */
  attentionBackward(q: Tensor, k: Tensor, v: Tensor, dOut: Tensor, shape: AttentionShape): { dq: Tensor; dk: Tensor; dv: Tensor };

  /** silu(gate) * up. */
  siluMul(gate: Tensor, up: Tensor): Tensor;
  siluMulBackward(gate: Tensor, up: Tensor, dh: Tensor): { dGate: Tensor; dUp: Tensor };

  /** logits [R, V], targets [R] -> log p(target) [R] and the entropy of each row [R]. */
  logSoftmaxGather(logits: Tensor, targets: Int32Array): { logp: Tensor; entropy: Tensor };
  /** d(sum_r dlogp[r] * logp[r]) / dlogits. */
  logSoftmaxGatherBackward(logits: Tensor, targets: Int32Array, dlogp: Tensor): Tensor;
  /**
   * Optional: logits [R, V], targets [R, k] (k a row) -> log p(target) [R, k] in one pass over
   * each row, where logSoftmaxGather takes a pass per column (on WebGPU also a read back per
   * column). gather-columns.ts uses it where a backend has it (the fast CPU backend, WebGPU) and
   * a gather per column elsewhere (the CPU reference, which is what the others are checked against).
   */
  logSoftmaxGatherMany?(logits: Tensor, targets: Int32Array, k: number): Tensor;
  /** Optional, with logSoftmaxGatherMany: d(sum_{r,j} dlogp[r, j] * logp[r, j]) / dlogits. */
  logSoftmaxGatherManyBackward?(logits: Tensor, targets: Int32Array, k: number, dlogp: Tensor): Tensor;
  /**
   * The reverse-KL distillation term over the whole vocabulary (ops/reverse-kl.ts): logits [R, V]
   * and the teacher's log-probs [R, V] -> KL(softmax(logits_r) || teacher_r) per row [R].
   */
  reverseKl(logits: Tensor, teacherLogp: Tensor): Tensor;
  /** d(sum_r dkl[r] * KL_r) / dlogits [R, V]. */
  reverseKlBackward(logits: Tensor, teacherLogp: Tensor, dkl: Tensor): Tensor;
  /**
   * The next token of each row of logits [R, V] and its raw log-prob (ops/sample.ts defines the
   * pick): greedy, or sampled with `uniforms[r]` in [0, 1] for row r. Only 2R numbers are read.
   */
  sample(logits: Tensor, o: SamplingOptions, uniforms: Float32Array): Promise<Picks>;

  /** Sum of squares of every element of every tensor (a global gradient norm: one read). */
  sumSquares(ts: readonly Tensor[]): Promise<number>;
  /** AdamW on param with its grad and moment buffers, all updated in place. */
  adamwInPlace(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, p: AdamWParams): void;
}

/** M, K, N of op(a) @ op(b), or an error naming the mismatch. */
export function matmulDims(a: Tensor, b: Tensor, transA: boolean, transB: boolean, op: string): { M: number; K: number; N: number } {
  if (a.shape.length !== 2 || b.shape.length !== 2) throw new EngineError(`${op}: needs 2-D operands, got [${a.shape}] and [${b.shape}]`);
  const [a0, a1] = a.shape;
  const [b0, b1] = b.shape;
  const [M, K] = transA ? [a1, a0] : [a0, a1];
  const [K2, N] = transB ? [b1, b0] : [b0, b1];
  if (K !== K2) throw new EngineError(`${op}: inner dimensions ${K} and ${K2} differ`);
  return { M, K, N };
}

export function sizeOf(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}
