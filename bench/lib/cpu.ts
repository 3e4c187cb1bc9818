/**
 * The fast CPU backend against the machine: one core's peak, measured by the kernels' own loop
 * of vector multiply-adds (the matrix tile's instruction mix), times the threads the backend
 * runs; the n^3 matmul on one thread and on all of them, with each as a share of that peak; and
 * the other ops of a training step against the reference backend (cpu-ops.ts).
 */
import { CpuBackend } from '../../src/gpu/cpu/backend';
import { FastCpuBackend } from '../../src/gpu/cpu-fast/backend';
import { measureOps, type OpCell } from './cpu-ops';
import { measureMatmul } from './matmul';
import { round } from './stats';
import { isSkipped, type MatmulCell, type Maybe } from './types';
import type { Workload } from './workload';

export interface CpuFigures {
  threads: number;
  /** GFLOP/s of one core running the peak loop (a multiply and an add count two). */
  simdPeakGflopsPerCore: number;
  matmul: { oneThread: Maybe<MatmulCell>; allThreads: Maybe<MatmulCell> };
  /** Each matmul's median over the peak of the threads it ran on. */
  fractionOfPeak: { oneThread: Maybe<number>; allThreads: Maybe<number> };
  /** Each op's milliseconds on the reference backend and on this one, and the speedup. */
  ops: Record<string, Maybe<OpCell>>;
}

/** GFLOP/s of the peak loop on this thread: the best of a few timed runs after a warm-up. */
function simdPeak(be: FastCpuBackend): number {
  const rounds = 2_000_000;
  be.simdPeak(rounds);
  let best = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    be.simdPeak(rounds);
    best = Math.max(best, (rounds * 12 * 4 * 2) / ((performance.now() - t0) / 1000) / 1e9);
  }
  return best;
}

export async function measureCpu(one: FastCpuBackend, all: FastCpuBackend, w: Workload): Promise<CpuFigures> {
  const perCore = simdPeak(one);
  const oneThread = await measureMatmul(one, w);
  const allThreads = await measureMatmul(all, w);
  const share = (cell: Maybe<MatmulCell>, threads: number): Maybe<number> => (isSkipped(cell) ? cell : round(cell.gflops.median / (perCore * threads)));
  return {
    threads: all.threads,
    simdPeakGflopsPerCore: round(perCore),
    matmul: { oneThread, allThreads },
    fractionOfPeak: { oneThread: share(oneThread, 1), allThreads: share(allThreads, all.threads) },
    ops: await measureOps(new CpuBackend(), one, all, w),
  };
}
