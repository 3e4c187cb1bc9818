import { like, type Arr } from './types';

/**
 * op(a) [M, K] @ op(b) [K, N] -> [M, N], where op transposes when the flag is set.
 * a is stored [M, K] (or [K, M] when transA), b is stored [K, N] (or [N, K] when transB).
 * Its backward is itself with other flags, so it has no separate backward.
 */
export function matmulForward(a: Arr, b: Arr, M: number, K: number, N: number, transA: boolean, transB: boolean): Arr {
  return product(a, b, undefined, M, K, N, transA, transB);
}

/** nn.Linear: x [M, K] @ w[N, K]^T + bias. */
export function linearForward(x: Arr, w: Arr, bias: Arr | undefined, M: number, K: number, N: number): Arr {
  return product(x, w, bias, M, K, N, false, true);
}

/**
 * out[i, j] = bias[j] + sum over k = 0..K-1, in that order, of op(a)[i, k] * op(b)[k, j], summed
 * in f64. Four outputs of a row are summed at once, sharing each read of a: four independent
 * chains of adds instead of one, which halves the time on one core, and each sum still runs over
 * k in order, so the results are the plain loop's, bit for bit.
 */
function product(a: Arr, b: Arr, bias: Arr | undefined, M: number, K: number, N: number, transA: boolean, transB: boolean): Arr {
  const out = like(a, M * N);
  // op(a)[i, k] is a[i * ai + k * ak]; op(b)[k, j] is b[k * bk + j * bj].
  const ai = transA ? 1 : K;
  const ak = transA ? M : 1;
  const bk = transB ? 1 : N;
  const bj = transB ? K : 1;
  for (let i = 0; i < M; i++) {
    let j = 0;
    for (; j + 3 < N; j += 4) {
      let s0 = bias ? bias[j] : 0;
      let s1 = bias ? bias[j + 1] : 0;
      let s2 = bias ? bias[j + 2] : 0;
      let s3 = bias ? bias[j + 3] : 0;
      for (let k = 0, pa = i * ai, pb = j * bj; k < K; k++, pa += ak, pb += bk) {
        const av = a[pa];
        s0 += av * b[pb];
        s1 += av * b[pb + bj];
        s2 += av * b[pb + 2 * bj];
        s3 += av * b[pb + 3 * bj];
      }
      out[i * N + j] = s0;
      out[i * N + j + 1] = s1;
      out[i * N + j + 2] = s2;
      out[i * N + j + 3] = s3;
    }
    for (; j < N; j++) {
      let s = bias ? bias[j] : 0;
      for (let k = 0, pa = i * ai, pb = j * bj; k < K; k++, pa += ak, pb += bk) s += a[pa] * b[pb];
      out[i * N + j] = s;
    }
  }
  return out;
}
