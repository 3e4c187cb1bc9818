import { eachRowBlock, rowWidth, sizeOf, type WeightSource } from '../backend';
import { decodeRows, encodeRows, storedWords, type WeightFormat } from '../quant';
import { DeviceLostError, EngineLimitError } from '../errors';
import { ForeignTensorError, WebGPUValidationError } from './errors';
import { BufferPool } from './pool';
import { GpuTensor, planChunks, type Chunk, type StorageDType } from './tensor';
import { grid, type Params } from './wgsl';

export interface BufferBinding {
  buffer: GPUBuffer;
  offset: number;
  size: number;
}
export type BindingArg = GPUBuffer | BufferBinding;

export interface DispatchSpec<K extends string> {
  /** Pipeline cache key: everything the WGSL text depends on, nothing else. */
  key: string;
  wgsl: () => string;
  params: Params<K>;
  values: Readonly<Record<K, number>>;
  /** Storage bindings 1..n, in the order the WGSL declares them. */
  buffers: readonly BindingArg[];
  /** A count of workgroups (folded into a 2D grid) or an explicit grid. */
  workgroups: number | readonly [number, number, number];
}

export interface RuntimeOptions {
  /** Dispatches recorded before the batch is submitted without waiting for a read. */
  maxDispatchesPerBatch: number;
  /** Largest buffer a tensor may occupy before it is split by rows (tests force it small). */
  splitBytes: number;
  /** Per-batch staging for uniforms and small uploads. */
  arenaBytes: number;
  /**
   * Kernels may stage data through workgroup memory (tiled matmul, tree reductions); false on a
   * CPU-emulated adapter, where that is slow (see RowLanes in ./wgsl.ts).
   */
  workgroupMemory: boolean;
}

const ALIGN = 256; // minUniformBufferOffsetAlignment and minStorageBufferOffsetAlignment are at most 256
/** Uploads larger than this skip the arena and get a buffer of their own. */
const SMALL_UPLOAD = 256 * 1024;

// GPUBufferUsage is a global of the WebGPU implementation, absent until one is installed (Node's
// `webgpu` package assigns it), so flags are read when a runtime is built, never at import.
function usage(...names: (keyof typeof GPUBufferUsage)[]): number {
  return names.reduce((acc, n) => acc | (GPUBufferUsage[n] as number), 0);
}

const align = (n: number, a = ALIGN) => Math.ceil(n / a) * a;

interface CachedPipeline {
  pipeline: GPUComputePipeline;
  layout: GPUBindGroupLayout;
}
/** Per device, not per runtime: backends sharing a device (a serving and a test copy) compile once. */
const pipelineCaches = new WeakMap<GPUDevice, Map<string, CachedPipeline>>();

/**
 * The command stream of one device: a lazily created command encoder shared by every op until a
 * read (or the dispatch budget) submits it, a pipeline cache, a buffer pool, and an arena that
 * stages this batch's uniforms and small uploads and lands on the GPU with one writeBuffer just
 * before the submit (so those bytes are in place before any command of the batch runs).
 */
export class Runtime {
  readonly maxPerDim: number;
  private readonly storageUsage = usage('STORAGE', 'COPY_SRC', 'COPY_DST');
  private readonly pipelines: Map<string, CachedPipeline>;
  private readonly pool: BufferPool;
  private readonly readPool: BufferPool;
  private encoder: GPUCommandEncoder | null = null;
  private pass: GPUComputePassEncoder | null = null;
  private dispatches = 0;
  private batchOps = new Set<string>();
  private readonly arenaGpu: GPUBuffer;
  private readonly arenaCpu: ArrayBuffer;
  private readonly arenaView: DataView;
  private arenaUsed = 0;
  private pendingDestroy: GPUBuffer[] = [];
  private errors: Promise<void> = Promise.resolve();
  private firstError: Error | null = null;
  lostInfo: GPUDeviceLostInfo | null = null;
  allocated = 0;
  peak = 0;

  constructor(
    readonly device: GPUDevice,
    readonly f16: boolean,
    readonly options: RuntimeOptions,
  ) {
    this.maxPerDim = device.limits.maxComputeWorkgroupsPerDimension;
    let cache = pipelineCaches.get(device);
    if (!cache) pipelineCaches.set(device, (cache = new Map()));
    this.pipelines = cache;
    this.pool = new BufferPool(device, this.storageUsage, 'tensor');
    this.readPool = new BufferPool(device, usage('MAP_READ', 'COPY_DST'), 'readback');
    this.arenaCpu = new ArrayBuffer(options.arenaBytes);
    this.arenaView = new DataView(this.arenaCpu);
    this.arenaGpu = device.createBuffer({
      size: options.arenaBytes,
      usage: usage('UNIFORM', 'STORAGE', 'COPY_DST', 'COPY_SRC'),
      label: 'arena',
    });
  }

  get pooledBytes(): number {
    return this.pool.cachedBytes;
  }

  private ensureBatch(): GPUCommandEncoder {
    if (this.lostInfo) {
      throw new DeviceLostError(`the GPU device was lost (${this.lostInfo.reason}: ${this.lostInfo.message}); ` + 'create a new backend and reload the model');
    }
    if (!this.encoder) {
      this.device.pushErrorScope('out-of-memory');
      this.device.pushErrorScope('validation');
      this.encoder = this.device.createCommandEncoder();
    }
    return this.encoder;
  }

  private endPass(): void {
    this.pass?.end();
    this.pass = null;
  }

  /** Submits everything recorded so far. Cheap when nothing is pending. */
  flush(): void {
    if (!this.encoder) return;
    this.endPass();
    if (this.arenaUsed > 0) this.device.queue.writeBuffer(this.arenaGpu, 0, this.arenaCpu, 0, this.arenaUsed);
    this.device.queue.submit([this.encoder.finish()]);
    // destroy() after submit waits for the submitted work, so deferred frees are safe here.
    for (const b of this.pendingDestroy) b.destroy();
    this.pendingDestroy = [];
    const ops = [...this.batchOps].join(', ');
    const validation = this.device.popErrorScope();
    const oom = this.device.popErrorScope();
    this.errors = Promise.all([this.errors, validation, oom]).then(([, v, o]) => {
      if (this.firstError) return;
      if (o) {
        this.firstError = new EngineLimitError(
          `the GPU ran out of memory during [${ops}]: ${o.message}. Free tensors, use a smaller model, ` + 'shorter sequences or smaller batches',
        );
      } else if (v) {
        this.firstError = new WebGPUValidationError(`WebGPU rejected a command in [${ops}]: ${v.message}`);
      }
    });
    this.encoder = null;
    this.arenaUsed = 0;
    this.dispatches = 0;
    this.batchOps.clear();
  }

  /** Waits for every submitted batch's error report; throws the first error seen. */
  async checkErrors(): Promise<void> {
    await this.errors;
    if (this.firstError) throw this.firstError;
  }

  async sync(): Promise<void> {
    this.ensureBatch();
    this.flush();
    await this.device.queue.onSubmittedWorkDone();
    await this.checkErrors();
  }

  // ---- arena -------------------------------------------------------------------------------

  /** Reserves `bytes` of this batch's arena, submitting the batch first when it is full. */
  private arenaAlloc(bytes: number): number {
    const size = align(bytes);
    // Callers send anything larger through a buffer of its own; this guards that contract.
    if (size > this.options.arenaBytes) throw new EngineLimitError(`an upload of ${bytes} bytes exceeds the ${this.options.arenaBytes}-byte arena`);
    if (this.arenaUsed + size > this.options.arenaBytes) this.flush();
    this.ensureBatch();
    const off = this.arenaUsed;
    this.arenaUsed += size;
    return off;
  }

  /** Int32 data bound read-only (ids, positions, targets): a slice of the arena, or its own buffer. */
  uploadInts(data: Int32Array): BindingArg {
    const bytes = Math.max(4, data.byteLength);
    if (bytes > SMALL_UPLOAD) {
      const buffer = this.device.createBuffer({ size: align(bytes, 4), usage: this.storageUsage, mappedAtCreation: true });
      new Int32Array(buffer.getMappedRange()).set(data);
      buffer.unmap();
      this.ensureBatch();
      this.pendingDestroy.push(buffer);
      return buffer;
    }
    const off = this.arenaAlloc(bytes);
    new Int32Array(this.arenaCpu, off, data.length).set(data);
    return { buffer: this.arenaGpu, offset: off, size: align(bytes, 4) };
  }

  // ---- tensors -----------------------------------------------------------------------------

  private track(t: GpuTensor): GpuTensor {
    for (const c of t.chunks) this.allocated += c.buffer.size;
    this.peak = Math.max(this.peak, this.allocated);
    return t;
  }

  private plan(shape: readonly number[], dtype: StorageDType, maxBytes = this.options.splitBytes) {
    const rows = shape.length === 0 ? 1 : shape[0];
    const width = rowWidth(shape);
    // One row's words bound any r rows' (a packed row may share a block with its neighbour).
    return planChunks(rows, storedWords(1, width, dtype) * 4, maxBytes);
  }

  /**
   * An uninitialised f32 tensor from the pool, split like any tensor of its shape (outputs of
   * elementwise ops, which follow their inputs' chunks).
   */
  alloc(shape: readonly number[]): GpuTensor {
    return this.allocChunks(shape, this.plan(shape, 'f32'));
  }

  /** An output that `op` writes as one buffer: up to the device's binding limit, never split. */
  allocOut(shape: readonly number[], op: string): GpuTensor {
    const limit = Math.min(this.device.limits.maxStorageBufferBindingSize, this.device.limits.maxBufferSize);
    const bytes = sizeOf(shape) * 4;
    if (bytes > limit) {
      throw new EngineLimitError(
        `${op}: its output [${shape}] needs ${bytes} bytes, over this adapter's storage binding limit of ${limit}; ` +
          'use fewer rows per call (smaller batches or shorter chunks)',
      );
    }
    return this.allocChunks(shape, this.plan(shape, 'f32', limit));
  }

  private allocChunks(shape: readonly number[], plan: { rowStart: number; rows: number }[]): GpuTensor {
    this.ensureBatch();
    const width = rowWidth(shape);
    const chunks: Chunk[] = plan.map((p) => ({
      ...p,
      buffer: this.pool.acquire(Math.max(4, p.rows * width * 4), this.device.limits.maxBufferSize),
      pooled: true,
    }));
    return this.track(new GpuTensor(shape, 'f32', chunks));
  }

  zeros(shape: readonly number[]): GpuTensor {
    const t = this.alloc(shape);
    const enc = this.ensureBatch();
    this.endPass();
    for (const c of t.chunks) enc.clearBuffer(c.buffer);
    return t;
  }

  /**
   * Small uploads ride in the arena and a copy command, which keeps them in command order even
   * when the pooled buffer was read earlier in this unsubmitted batch. Large ones get a fresh
   * buffer mapped at creation: nothing recorded can name it yet, and nothing is copied twice.
   */
  upload(data: Float32Array, shape: readonly number[]): GpuTensor {
    this.ensureBatch();
    const width = rowWidth(shape);
    const chunks: Chunk[] = [];
    for (const p of this.plan(shape, 'f32')) {
      const n = p.rows * width;
      const src = data.subarray(p.rowStart * width, p.rowStart * width + n);
      const bytes = Math.max(4, n * 4);
      if (bytes <= SMALL_UPLOAD) {
        const buffer = this.pool.acquire(bytes, this.device.limits.maxBufferSize);
        const off = this.arenaAlloc(bytes);
        new Float32Array(this.arenaCpu, off, n).set(src);
        this.endPass();
        this.ensureBatch().copyBufferToBuffer(this.arenaGpu, off, buffer, 0, bytes);
        chunks.push({ ...p, buffer, pooled: true });
        continue;
      }
      const buffer = this.device.createBuffer({ size: BufferPool.sizeClass(bytes), usage: this.storageUsage, mappedAtCreation: true, label: 'upload' });
      new Float32Array(buffer.getMappedRange(), 0, n).set(src);
      buffer.unmap();
      chunks.push({ ...p, buffer, pooled: true });
    }
    return this.track(new GpuTensor(shape, 'f32', chunks));
  }

  /**
   * A long-lived weight in `format`, at its exact size outside the pool: each chunk's buffer is
   * mapped at creation and filled a block of rows at a time, converted from the source as it goes.
   */
  uploadWeight(src: WeightSource, format: WeightFormat): GpuTensor {
    this.ensureBatch();
    const shape = src.shape;
    const width = rowWidth(shape);
    const chunks: Chunk[] = [];
    try {
      for (const p of this.plan(shape, format)) {
        const words = Math.max(1, storedWords(p.rows, width, format));
        const buffer = this.device.createBuffer({ size: words * 4, usage: this.storageUsage, mappedAtCreation: true, label: `weight:${format}` });
        chunks.push({ ...p, buffer, pooled: false });
        const range = buffer.getMappedRange();
        const f32 = new Float32Array(range);
        const u32 = new Uint32Array(range);
        eachRowBlock(src, p.rowStart, p.rows, (data, at) => (format === 'f32' ? f32.set(data, at * width) : encodeRows(data, width, at, format, u32)));
        buffer.unmap();
      }
    } catch (e) {
      for (const c of chunks) c.buffer.destroy();
      throw e;
    }
    return this.track(new GpuTensor(shape, format, chunks));
  }

  free(t: GpuTensor): void {
    if (t.disposed) return;
    t.disposed = true;
    for (const c of t.chunks) {
      this.allocated -= c.buffer.size;
      if (c.pooled) this.pool.release(c.buffer);
      else if (this.encoder) this.pendingDestroy.push(c.buffer);
      else c.buffer.destroy();
    }
  }

  /** Destroys cached pool buffers (after submitting, since the batch may still name them). */
  trim(): void {
    this.flush();
    this.pool.trim();
    this.readPool.trim();
  }

  /** Reads a tensor back as f32, whatever its storage dtype and split. */
  async read(t: GpuTensor): Promise<Float32Array> {
    const width = t.rowWidth;
    // Copies need 4-byte offsets and sizes, so each chunk gets its own whole-word slot.
    const slots = t.chunks.map((c) => t.chunkBytes(c));
    const bytes = Math.max(
      4,
      slots.reduce((a, n) => a + n, 0),
    );
    const staging = this.readPool.acquire(bytes, Number.MAX_SAFE_INTEGER);
    const enc = this.ensureBatch();
    this.endPass();
    let off = 0;
    t.chunks.forEach((c, i) => {
      if (slots[i] > 0) enc.copyBufferToBuffer(c.buffer, 0, staging, off, slots[i]);
      off += slots[i];
    });
    const raw = await this.mapRead(staging, bytes);
    const out = new Float32Array(t.size);
    off = 0;
    t.chunks.forEach((c, i) => {
      const n = c.rows * width;
      const part = t.dtype === 'f32' ? new Float32Array(raw, off, n) : decodeRows(new Uint32Array(raw, off, slots[i] / 4), width, 0, c.rows, t.dtype);
      out.set(part, c.rowStart * width);
      off += slots[i];
    });
    return out;
  }

  /** Reads `count` i32 values from the start of a buffer (argmax results). */
  async readInts(buffer: GPUBuffer, count: number): Promise<Int32Array> {
    const bytes = align(Math.max(4, count * 4), 4);
    const staging = this.readPool.acquire(bytes, Number.MAX_SAFE_INTEGER);
    const enc = this.ensureBatch();
    this.endPass();
    enc.copyBufferToBuffer(buffer, 0, staging, 0, bytes);
    return new Int32Array(await this.mapRead(staging, bytes), 0, count);
  }

  private async mapRead(staging: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
    this.flush();
    try {
      await staging.mapAsync(GPUMapMode.READ, 0, bytes);
    } catch (e) {
      await this.checkErrors();
      if (this.lostInfo) throw new DeviceLostError(`the GPU device was lost while reading: ${this.lostInfo.message}`);
      throw e;
    }
    const copy = staging.getMappedRange(0, bytes).slice(0);
    staging.unmap();
    this.readPool.release(staging);
    await this.checkErrors();
    return copy;
  }

  // ---- commands ----------------------------------------------------------------------------

  private pipeline(key: string, wgsl: () => string) {
    let p = this.pipelines.get(key);
    if (!p) {
      const module = this.device.createShaderModule({ code: wgsl(), label: key });
      const pipeline = this.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' }, label: key });
      p = { pipeline, layout: pipeline.getBindGroupLayout(0) };
      this.pipelines.set(key, p);
    }
    return p;
  }

  dispatch<K extends string>(spec: DispatchSpec<K>): void {
    const enc = this.ensureBatch();
    const { pipeline, layout } = this.pipeline(spec.key, spec.wgsl);
    const off = this.arenaAlloc(spec.params.bytes);
    spec.params.write(this.arenaView, off, spec.values);
    const entries: GPUBindGroupEntry[] = [
      { binding: 0, resource: { buffer: this.arenaGpu, offset: off, size: spec.params.bytes } },
      ...spec.buffers.map((b, i) => ({
        binding: i + 1,
        resource: 'buffer' in b ? { buffer: b.buffer, offset: b.offset, size: b.size } : { buffer: b },
      })),
    ];
    const bindGroup = this.device.createBindGroup({ layout, entries });
    const wg = typeof spec.workgroups === 'number' ? grid(spec.workgroups, this.maxPerDim) : spec.workgroups;
    // arenaAlloc may have submitted the batch, so the encoder is fetched again.
    const current = this.encoder ?? enc;
    if (!this.pass) this.pass = current.beginComputePass();
    this.pass.setPipeline(pipeline);
    this.pass.setBindGroup(0, bindGroup);
    this.pass.dispatchWorkgroups(wg[0], wg[1], wg[2]);
    this.batchOps.add(spec.key.split(':')[0]);
    if (++this.dispatches >= this.options.maxDispatchesPerBatch) this.flush();
  }

  /** Checks a tensor belongs here and is alive. */
  own(t: unknown, op: string): GpuTensor {
    if (!(t instanceof GpuTensor)) throw new ForeignTensorError(`${op}: a tensor from another backend was passed to the WebGPU backend`);
    if (t.disposed) throw new ForeignTensorError(`${op}: the tensor of shape [${t.shape}] was already disposed`);
    return t;
  }
}
