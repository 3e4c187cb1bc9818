/**
 * GFLOP/s of the backend's n x n x n f32 matmul. Unlike benchMatmul (src/gpu/webgpu/bench.ts),
 * which times one batch of products, every repetition here is timed to its read, so the figure
 * is a median like the others and a slow adapter is not made to run extra ones. A repetition is
 * `productsPerRep` products (1 unless asked): on a fast GPU one 4096^3 product takes a few
 * milliseconds, about what a submit and a read cost, so a share of the device's peak needs
 * several per wait.
 */
import type { Backend } from '../../src/gpu/backend';
import { mulberry32 } from '../../src/gpu/random';
import { rate, repsFor, timeMs, warmUp } from './stats';
import { isSkipped, type MatmulCell, type Maybe } from './types';
import type { Workload } from './workload';

export async function measureMatmul(be: Backend, w: Workload, productsPerRep = 1): Promise<Maybe<MatmulCell>> {
  const n = w.matmulN;
  const r = mulberry32(n);
  const random = () =>
    be.tensor(
      Float32Array.from({ length: n * n }, () => r() - 0.5),
      [n, n],
    );
  const a = random();
  const b = random();
  // read() is the interface's only way to wait for the device; reading one row of the last
  // product waits for every product before it without timing the copy of a whole n x n result.
  const firstRow = Int32Array.of(0);
  const product = async () => {
    let c = be.matmul(a, b, false, false);
    for (let i = 1; i < productsPerRep; i++) {
      be.dispose(c);
      c = be.matmul(a, b, false, false);
    }
    const row = be.gatherRows(c, firstRow);
    be.dispose(c);
    await be.read(row);
    be.dispose(row);
  };
  try {
    const warm = await warmUp(product, w.reps, w.budgetMs);
    if (isSkipped(warm)) return warm;
    const gflops: number[] = [];
    for (let i = repsFor(warm, w.reps, w.maxReps, w.cheapMs); i > 0; i--) gflops.push((2 * n ** 3 * productsPerRep) / ((await timeMs(product)) / 1000) / 1e9);
    return { n, productsPerRep, gflops: rate(gflops, warm.warmups) };
  } finally {
    be.dispose(a);
    be.dispose(b);
  }
}
