// Row kernels on 128-bit SIMD: the log-softmax gather and the reverse KL of the loss, and
// RMSNorm. Item r is row r, which one thread computes whole, so a row's sums run in one order
// (four lanes along the row, the lanes added as gemm.ts adds them, then the tail in order)
// whatever the split. The formulas are the WebGPU kernels' (softmax.wgsl.ts, reverse-kl.wgsl.ts,
// rmsnorm.wgsl.ts).
import { hsum } from './gemm';
import { exp1, expv, ld, lanesMax, st } from './vec';

/**
 * Values a long sum adds into a block of its own before the block joins the total: rounding
 * grows with the terms added one after another, here 16 per lane and one per block, where one
 * running sum per lane took 1250 at V = 5000 and lost a digit.
 */
export const BLOCK = 64;

@inline function at(p: usize, i: i32): usize {
  return p + (<usize>i << 2);
}

/** The largest of x[0, V); NaN if any is NaN, as the reference's Math.max gives. */
export function rowMax(x: usize, V: i32): f32 {
  let mv = f32x4.splat(-Infinity);
  let i = 0;
  for (; i + 4 <= V; i += 4) mv = f32x4.max(mv, v128.load(at(x, i)));
  let m = lanesMax(mv);
  for (; i < V; i++) m = Mathf.max(m, load<f32>(at(x, i)));
  return m;
}

/** The sum over x[0, V) of e^(x - m); where `e` is not 0, each e^(x - m) is stored there too. */
export function rowExpSum(x: usize, V: i32, m: f32, e: usize): f32 {
  const mv = f32x4.splat(m);
  const V4 = V & ~3;
  let acc = f32x4.splat(0);
  let i = 0;
  while (i < V4) {
    const end = min(V4, i + BLOCK);
    let block = f32x4.splat(0);
    for (; i < end; i += 4) {
      const v = expv(f32x4.sub(v128.load(at(x, i)), mv));
      if (e) v128.store(at(e, i), v);
      block = f32x4.add(block, v);
    }
    acc = f32x4.add(acc, block);
  }
  let s = hsum(acc);
  for (; i < V; i++) {
    const v = exp1(load<f32>(at(x, i)) - m);
    if (e) store<f32>(at(e, i), v);
    s += v;
  }
  return s;
}

/**
 * Rows [r0, r1) of logits [R, V]: logp[r] = log softmax(row)[targets[r]], and the row's entropy
 * log S - T / S from one pass of S = sum e^(x - m) and T = sum e^(x - m) (x - m).
 */
export function logSoftmaxGather(logits: usize, targets: usize, V: i32, logp: usize, entropy: usize, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const x = logits + <usize>r * (<usize>V << 2);
    const m = rowMax(x, V);
    const mv = f32x4.splat(m);
    const V4 = V & ~3;
    let sv = f32x4.splat(0);
    let tv = f32x4.splat(0);
    let i = 0;
    while (i < V4) {
      const end = min(V4, i + BLOCK);
      let sb = f32x4.splat(0);
      let tb = f32x4.splat(0);
      for (; i < end; i += 4) {
        const y = f32x4.sub(v128.load(at(x, i)), mv);
        const e = expv(y);
        sb = f32x4.add(sb, e);
        tb = f32x4.add(tb, f32x4.mul(e, y));
      }
      sv = f32x4.add(sv, sb);
      tv = f32x4.add(tv, tb);
    }
    let s = hsum(sv);
    let t = hsum(tv);
    for (; i < V; i++) {
      const y = load<f32>(at(x, i)) - m;
      const e = exp1(y);
      s += e;
      t += e * y;
    }
    const logS = Mathf.log(s);
    store<f32>(at(logp, r), load<f32>(at(x, load<i32>(at(targets, r)))) - m - logS);
    store<f32>(at(entropy, r), logS - t / s);
  }
}

/** dlogits = dlogp * (onehot(target) - softmax(row)) for rows [r0, r1): e^(x - m) stored, then scaled by -dlogp / S. */
export function logSoftmaxGatherBackward(logits: usize, targets: usize, dlogp: usize, V: i32, d: usize, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const o = <usize>r * (<usize>V << 2);
    const x = logits + o;
    const dr = d + o;
    const g = load<f32>(at(dlogp, r));
    const s = rowExpSum(x, V, rowMax(x, V), dr);
    const k = f32x4.splat(-g / s);
    for (let i = 0; i < V; i += 4) st(dr, i, V, f32x4.mul(ld(dr, i, V), k));
    const t = at(dr, load<i32>(at(targets, r)));
    store<f32>(t, load<f32>(t) + g);
  }
}

/**
 * Rows [r0, r1) of logits [R, V] with k targets a row (targets and logp [R, k]): logp[r, j] =
 * log softmax(row)[targets[r, j]], from one pass over the row for all k; each is the bits
 * logSoftmaxGather gives that target (the same max and sum).
 */
export function logSoftmaxGatherMany(logits: usize, targets: usize, V: i32, k: i32, logp: usize, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const x = logits + <usize>r * (<usize>V << 2);
    const m = rowMax(x, V);
    const logS = Mathf.log(rowExpSum(x, V, m, 0));
    for (let j = r * k; j < (r + 1) * k; j++) store<f32>(at(logp, j), load<f32>(at(x, load<i32>(at(targets, j)))) - m - logS);
  }
}

/**
 * d(sum over j of dlogp[r, j] * logp[r, j]) / dlogits for rows [r0, r1), k targets a row:
 * -(sum of the row's dlogp) * softmax(row), then each dlogp[r, j] added at its target in order.
 */
export function logSoftmaxGatherManyBackward(logits: usize, targets: usize, dlogp: usize, V: i32, k: i32, d: usize, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const o = <usize>r * (<usize>V << 2);
    const x = logits + o;
    const dr = d + o;
    let g: f32 = 0;
    for (let j = r * k; j < (r + 1) * k; j++) g += load<f32>(at(dlogp, j));
    const s = rowExpSum(x, V, rowMax(x, V), dr);
    const c = f32x4.splat(-g / s);
    for (let i = 0; i < V; i += 4) st(dr, i, V, f32x4.mul(ld(dr, i, V), c));
    for (let j = r * k; j < (r + 1) * k; j++) {
      const t = at(dr, load<i32>(at(targets, j)));
      store<f32>(t, load<f32>(t) + load<f32>(at(dlogp, j)));
    }
  }
}

/** The row's log-sum-exp. */
@inline function rowLse(x: usize, V: i32): f32 {
  const m = rowMax(x, V);
  return m + Mathf.log(rowExpSum(x, V, m, 0));
}

/**
 * KL = sum p (lp - q) over the row, lp = x - lse, p = e^lp, q the teacher's log-prob; an entry
 * whose p underflows to 0 adds nothing (a teacher's -Infinity there stays harmless). Where `p`
 * is not 0, each p is stored there too.
 */
function rowKl(x: usize, q: usize, V: i32, lse: f32, p: usize): f32 {
  const lv = f32x4.splat(lse);
  const zero = f32x4.splat(0);
  const V4 = V & ~3;
  let acc = zero;
  let i = 0;
  while (i < V4) {
    const end = min(V4, i + BLOCK);
    let block = zero;
    for (; i < end; i += 4) {
      const lp = f32x4.sub(v128.load(at(x, i)), lv);
      const pv = expv(lp);
      if (p) v128.store(at(p, i), pv);
      block = f32x4.add(block, v128.and(f32x4.mul(pv, f32x4.sub(lp, v128.load(at(q, i)))), f32x4.gt(pv, zero)));
    }
    acc = f32x4.add(acc, block);
  }
  let kl = hsum(acc);
  for (; i < V; i++) {
    const lp = load<f32>(at(x, i)) - lse;
    const pi = exp1(lp);
    if (p) store<f32>(at(p, i), pi);
    if (pi > 0) kl += pi * (lp - load<f32>(at(q, i)));
  }
  return kl;
}

/** KL_r of rows [r0, r1) of logits [R, V] against the teacher's log-probs [R, V]. */
export function reverseKl(logits: usize, teacher: usize, V: i32, kl: usize, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const o = <usize>r * (<usize>V << 2);
    store<f32>(at(kl, r), rowKl(logits + o, teacher + o, V, rowLse(logits + o, V), 0));
  }
}

/** d(sum_r dkl[r] KL_r) / dlogits = dkl p (lp - q - KL), 0 where p underflows; p is stored by rowKl, then turned into d. */
export function reverseKlBackward(logits: usize, teacher: usize, dkl: usize, V: i32, d: usize, r0: i32, r1: i32): void {
  const zero = f32x4.splat(0);
  for (let r = r0; r < r1; r++) {
    const o = <usize>r * (<usize>V << 2);
    const x = logits + o;
    const q = teacher + o;
    const dr = d + o;
    const lse = rowLse(x, V);
    const kv = f32x4.splat(rowKl(x, q, V, lse, dr));
    const lv = f32x4.splat(lse);
    const g = f32x4.splat(load<f32>(at(dkl, r)));
    for (let i = 0; i < V; i += 4) {
      const p = ld(dr, i, V);
      const lp = f32x4.sub(ld(x, i, V), lv);
      const v = f32x4.mul(f32x4.mul(g, p), f32x4.sub(f32x4.sub(lp, ld(q, i, V)), kv));
      st(dr, i, V, v128.and(v, f32x4.gt(p, zero)));
    }
  }
}

/** 1 / sqrt(mean(x^2) + eps) of the row x[0, D). */
@inline function rowInv(x: usize, D: i32, eps: f32): f32 {
  let acc = f32x4.splat(0);
  let i = 0;
  for (; i + 4 <= D; i += 4) {
    const v = v128.load(at(x, i));
    acc = f32x4.add(acc, f32x4.mul(v, v));
  }
  let ss = hsum(acc);
  for (; i < D; i++) {
    const v = load<f32>(at(x, i));
    ss += v * v;
  }
  return 1 / Mathf.sqrt(ss / <f32>D + eps);
}

/** y = x * inv * w for rows [r0, r1) of width D = w's length. */
export function rmsnorm(x: usize, w: usize, D: i32, eps: f32, y: usize, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const o = <usize>r * (<usize>D << 2);
    const inv = f32x4.splat(rowInv(x + o, D, eps));
    for (let i = 0; i < D; i += 4) st(y + o, i, D, f32x4.mul(f32x4.mul(ld(x + o, i, D), inv), ld(w, i, D)));
  }
}

/** dx = inv * w * dy - c * x, c = inv^3 * sum(w * dy * x) / D, for rows [r0, r1). */
export function rmsnormBackward(x: usize, w: usize, dy: usize, D: i32, eps: f32, dx: usize, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const o = <usize>r * (<usize>D << 2);
    const inv = rowInv(x + o, D, eps);
    let acc = f32x4.splat(0);
    for (let i = 0; i < D; i += 4) acc = f32x4.add(acc, f32x4.mul(f32x4.mul(ld(w, i, D), ld(dy + o, i, D)), ld(x + o, i, D)));
    const c = f32x4.splat((inv * inv * inv * hsum(acc)) / <f32>D);
    const iv = f32x4.splat(inv);
    for (let i = 0; i < D; i += 4) {
      const v = f32x4.sub(f32x4.mul(f32x4.mul(iv, ld(w, i, D)), ld(dy + o, i, D)), f32x4.mul(c, ld(x + o, i, D)));
      st(dx + o, i, D, v);
    }
  }
}

/** The weight gradient's first pass: inv[r] of rows [r0, r1). */
export function rmsInv(x: usize, D: i32, eps: f32, inv: usize, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) store<f32>(at(inv, r), rowInv(x + <usize>r * (<usize>D << 2), D, eps));
}

/** The second: dw[i] += sum over the rows, in order, of dy * x * inv, for column quads [q0, q1). */
export function rmsnormWeightGrad(x: usize, dy: usize, inv: usize, D: i32, rows: i32, dw: usize, q0: i32, q1: i32): void {
  for (let q = q0; q < q1; q++) {
    const i = q << 2;
    let acc = f32x4.splat(0);
    for (let r = 0; r < rows; r++) {
      const o = <usize>r * (<usize>D << 2);
      acc = f32x4.add(acc, f32x4.mul(f32x4.mul(ld(dy + o, i, D), ld(x + o, i, D)), f32x4.splat(load<f32>(at(inv, r)))));
    }
    st(dw, i, D, f32x4.add(ld(dw, i, D), acc));
  }
}
