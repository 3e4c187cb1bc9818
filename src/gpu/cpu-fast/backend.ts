/**
 * The fast CPU backend: the reference backend (../cpu/backend.ts) with its matrix products and
 * attention replaced by SIMD kernels (./assembly, WebAssembly) that sum in f32 and split their
 * work over threads. Every tensor lives in one shared WebAssembly memory, so the kernels of all
 * threads read it in place, and the reference ops that are not replaced still run on it as
 * plain typed arrays. The reference stays the oracle: tests compare each kernel with it at the
 * WebGPU kernels' tolerances.
 *
 * Repeatable: each output element is summed by one thread in a fixed order, so results do not
 * depend on thread timing or on the thread count.
 */
import { matmulDims, type AttentionShape, type Tensor } from '../backend';
import { CpuBackend, CpuTensor, tensorValues } from '../cpu/backend';
import { EngineError } from '../errors';
import type { Arr } from '../ops/types';
import { WasmHeap } from './heap';
import { Kernel, writeJob, type Arg } from './jobs';
import { KERNELS_WASM } from './kernels-wasm';
import { RopeTable } from './rope';
import { ThreadPool, type SpawnThread } from './threads';

/** The bottom of the memory: control words, the job, the kernels' static data (see build-wasm). */
const RESERVED = 65536;
/** Multiply-adds below which a job runs on the calling thread: waking helpers costs more. */
const PARALLEL_WORK = 1 << 18;

/** A tensor whose values are a block of the backend's memory. */
export class HeapTensor extends CpuTensor {
  constructor(
    data: Float32Array,
    shape: readonly number[],
    readonly at: number,
  ) {
    super(data, shape);
  }
}

export interface FastCpuOptions {
  /** Threads to split kernels over, this one included (default 1; more need `spawn`). */
  threads?: number;
  /** Starts a helper thread (threads-node.ts, threads-browser.ts). */
  spawn?: SpawnThread;
}

let compiled: WebAssembly.Module | undefined;

export class FastCpuBackend extends CpuBackend {
  /** Blocks of tensors never disposed, freed when the tensor is collected. */
  private readonly orphans = new FinalizationRegistry<number>((at) => this.heap.release(at));
  private readonly views = new WeakMap<Arr, number>();
  private readonly ropeTables = new Map<string, RopeTable>();

  private constructor(
    private readonly heap: WasmHeap,
    private readonly instance: WebAssembly.Instance,
    private readonly pool: ThreadPool,
  ) {
    super('f32');
  }

  static async create(o: FastCpuOptions = {}): Promise<FastCpuBackend> {
    if (typeof SharedArrayBuffer === 'undefined') {
      throw new EngineError('the fast CPU backend needs SharedArrayBuffer (a cross-origin isolated page, or Node); use the reference CPU backend');
    }
    compiled ??= await WebAssembly.compile(Uint8Array.from(atob(KERNELS_WASM), (c) => c.charCodeAt(0)));
    const heap = new WasmHeap(RESERVED);
    const instance = await WebAssembly.instantiate(compiled, { env: { memory: heap.memory } });
    const pool = await ThreadPool.start(instance, compiled, heap.memory, o.spawn ? (o.threads ?? 1) : 1, o.spawn);
    return new FastCpuBackend(heap, instance, pool);
  }

  get threads(): number {
    return this.pool.threads;
  }

  /** Bytes of the memory's blocks now held, tensors and scratch alike (what a leak would grow). */
  heldBytes(): number {
    return this.heap.held();
  }

  /** Stops the helper threads; the backend cannot run kernels after. */
  close(): void {
    this.pool.close();
  }

  protected override arr(n: number): Arr {
    const at = this.heap.alloc(n * 4);
    const view = this.heap.f32(at, n);
    view.fill(0);
    this.views.set(view, at);
    return view;
  }

  protected override wrap(data: Arr, shape: readonly number[]): CpuTensor {
    let at = this.views.get(data);
    let view = data as Float32Array;
    if (at === undefined) {
      // A reference op's result, in ordinary memory: moved into the heap.
      at = this.heap.alloc(data.length * 4);
      view = this.heap.f32(at, data.length);
      view.set(data);
    }
    this.views.delete(view);
    const t = new HeapTensor(view, shape, at);
    this.orphans.register(t, at, t);
    return t;
  }

  override dispose(t: Tensor): void {
    super.dispose(t);
    if (t instanceof HeapTensor) {
      this.orphans.unregister(t);
      this.heap.release(t.at);
    }
  }

  override matmul(a: Tensor, b: Tensor, transA: boolean, transB: boolean): Tensor {
    const { M, K, N } = matmulDims(a, b, transA, transB, 'matmul');
    const c = this.make(this.arr(M * N), [M, N]) as HeapTensor;
    this.product(a, b, c, M, K, N, transA, transB, false, 1);
    return c;
  }

  override matmulAddInPlace(c: Tensor, a: Tensor, b: Tensor, transA: boolean, transB: boolean, scale = 1): void {
    const { M, K, N } = matmulDims(a, b, transA, transB, 'matmulAddInPlace');
    if (c.size !== M * N) throw new EngineError(`matmulAddInPlace: c has ${c.size} values for [${M}, ${N}]`);
    if (!(c instanceof HeapTensor))
      throw new EngineError(`matmulAddInPlace: writes f32 tensors of this backend, got a ${c.dtype} tensor of shape [${c.shape}]`);
    this.product(a, b, c, M, K, N, transA, transB, true, scale);
  }

  override linear(x: Tensor, w: Tensor, bias?: Tensor, residual?: Tensor): Tensor {
    const [N, K] = w.shape;
    const M = x.size / K;
    if (residual && residual.size !== M * N) throw new EngineError(`linear: residual has ${residual.size} values for [${M}, ${N}]`);
    const y = this.arr(M * N);
    // The bias and the residual go in first, and the product is added onto them.
    if (residual) y.set(tensorValues(residual));
    if (bias) {
      const b = tensorValues(bias);
      for (let i = 0; i < M; i++) for (let j = 0; j < N; j++) y[i * N + j] += b[j];
    }
    const c = this.make(y, [M, N]) as HeapTensor;
    this.product(x, w, c, M, K, N, false, true, Boolean(bias || residual), 1);
    return c;
  }

  override rope(x: Tensor, positions: Int32Array, headDim: number, theta: number, inverse = false): Tensor {
    const out = this.arr(x.size);
    this.ropeTable(headDim, theta).apply(tensorValues(x), positions, inverse, out);
    return this.make(out, x.shape);
  }

  private ropeTable(headDim: number, theta: number): RopeTable {
    const key = `${headDim} ${theta}`;
    let table = this.ropeTables.get(key);
    if (!table) this.ropeTables.set(key, (table = new RopeTable(headDim, theta)));
    return table;
  }

  override attention(q: Tensor, kCache: Tensor, vCache: Tensor, s: AttentionShape): Tensor {
    const out = this.make(this.arr(q.size), q.shape) as HeapTensor;
    const items = s.B * s.T * s.numHeads;
    this.withInputs([q, kCache, vCache], (qa, ka, va) =>
      this.withInts(s.padLeft, (pad) =>
        this.withThreadScratch(s.maxT * 4, (scratch, stride) => {
          const args = [qa, ka, va, out.at, pad, s.T, s.start, s.maxT, s.numHeads, s.numKvHeads, s.headDim, scratch, stride];
          this.runJob(Kernel.attention, items, args, items * (s.start + s.T) * s.headDim * 2);
        }),
      ),
    );
    return out;
  }

  override attentionBackward(q: Tensor, k: Tensor, v: Tensor, dOut: Tensor, s: AttentionShape) {
    const kvShape = [s.B * s.T, s.numKvHeads * s.headDim];
    const dq = this.make(this.arr(q.size), q.shape) as HeapTensor;
    const dk = this.make(this.arr(s.B * s.T * s.numKvHeads * s.headDim), kvShape) as HeapTensor;
    const dv = this.make(this.arr(s.B * s.T * s.numKvHeads * s.headDim), kvShape) as HeapTensor;
    const items = s.B * s.numKvHeads;
    this.withInputs([q, k, v, dOut], (qa, ka, va, ga) =>
      this.withInts(s.padLeft, (pad) =>
        this.withThreadScratch(s.T * 8, (scratch, stride) => {
          const args = [qa, ka, va, ga, dq.at, dk.at, dv.at, pad, s.T, s.numHeads, s.numKvHeads, s.headDim, scratch, stride];
          this.runJob(Kernel.attentionBackward, items, args, s.B * s.numHeads * s.T * s.T * s.headDim * 3);
        }),
      ),
    );
    return { dq, dk, dv };
  }

  /**
   * The bench's measure of one core's peak: runs `rounds` rounds of twelve vector multiply-adds
   * (48 lanes), the matrix tile's instruction mix, on this thread.
   */
  simdPeak(rounds: number): void {
    const peak = this.instance.exports.simdPeak as (buf: number, n: number) => number;
    this.withScratch(256, (buf) => peak(buf, rounds));
  }

  /**
   * c = op(a) @ op(b), or c += scale * op(a) @ op(b) when `add`: as dot products of op(a)'s rows
   * with op(b)'s columns, each operand transposed first where it is not stored that way.
   */
  private product(a: Tensor, b: Tensor, c: HeapTensor, M: number, K: number, N: number, transA: boolean, transB: boolean, add: boolean, scale: number): void {
    this.withInputs([a, b], (aa, ba) =>
      this.transposedIf(transA, aa, K, M, (x) =>
        this.transposedIf(!transB, ba, K, N, (w) =>
          this.runJob(Kernel.dotProducts, Math.ceil(N / 4), [x, w, c.at, M, K, N, add ? 1 : 0, { f32: scale }], M * N * K),
        ),
      ),
    );
  }

  /** `use` gets `at` ([rows, cols]) itself, or when `transpose`, a temporary [cols, rows] copy of its transpose. */
  private transposedIf<R>(transpose: boolean, at: number, rows: number, cols: number, use: (at: number) => R): R {
    if (!transpose) return use(at);
    return this.withScratch(rows * cols * 4, (t) => {
      this.runJob(Kernel.transpose, rows, [at, rows, cols, t], rows * cols);
      return use(t);
    });
  }

  private runJob(kernel: number, items: number, args: readonly Arg[], work: number): void {
    if (items === 0) return;
    writeJob(this.heap.memory, kernel, items, args);
    this.pool.run(work >= PARALLEL_WORK);
  }

  /**
   * Runs `use` with the heap address of each tensor's values: in place for this backend's
   * tensors, else (a packed weight, a tensor of a reference backend) a temporary copy.
   */
  private withInputs<R>(ts: Tensor[], use: (...at: number[]) => R): R {
    const temps: number[] = [];
    const at = ts.map((t) => {
      if (t instanceof HeapTensor) return t.at;
      const v = tensorValues(t);
      const p = this.heap.alloc(v.length * 4);
      this.heap.f32(p, v.length).set(v);
      temps.push(p);
      return p;
    });
    try {
      return use(...at);
    } finally {
      for (const p of temps) this.heap.release(p);
    }
  }

  private withInts<R>(v: Int32Array, use: (at: number) => R): R {
    return this.withScratch(v.length * 4, (p) => {
      this.heap.i32(p, v.length).set(v);
      return use(p);
    });
  }

  /**
   * Scratch of `perThread` bytes for each thread: `use` gets the base and the stride, which a
   * job passes on so that thread t works at base + t * stride.
   */
  private withThreadScratch<R>(perThread: number, use: (at: number, stride: number) => R): R {
    return this.withScratch(perThread * this.threads, (p) => use(p, perThread));
  }

  private withScratch<R>(bytes: number, use: (at: number) => R): R {
    const p = this.heap.alloc(bytes);
    try {
      return use(p);
    } finally {
      this.heap.release(p);
    }
  }
}
