/**
 * The CPU reference backend: every op is the plain-loop function in ../ops, so this file only
 * adapts shapes. It is the oracle the WebGPU kernels are tested against, runs anywhere, and in
 * f64 mode gives finite differences the precision gradient checks need.
 */
import {
  checkWeightShape,
  eachRowBlock,
  matmulDims,
  rowWidth,
  sizeOf,
  type AdamWParams,
  type AttentionShape,
  type Backend,
  type Tensor,
  type WeightSource,
} from '../backend';
import { EngineError } from '../errors';
import { adamwUpdate } from '../ops/adamw';
import { attentionBackward, attentionForward, writeCacheForward } from '../ops/attention';
import { linearForward, matmulForward } from '../ops/matmul';
import { embeddingBackwardAdd } from '../ops/embedding';
import { rmsnormBackward, rmsnormForward, rmsnormWeightGradAdd } from '../ops/rmsnorm';
import { ropeForward } from '../ops/rope';
import { sampleRows, type Picks } from '../ops/sample';
import { reverseKlBackward, reverseKlForward } from '../ops/reverse-kl';
import { logSoftmaxGatherBackward, logSoftmaxGatherForward } from '../ops/softmax';
import { siluMulBackward, siluMulForward } from '../ops/swiglu';
import type { Arr } from '../ops/types';
import { decodeRows, encodeRows, storedWords, type PackedFormat, type WeightFormat } from '../quant';
import type { SamplingOptions } from '../sampler';

export class CpuTensor implements Tensor {
  readonly size: number;
  readonly dtype = 'f32';
  constructor(
    readonly data: Arr,
    readonly shape: readonly number[],
  ) {
    this.size = sizeOf(shape);
    if (this.size !== data.length) {
      throw new EngineError(`tensor of shape [${shape}] needs ${this.size} values, got ${data.length}`);
    }
  }
}

/**
 * A weight kept packed (f16, q8, q4; quant.ts) and decoded to f32 by each op that reads it, as
 * the GPU kernels dequantize on the fly: memory is what the format costs.
 */
export class CpuWeight implements Tensor {
  readonly size: number;
  constructor(
    readonly words: Uint32Array,
    readonly shape: readonly number[],
    readonly dtype: PackedFormat,
  ) {
    this.size = sizeOf(shape);
  }

  decode(): Float32Array {
    const [rows, width] = this.shape;
    return decodeRows(this.words, width, 0, rows, this.dtype);
  }
}

export class CpuBackend implements Backend {
  readonly kind = 'cpu' as const;
  private allocated = 0;
  private peak = 0;

  constructor(readonly precision: 'f32' | 'f64' = 'f32') {}

  protected make(data: Arr, shape: readonly number[]): CpuTensor {
    // Built before it is counted: a tensor whose shape is refused was never allocated.
    const t = this.wrap(data, shape);
    this.allocated += data.byteLength;
    this.peak = Math.max(this.peak, this.allocated);
    return t;
  }

  /** The tensor that holds an op's result (a subclass may move it into memory of its own). */
  protected wrap(data: Arr, shape: readonly number[]): CpuTensor {
    return new CpuTensor(data, shape);
  }

  /** Zeroed storage for n values. */
  protected arr(n: number): Arr {
    return this.precision === 'f64' ? new Float64Array(n) : new Float32Array(n);
  }

  /** Storage for n values that the caller writes in full: a subclass may skip the zeroing. */
  protected uninitialized(n: number): Arr {
    return this.arr(n);
  }

  tensor(data: Float32Array | Float64Array, shape: readonly number[]): CpuTensor {
    const copy = this.uninitialized(data.length);
    copy.set(data);
    return this.make(copy, shape);
  }

  weight(src: WeightSource, format: WeightFormat): Tensor {
    const shape = src.shape;
    checkWeightShape(shape, format);
    if (format === 'f32') {
      const out = this.uninitialized(sizeOf(shape));
      const width = rowWidth(shape);
      eachRowBlock(src, 0, shape.length ? shape[0] : 1, (data, at) => out.set(data, at * width));
      return this.make(out, shape);
    }
    const [rows, width] = shape;
    const words = new Uint32Array(storedWords(rows, width, format));
    eachRowBlock(src, 0, rows, (data, at) => encodeRows(data, width, at, format, words));
    this.allocated += words.byteLength;
    this.peak = Math.max(this.peak, this.allocated);
    return new CpuWeight(words, shape, format);
  }

  zeros(shape: readonly number[]): CpuTensor {
    return this.make(this.arr(sizeOf(shape)), shape);
  }

  async read(t: Tensor): Promise<Float32Array> {
    return Float32Array.from(tensorValues(t));
  }

  dispose(t: Tensor): void {
    this.allocated -= t instanceof CpuWeight ? t.words.byteLength : tensorValues(t).byteLength;
  }

  memory() {
    return { allocated: this.allocated, peak: this.peak };
  }

  resetPeakMemory(): void {
    this.peak = this.allocated;
  }

  embedding(table: Tensor, ids: Int32Array): Tensor {
    return this.gatherRows(table, ids);
  }

  gatherRows(x: Tensor, rows: Int32Array): Tensor {
    const D = x.shape[x.shape.length - 1];
    const R = x.size / D;
    const out = this.uninitialized(rows.length * D);
    // A packed table decodes just the rows asked for (an embedding lookup of a few tokens).
    const dense = x instanceof CpuWeight ? null : tensorValues(x);
    const row = (r: number) => (dense ? dense.subarray(r * D, (r + 1) * D) : decodeRows((x as CpuWeight).words, D, r, 1, (x as CpuWeight).dtype));
    rows.forEach((r, i) => {
      if (r < 0 || r >= R) throw new EngineError(`row ${r} out of range [0, ${R})`);
      out.set(row(r), i * D);
    });
    return this.make(out, [rows.length, D]);
  }

  scatterRows(src: Tensor, rows: Int32Array, R: number): Tensor {
    const D = src.shape[src.shape.length - 1];
    const out = this.arr(R * D);
    const s = tensorValues(src);
    rows.forEach((r, i) => out.set(s.subarray(i * D, (i + 1) * D), r * D));
    return this.make(out, [R, D]);
  }

  matmul(a: Tensor, b: Tensor, transA: boolean, transB: boolean): Tensor {
    const { M, K, N } = matmulDims(a, b, transA, transB, 'matmul');
    return this.make(matmulForward(tensorValues(a), tensorValues(b), M, K, N, transA, transB), [M, N]);
  }

  matmulAddInPlace(c: Tensor, a: Tensor, b: Tensor, transA: boolean, transB: boolean, scale = 1): void {
    const { M, K, N } = matmulDims(a, b, transA, transB, 'matmulAddInPlace');
    if (c.size !== M * N) throw new EngineError(`matmulAddInPlace: c has ${c.size} values for [${M}, ${N}]`);
    const y = matmulForward(tensorValues(a), tensorValues(b), M, K, N, transA, transB);
    const out = m(c, 'matmulAddInPlace');
    for (let i = 0; i < y.length; i++) out[i] += scale * y[i];
  }

  linear(x: Tensor, w: Tensor, bias?: Tensor, residual?: Tensor): Tensor {
    const [N, K] = w.shape;
    const M = x.size / K;
    const y = linearForward(tensorValues(x), tensorValues(w), bias && tensorValues(bias), M, K, N);
    if (residual) {
      if (residual.size !== M * N) throw new EngineError(`linear: residual has ${residual.size} values for [${M}, ${N}]`);
      const r = tensorValues(residual);
      for (let i = 0; i < y.length; i++) y[i] += r[i];
    }
    return this.make(y, [M, N]);
  }

  add(a: Tensor, b: Tensor, scale = 1): Tensor {
    const out = this.arr(a.size);
    const x = tensorValues(a);
    const y = tensorValues(b);
    for (let i = 0; i < out.length; i++) out[i] = x[i] + scale * y[i];
    return this.make(out, a.shape);
  }

  addInPlace(a: Tensor, b: Tensor, scale = 1): void {
    const x = m(a, 'addInPlace');
    const y = tensorValues(b);
    for (let i = 0; i < x.length; i++) x[i] += scale * y[i];
  }

  rmsnorm(x: Tensor, w: Tensor, eps: number): Tensor {
    return this.make(rmsnormForward(tensorValues(x), tensorValues(w), eps), x.shape);
  }

  rmsnormBackward(x: Tensor, w: Tensor, eps: number, dy: Tensor): Tensor {
    return this.make(rmsnormBackward(tensorValues(x), tensorValues(w), eps, tensorValues(dy)), x.shape);
  }

  rmsnormWeightGradAddInPlace(dw: Tensor, x: Tensor, eps: number, dy: Tensor): void {
    if (x.size % dw.size !== 0 || dy.size !== x.size)
      throw new EngineError(`rmsnormWeightGrad: x [${x.shape}], dy [${dy.shape}] and dw [${dw.shape}] do not match`);
    rmsnormWeightGradAdd(m(dw, 'rmsnormWeightGrad'), tensorValues(x), eps, tensorValues(dy));
  }

  embeddingBackwardAddInPlace(dTable: Tensor, ids: Int32Array, dOut: Tensor): void {
    const D = dTable.shape[dTable.shape.length - 1];
    const V = dTable.size / D;
    if (dOut.size !== ids.length * D) throw new EngineError(`embeddingBackward: dOut [${dOut.shape}] is not ${ids.length} rows of ${D}`);
    for (const id of ids) if (id < 0 || id >= V) throw new EngineError(`embeddingBackward: row ${id} out of range [0, ${V})`);
    embeddingBackwardAdd(m(dTable, 'embeddingBackward'), ids, tensorValues(dOut), D);
  }

  rope(x: Tensor, positions: Int32Array, headDim: number, theta: number, inverse = false): Tensor {
    return this.make(ropeForward(tensorValues(x), positions, headDim, theta, inverse), x.shape);
  }

  ropeWriteCache(x: { q: Tensor; k: Tensor; v: Tensor; kCache: Tensor; vCache: Tensor }, positions: Int32Array, theta: number, shape: AttentionShape): Tensor {
    // Through this.rope, so a backend that rotates faster writes the cache with its own.
    const k = this.rope(x.k, positions, shape.headDim, theta);
    writeCacheForward(m(x.kCache, 'ropeWriteCache'), tensorValues(k), shape);
    this.dispose(k);
    writeCacheForward(m(x.vCache, 'ropeWriteCache'), tensorValues(x.v), shape);
    return this.rope(x.q, positions, shape.headDim, theta);
  }

  attention(q: Tensor, kCache: Tensor, vCache: Tensor, shape: AttentionShape): Tensor {
    return this.make(attentionForward(tensorValues(q), tensorValues(kCache), tensorValues(vCache), shape), q.shape);
  }

  attentionBackward(q: Tensor, k: Tensor, v: Tensor, dOut: Tensor, shape: AttentionShape) {
    const g = attentionBackward(tensorValues(q), tensorValues(k), tensorValues(v), tensorValues(dOut), shape);
    const kvShape = [shape.B * shape.T, shape.numKvHeads * shape.headDim];
    return { dq: this.make(g.dq, q.shape), dk: this.make(g.dk, kvShape), dv: this.make(g.dv, kvShape) };
  }

  siluMul(gate: Tensor, up: Tensor): Tensor {
    return this.make(siluMulForward(tensorValues(gate), tensorValues(up)), gate.shape);
  }

  siluMulBackward(gate: Tensor, up: Tensor, dh: Tensor) {
    const g = siluMulBackward(tensorValues(gate), tensorValues(up), tensorValues(dh));
    return { dGate: this.make(g.dGate, gate.shape), dUp: this.make(g.dUp, gate.shape) };
  }

  logSoftmaxGather(logits: Tensor, targets: Int32Array) {
    const r = logSoftmaxGatherForward(tensorValues(logits), targets);
    return { logp: this.make(r.logp, [targets.length]), entropy: this.make(r.entropy, [targets.length]) };
  }

  logSoftmaxGatherBackward(logits: Tensor, targets: Int32Array, dlogp: Tensor): Tensor {
    return this.make(logSoftmaxGatherBackward(tensorValues(logits), targets, tensorValues(dlogp)), logits.shape);
  }

  reverseKl(logits: Tensor, teacherLogp: Tensor): Tensor {
    const R = reverseKlRows(logits, teacherLogp, 'reverseKl');
    return this.make(reverseKlForward(tensorValues(logits), tensorValues(teacherLogp), R), [R]);
  }

  reverseKlBackward(logits: Tensor, teacherLogp: Tensor, dkl: Tensor): Tensor {
    const R = reverseKlRows(logits, teacherLogp, 'reverseKlBackward');
    if (dkl.size !== R) throw new EngineError(`reverseKlBackward: ${dkl.size} row gradients for ${R} rows`);
    return this.make(reverseKlBackward(tensorValues(logits), tensorValues(teacherLogp), tensorValues(dkl)), logits.shape);
  }

  async sample(logits: Tensor, o: SamplingOptions, uniforms: Float32Array): Promise<Picks> {
    return sampleRows(tensorValues(logits), o, uniforms);
  }

  async sumSquares(ts: readonly Tensor[]): Promise<number> {
    let s = 0;
    for (const t of ts) for (const x of tensorValues(t)) s += x * x;
    return s;
  }

  adamwInPlace(param: Tensor, grad: Tensor, mom: Tensor, v: Tensor, p: AdamWParams): void {
    const op = 'adamwInPlace';
    adamwUpdate(m(param, op), m(grad, op), m(mom, op), m(v, op), p);
  }
}

/** A tensor's values; a packed weight is decoded into a temporary (see CpuWeight). */
export function tensorValues(t: Tensor): Arr {
  if (t instanceof CpuWeight) return t.decode();
  if (!(t instanceof CpuTensor)) throw new EngineError('a tensor from another backend was passed to the CPU backend');
  return t.data;
}

/** The values of a tensor an op writes: a packed weight has no f32 storage to write. */
function m(t: Tensor, op: string): Arr {
  if (t instanceof CpuWeight) throw new EngineError(`${op}: writes f32 tensors, but a ${t.dtype} weight of shape [${t.shape}] was passed`);
  return tensorValues(t);
}

/** Rows of a reverse-KL op's logits [R, V], checked against the teacher's log-probs. */
export function reverseKlRows(logits: Tensor, teacherLogp: Tensor, op: string): number {
  if (logits.shape.length !== 2) throw new EngineError(`${op}: logits must be [rows, vocabulary], got [${logits.shape}]`);
  if (teacherLogp.size !== logits.size) throw new EngineError(`${op}: ${teacherLogp.size} teacher log-probs for ${logits.size} logits; give one per logit`);
  return logits.shape[0];
}
