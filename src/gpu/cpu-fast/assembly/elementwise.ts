// Element-wise kernels on 128-bit SIMD. Item q is elements [4q, 4q + 4) of n, the last quad cut
// at n (vec.ts), so an element's bits do not depend on how the quads were split. The formulas,
// in the same order, are the WebGPU kernels' (elementwise.wgsl.ts, swiglu.wgsl.ts, adamw.wgsl.ts).
import { hsum } from './gemm';
import { BLOCK } from './rows';
import { expv, ld, st } from './vec';

/** out = a + scale * b for quads [q0, q1); out may be a. */
export function addScaled(a: usize, b: usize, out: usize, n: i32, scale: f32, q0: i32, q1: i32): void {
  const s = f32x4.splat(scale);
  for (let q = q0; q < q1; q++) {
    const i = q << 2;
    st(out, i, n, f32x4.add(ld(a, i, n), f32x4.mul(s, ld(b, i, n))));
  }
}

/** 1 / (1 + e^-g): e^-g overflows to +Infinity below g = -88 and the quotient is the limit, 0. */
@inline function sigmoid(g: v128): v128 {
  const one = f32x4.splat(1);
  return f32x4.div(one, f32x4.add(one, expv(f32x4.neg(g))));
}

/** out = silu(gate) * up = gate * sigmoid(gate) * up. */
export function siluMul(gate: usize, up: usize, out: usize, n: i32, q0: i32, q1: i32): void {
  for (let q = q0; q < q1; q++) {
    const i = q << 2;
    const g = ld(gate, i, n);
    st(out, i, n, f32x4.mul(f32x4.mul(g, sigmoid(g)), ld(up, i, n)));
  }
}

/** dUp = dh * silu(gate); dGate = dh * up * s * (1 + gate * (1 - s)), s = sigmoid(gate). */
export function siluMulBackward(gate: usize, up: usize, dh: usize, dGate: usize, dUp: usize, n: i32, q0: i32, q1: i32): void {
  const one = f32x4.splat(1);
  for (let q = q0; q < q1; q++) {
    const i = q << 2;
    const g = ld(gate, i, n);
    const d = ld(dh, i, n);
    const s = sigmoid(g);
    st(dUp, i, n, f32x4.mul(f32x4.mul(d, g), s));
    const ds = f32x4.mul(f32x4.mul(f32x4.mul(d, ld(up, i, n)), s), f32x4.add(one, f32x4.mul(g, f32x4.sub(one, s))));
    st(dGate, i, n, ds);
  }
}

/**
 * AdamW in place (ops/adamw.ts): moments from the scaled gradient, decoupled decay, then the
 * bias-corrected step. The host computes 1 - beta1, 1 - beta2, lr * weightDecay and the bias
 * corrections in f64: in f32, 1 - 0.999 is off by 1e-5 and beta2^step loses digits.
 */
export function adamw(w: usize, g: usize, m: usize, v: usize, n: i32, lr: f32, beta1: f32, beta2: f32, oneMinusBeta1: f32, oneMinusBeta2: f32, eps: f32, lrDecay: f32, bc1: f32, bc2: f32, gradScale: f32, q0: i32, q1: i32): void {
  const b1 = f32x4.splat(beta1);
  const b2 = f32x4.splat(beta2);
  const c1 = f32x4.splat(oneMinusBeta1);
  const c2 = f32x4.splat(oneMinusBeta2);
  const lrv = f32x4.splat(lr);
  const decay = f32x4.splat(lrDecay);
  const bc1v = f32x4.splat(bc1);
  const bc2v = f32x4.splat(bc2);
  const epsv = f32x4.splat(eps);
  const gs = f32x4.splat(gradScale);
  for (let q = q0; q < q1; q++) {
    const i = q << 2;
    const gi = f32x4.mul(ld(g, i, n), gs);
    const mi = f32x4.add(f32x4.mul(b1, ld(m, i, n)), f32x4.mul(c1, gi));
    const vi = f32x4.add(f32x4.mul(b2, ld(v, i, n)), f32x4.mul(f32x4.mul(c2, gi), gi));
    st(m, i, n, mi);
    st(v, i, n, vi);
    let wi = ld(w, i, n);
    wi = f32x4.sub(wi, f32x4.mul(decay, wi));
    wi = f32x4.sub(wi, f32x4.div(f32x4.mul(lrv, f32x4.div(mi, bc1v)), f32x4.add(f32x4.sqrt(f32x4.div(vi, bc2v)), epsv)));
    st(w, i, n, wi);
  }
}

/**
 * out[c] = the sum of squares of x's chunk c (`chunk` values, a multiple of 4, the last chunk cut
 * at n), for chunks [c0, c1): partial sums of a fixed size, so the total does not depend on the split.
 */
export function sumSquares(x: usize, n: i32, chunk: i32, out: usize, c0: i32, c1: i32): void {
  for (let c = c0; c < c1; c++) {
    const end = min(n, (c + 1) * chunk);
    let acc = f32x4.splat(0);
    for (let i = c * chunk; i < end; ) {
      const stop = min(end, i + BLOCK);
      let block = f32x4.splat(0);
      for (; i < stop; i += 4) {
        const v = ld(x, i, end);
        block = f32x4.add(block, f32x4.mul(v, v));
      }
      acc = f32x4.add(acc, block);
    }
    store<f32>(out + (<usize>c << 2), hsum(acc));
  }
}
