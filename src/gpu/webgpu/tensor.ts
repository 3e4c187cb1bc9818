import { rowWidth, sizeOf, type Tensor } from '../backend';
import { EngineLimitError } from '../errors';
import { storedRowWidth, storedWords, type WeightFormat } from '../quant';

/** f32, or a packed weight format (quant.ts): f16 halves, q8 / q4 groups with f16 scales. */
export type StorageDType = WeightFormat;

/**
 * One buffer of a tensor. Tensors larger than one storage binding (maxStorageBufferBindingSize)
 * are split by rows of their first dimension; every other tensor has a single chunk.
 */
export interface Chunk {
  buffer: GPUBuffer;
  /** First row of the tensor held here, and how many rows. */
  rowStart: number;
  rows: number;
  /** Came from the buffer pool (activations) or was created at its exact size (weights). */
  pooled: boolean;
}

export class GpuTensor implements Tensor {
  readonly size: number;
  disposed = false;

  constructor(
    readonly shape: readonly number[],
    readonly dtype: StorageDType,
    readonly chunks: readonly Chunk[],
  ) {
    this.size = sizeOf(shape);
  }

  get rows(): number {
    return this.shape.length === 0 ? 1 : this.shape[0];
  }

  /** Elements per row of the first dimension: the unit a split never cuts. */
  get rowWidth(): number {
    return rowWidth(this.shape);
  }

  /** Values per stored row (a quantized row is padded to whole groups): the row stride kernels index with. */
  get rowStride(): number {
    return storedRowWidth(this.rowWidth, this.dtype);
  }

  /** Bytes the chunk's values occupy (its buffer may be larger: pool rounding, 4-byte alignment). */
  chunkBytes(c: Chunk): number {
    return storedWords(c.rows, this.rowWidth, this.dtype) * 4;
  }

  get isSplit(): boolean {
    return this.chunks.length > 1;
  }

  /** The single buffer of an unsplit tensor; `op` names the caller for the message. */
  buffer(op: string): GPUBuffer {
    if (this.chunks.length !== 1) {
      throw new EngineLimitError(
        `${op}: a tensor of shape [${this.shape}] is split across ${this.chunks.length} GPU buffers ` +
          `because it exceeds this adapter's maxStorageBufferBindingSize, and ${op} needs it in one buffer. ` +
          `Use smaller batches or sequence lengths, or a GPU with a larger binding limit.`,
      );
    }
    return this.chunks[0].buffer;
  }
}

/** How a tensor of `rows` x `rowBytes` is cut so that no chunk exceeds `maxBytes`. */
export function planChunks(rows: number, rowBytes: number, maxBytes: number): { rowStart: number; rows: number }[] {
  const total = rows * rowBytes;
  if (total <= maxBytes || rows <= 1) {
    if (total > maxBytes) {
      throw new EngineLimitError(`one row of ${rowBytes} bytes exceeds this adapter's storage binding limit of ${maxBytes} bytes`);
    }
    return [{ rowStart: 0, rows }];
  }
  const per = Math.floor(maxBytes / rowBytes);
  if (per < 1) {
    throw new EngineLimitError(`one row of ${rowBytes} bytes exceeds this adapter's storage binding limit of ${maxBytes} bytes`);
  }
  const out: { rowStart: number; rows: number }[] = [];
  for (let r = 0; r < rows; r += per) out.push({ rowStart: r, rows: Math.min(per, rows - r) });
  return out;
}
