/**
 * GFLOP/s of the backend's n x n x n f32 matmul. Unlike benchMatmul (src/gpu/webgpu/bench.ts),
 * which times one batch of products, every product here is one repetition timed to its read,
 * so the figure is a median like the others and a slow adapter is not made to run extra ones.
 */
import type { Backend } from '../../src/gpu/backend';
import { mulberry32 } from '../../src/gpu/random';
import { rate, repsFor, timeMs, warmUp } from './stats';
import { isSkipped, type MatmulCell, type Maybe } from './types';
import type { Workload } from './workload';

export async function measureMatmul(be: Backend, w: Workload): Promise<Maybe<MatmulCell>> {
  const n = w.matmulN;
  const r = mulberry32(n);
  const random = () =>
    be.tensor(
      Float32Array.from({ length: n * n }, () => r() - 0.5),
      [n, n],
    );
  const a = random();
  const b = random();
  // read() is the interface's only way to wait for the device.
  const product = async () => {
    const c = be.matmul(a, b, false, false);
    await be.read(c);
    be.dispose(c);
  };
  try {
    const warm = await warmUp(product, w.reps, w.budgetMs);
    if (isSkipped(warm)) return warm;
    const gflops: number[] = [];
    for (let i = repsFor(warm, w.reps, w.maxReps, w.cheapMs); i > 0; i--) gflops.push((2 * n ** 3) / ((await timeMs(product)) / 1000) / 1e9);
    return { n, gflops: rate(gflops, warm.warmups) };
  } finally {
    be.dispose(a);
    be.dispose(b);
  }
}
