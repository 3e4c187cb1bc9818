/**
 * The jobs the kernels run (assembly/index.ts reads them): a kernel id, the number of work items
 * the threads split, then i32 arguments (addresses, sizes, f32 bit patterns). The argument lists
 * here and the calls in runJob name the same values in the same order.
 */
import { JOB } from './threads';

export const Kernel = {
  products: 1,
  attention: 3,
  attentionBackward: 4,
  addScaled: 5,
  siluMul: 6,
  siluMulBackward: 7,
  adamw: 8,
  sumSquares: 9,
  logSoftmaxGather: 10,
  logSoftmaxGatherBackward: 11,
  reverseKl: 12,
  reverseKlBackward: 13,
  rmsnorm: 14,
  rmsnormBackward: 15,
  rmsInv: 16,
  rmsnormWeightGrad: 17,
  sample: 18,
  logSoftmaxGatherMany: 19,
  logSoftmaxGatherManyBackward: 20,
} as const;

export type Arg = number | { f32: number };

/** Writes a job at JOB in `memory`. */
export function writeJob(memory: WebAssembly.Memory, kernel: number, items: number, args: readonly Arg[]): void {
  const words = new Int32Array(memory.buffer, JOB, 2 + args.length);
  const floats = new Float32Array(memory.buffer, JOB, 2 + args.length);
  words[0] = kernel;
  words[1] = items;
  args.forEach((a, i) => {
    if (typeof a === 'number') words[2 + i] = a;
    else floats[2 + i] = a.f32;
  });
}
