import { like, type Arr } from './types';

/**
 * op(a) [M, K] @ op(b) [K, N] -> [M, N], where op transposes when the flag is set.
 * a is stored [M, K] (or [K, M] when transA), b is stored [K, N] (or [N, K] when transB).
 * Its backward is itself with other flags, so it has no separate backward.
 */
export function matmulForward(a: Arr, b: Arr, M: number, K: number, N: number, transA: boolean, transB: boolean): Arr {
  const out = like(a, M * N);
  for (let i = 0; i < M; i++) {
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) {
        const av = transA ? a[k * M + i] : a[i * K + k];
        const bv = transB ? b[j * K + k] : b[k * N + j];
        s += av * bv;
      }
      out[i * N + j] = s;
    }
  }
  return out;
}

/** nn.Linear: x [M, K] @ w[N, K]^T + bias. The hot path of the CPU backend, so rows stay contiguous. */
export function linearForward(x: Arr, w: Arr, bias: Arr | undefined, M: number, K: number, N: number): Arr {
  const out = like(x, M * N);
  for (let i = 0; i < M; i++) {
    const xo = i * K;
    for (let j = 0; j < N; j++) {
      const wo = j * K;
      let s = bias ? bias[j] : 0;
      for (let k = 0; k < K; k++) s += x[xo + k] * w[wo + k];
      out[i * N + j] = s;
    }
  }
  return out;
}
