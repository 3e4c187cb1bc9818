import type { Backend } from '../backend';
import { mulberry32 } from '../random';

/**
 * GFLOP/s of an n x n x n f32 matmul on `backend`: one warm-up product (compiles the pipeline),
 * then as many products as fit in ~`budgetMs` (at least 2), timed to the last read.
 */
export async function benchMatmul(backend: Backend, n: number, budgetMs = 1000): Promise<number> {
  const r = mulberry32(n);
  const data = () => Float32Array.from({ length: n * n }, () => r() - 0.5);
  const a = backend.tensor(data(), [n, n]);
  const b = backend.tensor(data(), [n, n]);
  const once = async (times: number) => {
    const t0 = performance.now();
    let last = backend.matmul(a, b, false, false);
    for (let i = 1; i < times; i++) {
      backend.dispose(last);
      last = backend.matmul(a, b, false, false);
    }
    // Reading one element would do, but read() is the interface's only sync point.
    await backend.read(last);
    backend.dispose(last);
    return performance.now() - t0;
  };
  const warm = await once(1);
  const times = Math.max(2, Math.min(1000, Math.round(budgetMs / Math.max(warm, 1e-3))));
  const ms = await once(times);
  backend.dispose(a);
  backend.dispose(b);
  return (2 * n ** 3 * times) / (ms / 1000) / 1e9;
}
