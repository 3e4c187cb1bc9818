/**
 * Reuses freed GPU buffers by size class. Decoding allocates and frees the same few activation
 * shapes every token; creating buffers each time costs far more than the kernels on small
 * models. Classes are an eighth of an octave apart, so a reused buffer wastes at most 12.5%.
 *
 * Reuse inside one unsubmitted command encoder is safe: commands execute in recording order, so
 * a dispatch that writes a recycled buffer runs after every earlier dispatch that read it. Only
 * queue.writeBuffer jumps that order, which is why uploads go through the runtime's arena.
 */
export class BufferPool {
  private free = new Map<number, GPUBuffer[]>();
  /** Bytes of GPU memory this pool created and has not destroyed (live plus cached). */
  createdBytes = 0;
  cachedBytes = 0;

  constructor(
    private readonly device: GPUDevice,
    private readonly usage: GPUBufferUsageFlags,
    private readonly label: string,
  ) {}

  static sizeClass(bytes: number): number {
    if (bytes <= 256) return 256;
    const octave = 2 ** Math.floor(Math.log2(bytes));
    const step = Math.max(256, octave / 8);
    return Math.ceil(bytes / step) * step;
  }

  /** A buffer of at least `bytes`; its real size is `buffer.size`. */
  acquire(bytes: number, maxBytes: number): GPUBuffer {
    let size = BufferPool.sizeClass(bytes);
    // Near the device limit the class may overshoot it; the exact size is still legal.
    if (size > maxBytes) size = Math.ceil(bytes / 4) * 4;
    const list = this.free.get(size);
    const reused = list?.pop();
    if (reused) {
      this.cachedBytes -= size;
      return reused;
    }
    this.createdBytes += size;
    return this.device.createBuffer({ size, usage: this.usage, label: `${this.label}[${size}]` });
  }

  release(buffer: GPUBuffer): void {
    let list = this.free.get(buffer.size);
    if (!list) this.free.set(buffer.size, (list = []));
    list.push(buffer);
    this.cachedBytes += buffer.size;
  }

  /**
   * Destroys every cached buffer. Call only between batches: a cached buffer may still be named
   * by an unsubmitted command, so the runtime flushes first.
   */
  trim(): void {
    for (const list of this.free.values()) for (const b of list) b.destroy();
    this.createdBytes -= this.cachedBytes;
    this.cachedBytes = 0;
    this.free.clear();
  }
}
