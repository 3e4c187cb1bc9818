/**
 * The fast CPU backend's memory: one shared WebAssembly.Memory that the kernels of every thread
 * read, carved into blocks from JavaScript. Tensors are Float32Array views of their block; the
 * memory is shared, so growing it never detaches a view.
 */
import { EngineError } from '../errors';

const PAGE = 65536;
/** wasm32's limit: 4 GiB. */
const MAX_PAGES = 65536;
/** Blocks start on a cache line, so a vector load never splits one. */
const ALIGN = 64;

export class HeapFullError extends EngineError {
  constructor(bytes: number) {
    super(
      `the fast CPU backend's memory (4 GiB, wasm32's limit) cannot hold another ${(bytes / 2 ** 20).toFixed(1)} MiB: store the weights smaller (--quantize f16 or q8), use a shorter context or smaller batch, or use --backend cpu-reference`,
    );
  }
}

export class WasmHeap {
  readonly memory: WebAssembly.Memory;
  /** Free blocks, sorted by address, never adjacent (neighbours are merged). */
  private readonly free: { at: number; size: number }[] = [];
  private readonly sizes = new Map<number, number>();
  private end: number;

  /** `reserved` bytes at the bottom are the caller's (control words, the kernels' static data). */
  constructor(reserved: number) {
    this.memory = new WebAssembly.Memory({ initial: Math.ceil((reserved + 16 * 2 ** 20) / PAGE), maximum: MAX_PAGES, shared: true });
    this.end = align(reserved);
  }

  /** A block of at least `bytes`; its contents are whatever the last owner left. */
  alloc(bytes: number): number {
    const size = align(Math.max(bytes, 1));
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      if (this.free[i].size >= size && (best < 0 || this.free[i].size < this.free[best].size)) best = i;
    }
    let at: number;
    if (best >= 0) {
      const block = this.free[best];
      at = block.at;
      if (block.size === size) this.free.splice(best, 1);
      else this.free[best] = { at: at + size, size: block.size - size };
    } else {
      at = this.end;
      const need = at + size - this.memory.buffer.byteLength;
      if (need > 0) {
        try {
          this.memory.grow(Math.ceil(Math.max(need, this.memory.buffer.byteLength / 4) / PAGE));
        } catch {
          try {
            this.memory.grow(Math.ceil(need / PAGE));
          } catch {
            throw new HeapFullError(size);
          }
        }
      }
      this.end = at + size;
    }
    this.sizes.set(at, size);
    return at;
  }

  release(at: number): void {
    const size = this.sizes.get(at);
    if (size === undefined) throw new EngineError(`the fast CPU backend freed a block at ${at} it does not hold: a tensor was disposed twice`);
    this.sizes.delete(at);
    let lo = 0;
    let hi = this.free.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.free[mid].at < at) lo = mid + 1;
      else hi = mid;
    }
    let block = { at, size };
    const next = this.free[lo];
    if (next && block.at + block.size === next.at) {
      block = { at, size: size + next.size };
      this.free.splice(lo, 1);
    }
    const prev = this.free[lo - 1];
    if (prev && prev.at + prev.size === block.at) {
      block = { at: prev.at, size: prev.size + block.size };
      this.free.splice(--lo, 1);
    }
    // A block that ends at the top goes back to the unused space above.
    if (block.at + block.size === this.end) this.end = block.at;
    else this.free.splice(lo, 0, block);
  }

  f32(at: number, length: number): Float32Array {
    return new Float32Array(this.memory.buffer, at, length);
  }

  i32(at: number, length: number): Int32Array {
    return new Int32Array(this.memory.buffer, at, length);
  }

  /** Bytes in blocks now held. */
  held(): number {
    let n = 0;
    for (const s of this.sizes.values()) n += s;
    return n;
  }
}

function align(n: number): number {
  return Math.ceil(n / ALIGN) * ALIGN;
}
