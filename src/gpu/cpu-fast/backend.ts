/**
 * The fast CPU backend: the reference backend (../cpu/backend.ts) with the ops that a forward,
 * a backward and an optimizer step spend their time in replaced by SIMD kernels (./assembly,
 * WebAssembly) that sum in f32 and split their work over threads: matrix products, attention,
 * RMSNorm, SiLU-mul, add, the loss's log-softmax gather and reverse KL, sampling, the gradient
 * norm and AdamW. Every tensor lives in one shared WebAssembly memory, so the kernels of all
 * threads read it in place, and the ops that are not replaced (embedding lookups and their
 * backward, RoPE from a table, the cache writes) run on it as plain typed arrays. The reference stays the oracle: tests
 * compare each kernel with it at the WebGPU kernels' tolerances.
 *
 * Repeatable: each output element is summed by one thread in a fixed order, so results do not
 * depend on thread timing or on the thread count.
 */
import { matmulDims, sizeOf, type AdamWParams, type AttentionShape, type Tensor } from '../backend';
import { CpuBackend, CpuTensor, reverseKlRows, tensorValues } from '../cpu/backend';
import { EngineError } from '../errors';
import { checkSampling, isGreedy, sampleBlocks, type Picks } from '../ops/sample';
import type { Arr } from '../ops/types';
import type { SamplingOptions } from '../sampler';
import { WasmHeap } from './heap';
import { Kernel, writeJob, type Arg } from './jobs';
import { KERNELS_WASM } from './kernels-wasm';
import { RopeTable } from './rope';
import { ThreadPool, type SpawnThread } from './threads';

/** The bottom of the memory: control words, the job, the kernels' static data (see build-wasm). */
const RESERVED = 65536;
/**
 * Multiply-adds from which a job is always split, even when a helper must be woken for it. Waking
 * a sleeping helper took 50 to 90 us on a 2-core VM (the most when its other core was idle), a
 * million multiply-adds' time.
 */
const PARALLEL_WORK = 1 << 22;
/**
 * Multiply-adds from which a job is split when splitting has paid lately (split-choice.ts): on a
 * 2-core VM a width-256 model then decodes 1.6 times as fast at batch 16 and 1.4 times at batch 1.
 */
const SMALL_WORK = 1 << 16;
/** An exp on four lanes costs about what this many multiply-adds do, for the work estimates above. */
const EXP_WORK = 16;
/** Values per partial sum of sumSquares: a fixed block, so the total does not depend on the split. */
const SUMSQ_CHUNK = 4096;

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
  /** Multiply-adds from which a job is split over the threads (default PARALLEL_WORK); the split never changes a result. */
  parallelWork?: number;
  /** Multiply-adds from which a job is split when that has paid lately (default SMALL_WORK, at most parallelWork). */
  smallWork?: number;
}

let compiled: WebAssembly.Module | undefined;

export class FastCpuBackend extends CpuBackend {
  /** Blocks of tensors never disposed, freed when the tensor is collected. */
  private readonly orphans = new FinalizationRegistry<number>((at) => this.heap.release(at));
  private readonly views = new WeakMap<Arr, number>();
  private readonly ropeTables = new Map<string, RopeTable>();
  /** Bytes of scratch a product's threads each need (assembly/gemm.ts). */
  private readonly productScratch: (K: number, N: number, transA: number, threads: number) => number;

  private constructor(
    private readonly heap: WasmHeap,
    private readonly instance: WebAssembly.Instance,
    private readonly pool: ThreadPool,
  ) {
    super('f32');
    this.productScratch = instance.exports.productScratch as (K: number, N: number, transA: number, threads: number) => number;
  }

  static async create(o: FastCpuOptions = {}): Promise<FastCpuBackend> {
    if (typeof SharedArrayBuffer === 'undefined') {
      throw new EngineError('the fast CPU backend needs SharedArrayBuffer (a cross-origin isolated page, or Node); use the reference CPU backend');
    }
    compiled ??= await WebAssembly.compile(Uint8Array.from(atob(KERNELS_WASM), (c) => c.charCodeAt(0)));
    const heap = new WasmHeap(RESERVED);
    const instance = await WebAssembly.instantiate(compiled, { env: { memory: heap.memory } });
    const parallelWork = o.parallelWork ?? PARALLEL_WORK;
    const work = { parallelWork, smallWork: Math.min(parallelWork, o.smallWork ?? SMALL_WORK) };
    const pool = await ThreadPool.start(instance, compiled, heap.memory, o.spawn ? (o.threads ?? 1) : 1, o.spawn, work);
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
    return this.uninitialized(n).fill(0);
  }

  /** A heap block for n values, left as its last owner left it, that make() will wrap. */
  protected override uninitialized(n: number): Float32Array {
    const at = this.heap.alloc(n * 4);
    const view = this.heap.f32(at, n);
    this.views.set(view, at);
    return view;
  }

  /** The tensor for a kernel's result, which writes every value. */
  private output(shape: readonly number[]): HeapTensor {
    return this.make(this.uninitialized(sizeOf(shape)), shape) as HeapTensor;
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
    const c = this.output([M, N]);
    this.product(a, b, c, M, K, N, transA, transB, false, 1);
    return c;
  }

  override matmulAddInPlace(c: Tensor, a: Tensor, b: Tensor, transA: boolean, transB: boolean, scale = 1): void {
    const { M, K, N } = matmulDims(a, b, transA, transB, 'matmulAddInPlace');
    if (c.size !== M * N) throw new EngineError(`matmulAddInPlace: c has ${c.size} values for [${M}, ${N}]`);
    this.product(a, b, written(c, 'matmulAddInPlace'), M, K, N, transA, transB, true, scale);
  }

  override linear(x: Tensor, w: Tensor, bias?: Tensor, residual?: Tensor): Tensor {
    const [N, K] = w.shape;
    const M = x.size / K;
    if (residual && residual.size !== M * N) throw new EngineError(`linear: residual has ${residual.size} values for [${M}, ${N}]`);
    const c = this.output([M, N]);
    const y = c.data;
    // The bias and the residual go in first, and the product is added onto them; with neither,
    // the product writes every value.
    if (residual) y.set(tensorValues(residual));
    if (bias) {
      const b = tensorValues(bias);
      for (let i = 0; i < M; i++) {
        if (residual) for (let j = 0; j < N; j++) y[i * N + j] += b[j];
        else y.set(b, i * N);
      }
    }
    this.product(x, w, c, M, K, N, false, true, Boolean(bias || residual), 1);
    return c;
  }

  override rope(x: Tensor, positions: Int32Array, headDim: number, theta: number, inverse = false): Tensor {
    const out = this.output(x.shape);
    this.ropeTable(headDim, theta).apply(tensorValues(x), positions, inverse, out.data);
    return out;
  }

  private ropeTable(headDim: number, theta: number): RopeTable {
    const key = `${headDim} ${theta}`;
    let table = this.ropeTables.get(key);
    if (!table) this.ropeTables.set(key, (table = new RopeTable(headDim, theta)));
    return table;
  }

  override attention(q: Tensor, kCache: Tensor, vCache: Tensor, s: AttentionShape): Tensor {
    // The kernel zeroes each output row before it sums into it.
    const out = this.output(q.shape);
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
    // The kernel zeroes each of its items' rows before it sums into them.
    const dq = this.output(q.shape);
    const dk = this.output(kvShape);
    const dv = this.output(kvShape);
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

  override add(a: Tensor, b: Tensor, scale = 1): Tensor {
    sameSizes('add', a, b);
    const out = this.output(a.shape);
    this.withInputs([a, b], (x, y) => this.quads(Kernel.addScaled, a.size, [x, y, out.at, a.size, { f32: scale }], 1));
    return out;
  }

  override addInPlace(a: Tensor, b: Tensor, scale = 1): void {
    sameSizes('addInPlace', a, b);
    const x = written(a, 'addInPlace');
    this.withInputs([b], (y) => this.quads(Kernel.addScaled, a.size, [x.at, y, x.at, a.size, { f32: scale }], 1));
  }

  override siluMul(gate: Tensor, up: Tensor): Tensor {
    sameSizes('siluMul', gate, up);
    const out = this.output(gate.shape);
    this.withInputs([gate, up], (g, u) => this.quads(Kernel.siluMul, gate.size, [g, u, out.at, gate.size], EXP_WORK));
    return out;
  }

  override siluMulBackward(gate: Tensor, up: Tensor, dh: Tensor) {
    sameSizes('siluMulBackward', gate, up, dh);
    const dGate = this.output(gate.shape);
    const dUp = this.output(gate.shape);
    this.withInputs([gate, up, dh], (g, u, d) => this.quads(Kernel.siluMulBackward, gate.size, [g, u, d, dGate.at, dUp.at, gate.size], EXP_WORK));
    return { dGate, dUp };
  }

  override rmsnorm(x: Tensor, w: Tensor, eps: number): Tensor {
    const rows = normRows('rmsnorm', x, w.size);
    const y = this.output(x.shape);
    this.withInputs([x, w], (xa, wa) => this.runJob(Kernel.rmsnorm, rows, [xa, wa, w.size, { f32: eps }, y.at], x.size * 3));
    return y;
  }

  override rmsnormBackward(x: Tensor, w: Tensor, eps: number, dy: Tensor): Tensor {
    const rows = normRows('rmsnormBackward', x, w.size);
    sameSizes('rmsnormBackward', x, dy);
    const dx = this.output(x.shape);
    this.withInputs([x, w, dy], (xa, wa, g) => this.runJob(Kernel.rmsnormBackward, rows, [xa, wa, g, w.size, { f32: eps }, dx.at], x.size * 5));
    return dx;
  }

  override rmsnormWeightGradAddInPlace(dw: Tensor, x: Tensor, eps: number, dy: Tensor): void {
    if (x.size % dw.size !== 0 || dy.size !== x.size)
      throw new EngineError(`rmsnormWeightGrad: x [${x.shape}], dy [${dy.shape}] and dw [${dw.shape}] do not match`);
    const D = dw.size;
    const rows = x.size / D;
    const out = written(dw, 'rmsnormWeightGrad');
    // Each row's 1 / rms first, then each column summed over the rows in order by one thread.
    this.withInputs([x, dy], (xa, g) =>
      this.withScratch(rows * 4, (inv) => {
        this.runJob(Kernel.rmsInv, rows, [xa, D, { f32: eps }, inv], x.size);
        this.runJob(Kernel.rmsnormWeightGrad, Math.ceil(D / 4), [xa, g, inv, D, rows, out.at], x.size * 2);
      }),
    );
  }

  override logSoftmaxGather(logits: Tensor, targets: Int32Array) {
    const V = rowsOf('logSoftmaxGather', logits, targets);
    const R = targets.length;
    const logp = this.output([R]);
    const entropy = this.output([R]);
    this.withInputs([logits], (l) =>
      this.withInts(targets, (t) => this.runJob(Kernel.logSoftmaxGather, R, [l, t, V, logp.at, entropy.at], logits.size * EXP_WORK)),
    );
    return { logp, entropy };
  }

  override logSoftmaxGatherBackward(logits: Tensor, targets: Int32Array, dlogp: Tensor): Tensor {
    const V = rowsOf('logSoftmaxGatherBackward', logits, targets);
    if (dlogp.size !== targets.length) throw new EngineError(`logSoftmaxGatherBackward: ${dlogp.size} row gradients for ${targets.length} rows`);
    const d = this.output(logits.shape);
    this.withInputs([logits, dlogp], (l, g) =>
      this.withInts(targets, (t) => this.runJob(Kernel.logSoftmaxGatherBackward, targets.length, [l, t, g, V, d.at], logits.size * EXP_WORK)),
    );
    return d;
  }

  logSoftmaxGatherMany(logits: Tensor, targets: Int32Array, k: number): Tensor {
    const R = targets.length / k;
    const V = rowsOf('logSoftmaxGatherMany', logits, targets, k);
    const logp = this.output([R, k]);
    this.withInputs([logits], (l) => this.withInts(targets, (t) => this.runJob(Kernel.logSoftmaxGatherMany, R, [l, t, V, k, logp.at], logits.size * EXP_WORK)));
    return logp;
  }

  logSoftmaxGatherManyBackward(logits: Tensor, targets: Int32Array, k: number, dlogp: Tensor): Tensor {
    const V = rowsOf('logSoftmaxGatherManyBackward', logits, targets, k);
    if (dlogp.size !== targets.length) throw new EngineError(`logSoftmaxGatherManyBackward: ${dlogp.size} gradients for ${targets.length} targets`);
    const d = this.output(logits.shape);
    const R = targets.length / k;
    this.withInputs([logits, dlogp], (l, g) =>
      this.withInts(targets, (t) => this.runJob(Kernel.logSoftmaxGatherManyBackward, R, [l, t, g, V, k, d.at], logits.size * EXP_WORK)),
    );
    return d;
  }

  override reverseKl(logits: Tensor, teacherLogp: Tensor): Tensor {
    const R = reverseKlRows(logits, teacherLogp, 'reverseKl');
    const kl = this.output([R]);
    this.withInputs([logits, teacherLogp], (l, q) => this.runJob(Kernel.reverseKl, R, [l, q, logits.size / R, kl.at], logits.size * 2 * EXP_WORK));
    return kl;
  }

  override reverseKlBackward(logits: Tensor, teacherLogp: Tensor, dkl: Tensor): Tensor {
    const R = reverseKlRows(logits, teacherLogp, 'reverseKlBackward');
    if (dkl.size !== R) throw new EngineError(`reverseKlBackward: ${dkl.size} row gradients for ${R} rows`);
    const d = this.output(logits.shape);
    this.withInputs([logits, teacherLogp, dkl], (l, q, g) =>
      this.runJob(Kernel.reverseKlBackward, R, [l, q, g, logits.size / R, d.at], logits.size * 2 * EXP_WORK),
    );
    return d;
  }

  override async sample(logits: Tensor, o: SamplingOptions, uniforms: Float32Array): Promise<Picks> {
    const V = checkSampling(logits.size, o, uniforms);
    const R = uniforms.length;
    const WG = sampleBlocks(V);
    const greedy = isGreedy(o);
    const topK = o.topK > 0 && o.topK < V ? o.topK : 0;
    const topP = Math.min(o.topP, 1);
    // Each cut is a bisection of up to 32 passes over the row.
    const passes = greedy ? 1 : 2 + (topK ? 32 : 0) + (topP < 1 ? 33 : 0);
    return this.withInputs([logits], (l) =>
      this.withFloats(uniforms, (u) =>
        this.withScratch(R * 8, (picks) =>
          this.withThreadScratch(WG * 4, (slices, stride) => {
            const args = [l, u, V, Math.ceil(V / WG), WG, greedy ? 1 : 0, { f32: greedy ? 0 : 1 / o.temperature }, topK, { f32: topP }, picks, slices, stride];
            this.runJob(Kernel.sample, R, args, logits.size * passes * EXP_WORK);
            const words = this.heap.i32(picks, 2 * R);
            const values = this.heap.f32(picks, 2 * R);
            return { ids: Int32Array.from({ length: R }, (_, r) => words[2 * r]), logp: Float32Array.from({ length: R }, (_, r) => values[2 * r + 1]) };
          }),
        ),
      ),
    );
  }

  override async sumSquares(ts: readonly Tensor[]): Promise<number> {
    let s = 0;
    for (const t of ts) {
      const chunks = Math.ceil(t.size / SUMSQ_CHUNK);
      s += this.withInputs([t], (x) =>
        this.withScratch(chunks * 4, (partial) => {
          this.runJob(Kernel.sumSquares, chunks, [x, t.size, SUMSQ_CHUNK, partial], t.size);
          return this.heap.f32(partial, chunks).reduce((a, b) => a + b, 0);
        }),
      );
    }
    return s;
  }

  override adamwInPlace(param: Tensor, grad: Tensor, m: Tensor, v: Tensor, p: AdamWParams): void {
    const op = 'adamwInPlace';
    sameSizes(op, param, grad, m, v);
    const [w, mo, ve] = [written(param, op), written(m, op), written(v, op)];
    const f = (x: number) => ({ f32: x });
    const settings = [
      p.lr,
      p.beta1,
      p.beta2,
      1 - p.beta1,
      1 - p.beta2,
      p.eps,
      p.lr * p.weightDecay,
      1 - Math.pow(p.beta1, p.step),
      1 - Math.pow(p.beta2, p.step),
      p.gradScale,
    ];
    // About ten multiply-adds' worth a value, a divide and a square root among them.
    this.withInputs([grad], (g) => this.quads(Kernel.adamw, param.size, [w.at, g, mo.at, ve.at, param.size, ...settings.map(f)], 10));
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
   * c = op(a) @ op(b), or c += scale * op(a) @ op(b) when `add`, with either operand read as it
   * is stored. A weight's gradient (a^T b, a [K, M] and b [K, N]) with fewer columns than rows is
   * run as c^T = b^T a, written transposed: every thread packs all of the x operand, which is then
   * the small one, and the large one is split among them as column blocks.
   */
  private product(a: Tensor, b: Tensor, c: HeapTensor, M: number, K: number, N: number, transA: boolean, transB: boolean, add: boolean, scale: number): void {
    const swap = transA && !transB && N < M;
    const [ta, tb] = swap ? [1, 0] : [transA ? 1 : 0, transB ? 1 : 0];
    const [rows, cols] = swap ? [N, M] : [M, N];
    this.withInputs([a, b], (aa, ba) => {
      const [x, w] = swap ? [ba, aa] : [aa, ba];
      this.withThreadScratch(this.productScratch(K, cols, ta, this.threads), (scratch, stride) =>
        this.runJob(
          Kernel.products,
          Math.ceil(cols / 4),
          [x, ta, w, tb, c.at, swap ? 1 : 0, rows, K, cols, add ? 1 : 0, { f32: scale }, scratch, stride],
          M * N * K,
        ),
      );
    });
  }

  /** An element-wise job over n values, in quads; `work` is one value's. */
  private quads(kernel: number, n: number, args: readonly Arg[], work: number): void {
    this.runJob(kernel, Math.ceil(n / 4), args, n * work);
  }

  private runJob(kernel: number, items: number, args: readonly Arg[], work: number): void {
    if (items === 0) return;
    writeJob(this.heap.memory, kernel, items, args);
    this.pool.run(work);
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

  private withFloats<R>(v: Float32Array, use: (at: number) => R): R {
    return this.withScratch(v.length * 4, (p) => {
      this.heap.f32(p, v.length).set(v);
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

/** A tensor an op writes in place: one of this backend's f32 tensors (a packed weight has no f32 storage). */
function written(t: Tensor, op: string): HeapTensor {
  if (!(t instanceof HeapTensor)) throw new EngineError(`${op}: writes f32 tensors of this backend, got a ${t.dtype} tensor of shape [${t.shape}]`);
  return t;
}

/** Element-wise operands must match: a kernel reads as many values from each. */
function sameSizes(op: string, first: Tensor, ...rest: Tensor[]): void {
  for (const t of rest) if (t.size !== first.size) throw new EngineError(`${op}: shapes [${first.shape}] and [${t.shape}] hold different numbers of values`);
}

/** Rows of width D in x. */
function normRows(op: string, x: Tensor, D: number): number {
  if (D === 0 || x.size % D !== 0) throw new EngineError(`${op}: x [${x.shape}] is not rows of the weight's ${D} values`);
  return x.size / D;
}

/** The row width of logits [R, V] with `perRow` targets a row, each in [0, V). */
function rowsOf(op: string, logits: Tensor, targets: Int32Array, perRow = 1): number {
  const R = targets.length / perRow;
  const V = R ? logits.size / R : 0;
  if (!Number.isInteger(R) || !Number.isInteger(V)) throw new EngineError(`${op}: ${logits.size} logits are not ${targets.length} / ${perRow} rows`);
  for (const t of targets) if (!(t >= 0 && t < V)) throw new EngineError(`${op}: target ${t} out of range [0, ${V})`);
  return V;
}
