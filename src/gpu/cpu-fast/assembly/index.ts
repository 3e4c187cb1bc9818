// The kernels' one entry point. The caller writes a job (kernel id, item count, arguments; the
// layout is ../jobs.ts's) and every thread calls runJob with its index: thread `tid` of `threads`
// takes a fixed contiguous share of the items, so the split depends on the thread count only.
import { attention, attentionBackward } from './attention';
import { adamw, addScaled, siluMul, siluMulBackward, sumSquares } from './elementwise';
import { products } from './gemm';
import { logSoftmaxGather, logSoftmaxGatherBackward, logSoftmaxGatherMany, logSoftmaxGatherManyBackward, reverseKl, reverseKlBackward, rmsInv, rmsnorm, rmsnormBackward, rmsnormWeightGrad } from './rows';
import { sample } from './sample';

export { productScratch } from './gemm';

@inline function arg(job: usize, i: i32): i32 {
  return load<i32>(job + (<usize>(i + 2) << 2));
}

@inline function argf(job: usize, i: i32): f32 {
  return load<f32>(job + (<usize>(i + 2) << 2));
}

/** Scratch of this thread: argument i is the base, i + 1 the bytes each thread gets. */
@inline function scratch(job: usize, i: i32, tid: i32): usize {
  return <usize>arg(job, i) + <usize>tid * <usize>arg(job, i + 1);
}

export function runJob(job: usize, tid: i32, threads: i32): void {
  const n = <i64>load<i32>(job, 4);
  const lo = <i32>((n * tid) / threads);
  const hi = <i32>((n * (tid + 1)) / threads);
  if (lo >= hi) return;
  switch (load<i32>(job)) {
    case 1:
      products(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), arg(job, 5), arg(job, 6), arg(job, 7), arg(job, 8), arg(job, 9), argf(job, 10), scratch(job, 11, tid), lo, hi);
      break;
    case 3:
      attention(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), arg(job, 5), arg(job, 6), arg(job, 7), arg(job, 8), arg(job, 9), arg(job, 10), scratch(job, 11, tid), lo, hi);
      break;
    case 4:
      attentionBackward(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), arg(job, 5), arg(job, 6), arg(job, 7), arg(job, 8), arg(job, 9), arg(job, 10), arg(job, 11), scratch(job, 12, tid), lo, hi);
      break;
    case 5:
      addScaled(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), argf(job, 4), lo, hi);
      break;
    case 6:
      siluMul(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), lo, hi);
      break;
    case 7:
      siluMulBackward(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), arg(job, 5), lo, hi);
      break;
    case 8:
      adamw(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), argf(job, 5), argf(job, 6), argf(job, 7), argf(job, 8), argf(job, 9), argf(job, 10), argf(job, 11), argf(job, 12), argf(job, 13), argf(job, 14), lo, hi);
      break;
    case 9:
      sumSquares(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), lo, hi);
      break;
    case 10:
      logSoftmaxGather(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), lo, hi);
      break;
    case 11:
      logSoftmaxGatherBackward(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), lo, hi);
      break;
    case 12:
      reverseKl(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), lo, hi);
      break;
    case 13:
      reverseKlBackward(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), lo, hi);
      break;
    case 14:
      rmsnorm(arg(job, 0), arg(job, 1), arg(job, 2), argf(job, 3), arg(job, 4), lo, hi);
      break;
    case 15:
      rmsnormBackward(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), argf(job, 4), arg(job, 5), lo, hi);
      break;
    case 16:
      rmsInv(arg(job, 0), arg(job, 1), argf(job, 2), arg(job, 3), lo, hi);
      break;
    case 17:
      rmsnormWeightGrad(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), arg(job, 5), lo, hi);
      break;
    case 18:
      sample(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), arg(job, 5), argf(job, 6), arg(job, 7), argf(job, 8), arg(job, 9), scratch(job, 10, tid), lo, hi);
      break;
    case 19:
      logSoftmaxGatherMany(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), lo, hi);
      break;
    case 20:
      logSoftmaxGatherManyBackward(arg(job, 0), arg(job, 1), arg(job, 2), arg(job, 3), arg(job, 4), arg(job, 5), lo, hi);
      break;
    default:
      unreachable();
  }
}

/**
 * The bench's peak: twelve independent multiply-add chains on vectors, as a matrix tile runs
 * them, for `n` rounds over 256 bytes at `buf`. Returns a lane so the work cannot be dropped.
 */
export function simdPeak(buf: usize, n: i32): f32 {
  const y0 = f32x4.splat(0.5);
  const y1 = f32x4.splat(1.5);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  let a8 = f32x4.splat(0), a9 = f32x4.splat(0), a10 = f32x4.splat(0), a11 = f32x4.splat(0);
  for (let i = 0; i < n; i++) {
    const x = v128.load(buf + (<usize>(i & 15) << 4));
    a0 = f32x4.add(a0, f32x4.mul(x, y0));
    a1 = f32x4.add(a1, f32x4.mul(x, y1));
    a2 = f32x4.add(a2, f32x4.mul(x, y0));
    a3 = f32x4.add(a3, f32x4.mul(x, y1));
    a4 = f32x4.add(a4, f32x4.mul(x, y0));
    a5 = f32x4.add(a5, f32x4.mul(x, y1));
    a6 = f32x4.add(a6, f32x4.mul(x, y0));
    a7 = f32x4.add(a7, f32x4.mul(x, y1));
    a8 = f32x4.add(a8, f32x4.mul(x, y0));
    a9 = f32x4.add(a9, f32x4.mul(x, y1));
    a10 = f32x4.add(a10, f32x4.mul(x, y0));
    a11 = f32x4.add(a11, f32x4.mul(x, y1));
  }
  const s = f32x4.add(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)), f32x4.add(f32x4.add(f32x4.add(a4, a5), f32x4.add(a6, a7)), f32x4.add(f32x4.add(a8, a9), f32x4.add(a10, a11))));
  return f32x4.extract_lane(s, 0);
}
