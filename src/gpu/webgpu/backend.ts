/**
 * The WebGPU implementation of the engine's Backend: WGSL kernels in ../ops/*.wgsl.ts, one
 * command encoder per batch of ops (submitted when something is read, or after
 * maxDispatchesPerBatch dispatches), pooled buffers, cached pipelines.
 */
import { checkWeightShape, matmulDims, sizeOf, type AdamWParams, type AttentionShape, type Backend, type Tensor, type WeightSource } from '../backend';
import { EngineError } from '../errors';
import { adamwWgsl } from '../ops/adamw.wgsl';
import { attentionBackwardWgsl, attentionWgsl, DEFAULT_ATTENTION_PATHS, type AttentionPaths } from '../ops/attention.wgsl';
import { addInPlaceWgsl, addWgsl } from '../ops/elementwise.wgsl';
import { embeddingBackwardWgsl, gatherRowsWgsl, scatterRowsWgsl } from '../ops/embedding.wgsl';
import { matmulWgsl, type MatmulOptions } from '../ops/matmul.wgsl';
import { rmsnormBackwardWgsl, rmsnormWeightGradWgsl, rmsnormWgsl } from '../ops/rmsnorm.wgsl';
import { ropeWriteCacheWgsl } from '../ops/rope-cache.wgsl';
import { ropeWgsl } from '../ops/rope.wgsl';
import type { Picks } from '../ops/sample';
import { sampleWgsl } from '../ops/sample.wgsl';
import { reverseKlBackwardWgsl, reverseKlWgsl } from '../ops/reverse-kl.wgsl';
import { logSoftmaxGatherBackwardWgsl, logSoftmaxGatherManyBackwardWgsl, logSoftmaxGatherManyWgsl, logSoftmaxGatherWgsl } from '../ops/softmax.wgsl';
import type { SamplingOptions } from '../sampler';
import { sumSquaresWgsl } from '../ops/sumsq.wgsl';
import { siluMulBackwardWgsl, siluMulWgsl } from '../ops/swiglu.wgsl';
import { acquireDevice, type DeviceRequest } from './device';
import { Runtime } from './runtime';
import type { WeightFormat } from '../quant';
import { GpuTensor } from './tensor';

export interface WebGPUBackendOptions extends DeviceRequest {
  /**
   * Largest buffer one tensor may occupy before it is split by rows; defaults to the device's
   * maxStorageBufferBindingSize (and maxBufferSize). Tests force it small to exercise splits.
   */
  splitBytes?: number;
  /** Dispatches recorded before a submit that no read asked for (default 128). */
  maxDispatchesPerBatch?: number;
  /** Up to this many rows, linear / matmul with transposed b use the matrix-vector kernel (default 4). */
  matvecMaxRows?: number;
  /**
   * Kernels stage data through workgroup memory (tiled matmul, tree reductions). Default: true,
   * except on a CPU-emulated adapter (SwiftShader), where workgroup memory is slow and
   * register-only kernels are used instead (see ops/matmul.wgsl.ts).
   */
  workgroupMemory?: boolean;
  /**
   * Up to this many (query, head) pairs over more than attentionDecodeMinKeys slots, attention
   * uses one workgroup per pair (decode); otherwise one invocation per pair (prefill).
   * Defaults in DEFAULT_ATTENTION_PATHS.
   */
  attentionDecodeMaxQueries?: number;
  attentionDecodeMinKeys?: number;
}

/**
 * A software adapter that runs compute on the CPU (SwiftShader reports itself a fallback
 * adapter). Unknown adapters (a device passed without one) count as GPUs.
 */
export function isCpuEmulated(adapter: GPUAdapter | null): boolean {
  const info = adapter?.info;
  if (!info) return false;
  return info.isFallbackAdapter === true || /swiftshader/i.test(`${info.architecture} ${info.description}`);
}

export class WebGPUBackend implements Backend {
  readonly kind = 'webgpu' as const;
  readonly rt: Runtime;
  /** Resolves when the device is lost; every op afterwards throws DeviceLostError. */
  readonly lost: Promise<GPUDeviceLostInfo>;
  private readonly matmulOptions: MatmulOptions;
  private readonly attentionPaths: AttentionPaths;

  constructor(
    readonly device: GPUDevice,
    readonly adapter: GPUAdapter | null,
    /** shader-f16 is enabled: kernels read f16 weights natively (else they unpack them from u32 words). */
    readonly f16: boolean,
    opts: WebGPUBackendOptions = {},
  ) {
    const limit = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
    this.rt = new Runtime(device, f16, {
      maxDispatchesPerBatch: opts.maxDispatchesPerBatch ?? 128,
      splitBytes: Math.min(opts.splitBytes ?? limit, limit),
      arenaBytes: 4 * 1024 * 1024,
      workgroupMemory: opts.workgroupMemory ?? !isCpuEmulated(adapter),
    });
    this.matmulOptions = { matvecMaxRows: opts.matvecMaxRows ?? 4 };
    this.attentionPaths = {
      // The decode path's workgroup-wide softmax is what a CPU-emulated adapter runs slowest.
      decodeMaxQueries: opts.attentionDecodeMaxQueries ?? (this.rt.options.workgroupMemory ? DEFAULT_ATTENTION_PATHS.decodeMaxQueries : 0),
      decodeMinKeys: opts.attentionDecodeMinKeys ?? DEFAULT_ATTENTION_PATHS.decodeMinKeys,
    };
    this.lost = device.lost.then((info) => {
      this.rt.lostInfo = info;
      return info;
    });
  }

  private t(x: Tensor, op: string): GpuTensor {
    return this.rt.own(x, op);
  }

  /** Ops that take no weight take f32 tensors only (packed weights are read by matmul and gather). */
  private f32(x: Tensor, op: string): GpuTensor {
    const g = this.rt.own(x, op);
    if (g.dtype !== 'f32') throw new EngineError(`${op}: takes f32 tensors; a ${g.dtype} weight of shape [${g.shape}] was passed`);
    return g;
  }

  // ---- tensors -------------------------------------------------------------------------------

  tensor(data: Float32Array, shape: readonly number[]): GpuTensor {
    if (data.length !== sizeOf(shape)) {
      throw new EngineError(`tensor of shape [${shape}] needs ${sizeOf(shape)} values, got ${data.length}`);
    }
    return this.rt.upload(data, shape);
  }

  weight(src: WeightSource, format: WeightFormat): GpuTensor {
    checkWeightShape(src.shape, format);
    return this.rt.uploadWeight(src, format);
  }

  zeros(shape: readonly number[]): GpuTensor {
    return this.rt.zeros(shape);
  }

  read(t: Tensor): Promise<Float32Array> {
    return this.rt.read(this.t(t, 'read'));
  }

  dispose(t: Tensor): void {
    this.rt.free(this.t(t, 'dispose'));
  }

  memory() {
    return { allocated: this.rt.allocated, peak: this.rt.peak };
  }

  resetPeakMemory(): void {
    this.rt.peak = this.rt.allocated;
  }

  /** Submits pending work and waits for the GPU; throws any error WebGPU reported. */
  sync(): Promise<void> {
    return this.rt.sync();
  }

  /** Frees buffers the pool keeps for reuse (after a model is unloaded, say). */
  trim(): void {
    this.rt.trim();
  }

  /** Destroys the device; the backend is unusable afterwards (`lost` resolves). */
  destroy(): void {
    this.rt.flush();
    this.device.destroy();
  }

  // ---- ops -----------------------------------------------------------------------------------

  embedding(table: Tensor, ids: Int32Array): Tensor {
    return gatherRowsWgsl(this.rt, this.t(table, 'embedding'), ids, 'embedding');
  }

  gatherRows(x: Tensor, rows: Int32Array): Tensor {
    return gatherRowsWgsl(this.rt, this.t(x, 'gatherRows'), rows, 'gatherRows');
  }

  scatterRows(src: Tensor, rows: Int32Array, R: number): Tensor {
    return scatterRowsWgsl(this.rt, this.f32(src, 'scatterRows'), rows, R);
  }

  matmul(a: Tensor, b: Tensor, transA: boolean, transB: boolean): Tensor {
    const A = this.f32(a, 'matmul');
    const B = this.t(b, 'matmul');
    const { M, K, N } = matmulDims(A, B, transA, transB, 'matmul');
    return matmulWgsl(this.rt, { a: A, b: B, M, N, K, transA, transB }, this.matmulOptions, 'matmul');
  }

  matmulAddInPlace(c: Tensor, a: Tensor, b: Tensor, transA: boolean, transB: boolean, scale = 1): void {
    const op = 'matmulAddInPlace';
    const C = this.f32(c, op);
    const A = this.f32(a, op);
    const B = this.t(b, op);
    const { M, K, N } = matmulDims(A, B, transA, transB, op);
    if (C.size !== M * N) throw new EngineError(`${op}: c has ${C.size} values for [${M}, ${N}]`);
    matmulWgsl(this.rt, { a: A, b: B, into: { c: C, alpha: scale }, M, N, K, transA, transB }, this.matmulOptions, op);
  }

  linear(x: Tensor, w: Tensor, bias?: Tensor, residual?: Tensor): Tensor {
    const X = this.f32(x, 'linear');
    const W = this.t(w, 'linear');
    const [N, K] = W.shape;
    if (W.shape.length !== 2 || X.size % K !== 0) throw new EngineError(`linear: x [${X.shape}] does not match w [${W.shape}]`);
    const B = bias ? this.f32(bias, 'linear') : undefined;
    if (B && B.size !== N) throw new EngineError(`linear: bias has ${B.size} values for ${N} outputs`);
    const M = X.size / K;
    const R = residual ? this.f32(residual, 'linear') : undefined;
    if (R && R.size !== M * N) throw new EngineError(`linear: residual has ${R.size} values for [${M}, ${N}]`);
    return matmulWgsl(this.rt, { a: X, b: W, bias: B, residual: R, M, N, K, transA: false, transB: true }, this.matmulOptions, 'linear');
  }

  add(a: Tensor, b: Tensor, scale = 1): Tensor {
    return addWgsl(this.rt, this.f32(a, 'add'), this.f32(b, 'add'), scale);
  }

  addInPlace(a: Tensor, b: Tensor, scale = 1): void {
    addInPlaceWgsl(this.rt, this.f32(a, 'addInPlace'), this.f32(b, 'addInPlace'), scale);
  }

  rmsnorm(x: Tensor, w: Tensor, eps: number): Tensor {
    return rmsnormWgsl(this.rt, this.f32(x, 'rmsnorm'), this.f32(w, 'rmsnorm'), eps);
  }

  rmsnormBackward(x: Tensor, w: Tensor, eps: number, dy: Tensor): Tensor {
    return rmsnormBackwardWgsl(this.rt, this.f32(x, 'rmsnormBackward'), this.f32(w, 'rmsnormBackward'), eps, this.f32(dy, 'rmsnormBackward'));
  }

  rmsnormWeightGradAddInPlace(dw: Tensor, x: Tensor, eps: number, dy: Tensor): void {
    const op = 'rmsnormWeightGrad';
    rmsnormWeightGradWgsl(this.rt, this.f32(dw, op), this.f32(x, op), eps, this.f32(dy, op));
  }

  embeddingBackwardAddInPlace(dTable: Tensor, ids: Int32Array, dOut: Tensor): void {
    const op = 'embeddingBackward';
    embeddingBackwardWgsl(this.rt, this.f32(dTable, op), ids, this.f32(dOut, op));
  }

  rope(x: Tensor, positions: Int32Array, headDim: number, theta: number, inverse = false): Tensor {
    return ropeWgsl(this.rt, this.f32(x, 'rope'), positions, headDim, theta, inverse);
  }

  ropeWriteCache(x: { q: Tensor; k: Tensor; v: Tensor; kCache: Tensor; vCache: Tensor }, positions: Int32Array, theta: number, shape: AttentionShape): Tensor {
    const op = 'ropeWriteCache';
    const t = { q: this.f32(x.q, op), k: this.f32(x.k, op), v: this.f32(x.v, op), kCache: this.f32(x.kCache, op), vCache: this.f32(x.vCache, op) };
    return ropeWriteCacheWgsl(this.rt, t, positions, theta, shape);
  }

  attention(q: Tensor, kCache: Tensor, vCache: Tensor, shape: AttentionShape): Tensor {
    const op = 'attention';
    return attentionWgsl(this.rt, this.f32(q, op), this.f32(kCache, op), this.f32(vCache, op), shape, this.attentionPaths);
  }

  attentionBackward(q: Tensor, k: Tensor, v: Tensor, dOut: Tensor, shape: AttentionShape) {
    const op = 'attentionBackward';
    return attentionBackwardWgsl(this.rt, this.f32(q, op), this.f32(k, op), this.f32(v, op), this.f32(dOut, op), shape);
  }

  siluMul(gate: Tensor, up: Tensor): Tensor {
    return siluMulWgsl(this.rt, this.f32(gate, 'siluMul'), this.f32(up, 'siluMul'));
  }

  siluMulBackward(gate: Tensor, up: Tensor, dh: Tensor) {
    const op = 'siluMulBackward';
    return siluMulBackwardWgsl(this.rt, this.f32(gate, op), this.f32(up, op), this.f32(dh, op));
  }

  logSoftmaxGather(logits: Tensor, targets: Int32Array) {
    return logSoftmaxGatherWgsl(this.rt, this.f32(logits, 'logSoftmaxGather'), targets);
  }

  logSoftmaxGatherBackward(logits: Tensor, targets: Int32Array, dlogp: Tensor): Tensor {
    const op = 'logSoftmaxGatherBackward';
    return logSoftmaxGatherBackwardWgsl(this.rt, this.f32(logits, op), targets, this.f32(dlogp, op));
  }

  logSoftmaxGatherMany(logits: Tensor, targets: Int32Array, k: number): Tensor {
    return logSoftmaxGatherManyWgsl(this.rt, this.f32(logits, 'logSoftmaxGatherMany'), targets, k);
  }

  logSoftmaxGatherManyBackward(logits: Tensor, targets: Int32Array, k: number, dlogp: Tensor): Tensor {
    const op = 'logSoftmaxGatherManyBackward';
    return logSoftmaxGatherManyBackwardWgsl(this.rt, this.f32(logits, op), targets, k, this.f32(dlogp, op));
  }

  reverseKl(logits: Tensor, teacherLogp: Tensor): Tensor {
    const op = 'reverseKl';
    return reverseKlWgsl(this.rt, this.f32(logits, op), this.f32(teacherLogp, op));
  }

  reverseKlBackward(logits: Tensor, teacherLogp: Tensor, dkl: Tensor): Tensor {
    const op = 'reverseKlBackward';
    return reverseKlBackwardWgsl(this.rt, this.f32(logits, op), this.f32(teacherLogp, op), this.f32(dkl, op));
  }

  sample(logits: Tensor, o: SamplingOptions, uniforms: Float32Array): Promise<Picks> {
    return sampleWgsl(this.rt, this.f32(logits, 'sample'), o, uniforms);
  }

  sumSquares(ts: readonly Tensor[]): Promise<number> {
    return sumSquaresWgsl(
      this.rt,
      ts.map((t) => this.f32(t, 'sumSquares')),
    );
  }

  adamwInPlace(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, p: AdamWParams): void {
    const op = 'adamwInPlace';
    adamwWgsl(this.rt, this.f32(param, op), this.f32(grad, op), this.f32(m, op), this.f32(v, op), p);
  }
}

/**
 * A WebGPU backend on the given device, adapter or navigator.gpu's default adapter. Throws
 * WebGPUUnavailableError (with what to do) when the environment has no WebGPU.
 */
export async function createWebGPUBackend(opts: WebGPUBackendOptions = {}): Promise<WebGPUBackend> {
  const { device, adapter, f16 } = await acquireDevice(opts);
  return new WebGPUBackend(device, adapter, f16, opts);
}
