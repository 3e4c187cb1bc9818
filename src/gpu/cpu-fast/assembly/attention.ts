// Causal grouped-query attention over a KV cache, forward and backward, in f32 on 128-bit SIMD.
// The layouts are the CPU reference's (src/gpu/ops/attention.ts); each work item owns the outputs
// it writes, so the split across threads cannot change a result.
import { hsum } from './gemm';

/** Sum over d < n of x[d] * y[d]: four lanes along d, then the lanes and the tail in order. */
@inline function dot(x: usize, y: usize, n: i32): f32 {
  let acc = f32x4.splat(0);
  let d = 0;
  for (; d + 4 <= n; d += 4) acc = f32x4.add(acc, f32x4.mul(v128.load(x + (<usize>d << 2)), v128.load(y + (<usize>d << 2))));
  let s = hsum(acc);
  for (; d < n; d++) s += load<f32>(x + (<usize>d << 2)) * load<f32>(y + (<usize>d << 2));
  return s;
}

/** y[d] += a * x[d] for d < n. */
@inline function axpy(y: usize, a: f32, x: usize, n: i32): void {
  const av = f32x4.splat(a);
  let d = 0;
  for (; d + 4 <= n; d += 4) {
    const o: usize = <usize>d << 2;
    v128.store(y + o, f32x4.add(v128.load(y + o), f32x4.mul(av, v128.load(x + o))));
  }
  for (; d < n; d++) {
    const o: usize = <usize>d << 2;
    store<f32>(y + o, load<f32>(y + o) + a * load<f32>(x + o));
  }
}

@inline function zero(p: usize, n: i32): void {
  memory.fill(p, 0, <usize>n << 2);
}

/** Byte address of cache row (b, g, slot) in a cache [B, KVH, maxT, hd]. */
@inline function cacheRow(cache: usize, b: i32, g: i32, slot: i32, KVH: i32, maxT: i32, hd: i32): usize {
  return cache + ((((<usize>b * KVH + g) * maxT + slot) * hd) << 2);
}

/**
 * Softmax weights of the query at `qo` over cache slots lo..slot into p[0..n): the scores, their
 * max, exp, and the division by the sum, as the reference orders them.
 */
function probs(qo: usize, k: usize, b: i32, g: i32, lo: i32, n: i32, KVH: i32, maxT: i32, hd: i32, p: usize): void {
  const scale: f32 = 1 / Mathf.sqrt(<f32>hd);
  let max: f32 = -Infinity;
  for (let j = 0; j < n; j++) {
    const s = dot(qo, cacheRow(k, b, g, lo + j, KVH, maxT, hd), hd) * scale;
    store<f32>(p + (<usize>j << 2), s);
    max = Mathf.max(max, s);
  }
  let sum: f32 = 0;
  for (let j = 0; j < n; j++) {
    const e = Mathf.exp(load<f32>(p + (<usize>j << 2)) - max);
    store<f32>(p + (<usize>j << 2), e);
    sum += e;
  }
  for (let j = 0; j < n; j++) store<f32>(p + (<usize>j << 2), load<f32>(p + (<usize>j << 2)) / sum);
}

/**
 * Items [i0, i1) of B * T * H queries, item = (b * T + t) * H + h: out's row for that query and
 * head. `p` is this thread's scratch of maxT floats.
 */
export function attention(q: usize, k: usize, v: usize, out: usize, padLeft: usize, T: i32, start: i32, maxT: i32, H: i32, KVH: i32, hd: i32, p: usize, i0: i32, i1: i32): void {
  const group = H / KVH;
  for (let item = i0; item < i1; item++) {
    const h = item % H;
    const bt = item / H;
    const b = bt / T;
    const t = bt % T;
    const g = h / group;
    const at: usize = (<usize>bt * H + h) * hd;
    const o = out + (at << 2);
    zero(o, hd);
    const slot = start + t;
    const lo = load<i32>(padLeft + (<usize>b << 2));
    if (slot < lo) continue;
    const n = slot - lo + 1;
    probs(q + (at << 2), k, b, g, lo, n, KVH, maxT, hd, p);
    for (let j = 0; j < n; j++) axpy(o, load<f32>(p + (<usize>j << 2)), cacheRow(v, b, g, lo + j, KVH, maxT, hd), hd);
  }
}

/**
 * The backward of `attention` with start 0 and maxT = T, for items [i0, i1) of B * KVH, item =
 * b * KVH + g: every query head of group g in sequence b, so dk and dv rows (token-major
 * [B*T, KVH*hd]) and dq rows ([B*T, H*hd]) are written by one item only. `p` is this thread's
 * scratch of 2 T floats.
 */
export function attentionBackward(q: usize, k: usize, v: usize, dOut: usize, dq: usize, dk: usize, dv: usize, padLeft: usize, T: i32, H: i32, KVH: i32, hd: i32, p: usize, i0: i32, i1: i32): void {
  const group = H / KVH;
  const scale: f32 = 1 / Mathf.sqrt(<f32>hd);
  const dp = p + (<usize>T << 2);
  for (let item = i0; item < i1; item++) {
    const b = item / KVH;
    const g = item % KVH;
    const lo = load<i32>(padLeft + (<usize>b << 2));
    for (let t = 0; t < T; t++) {
      const kvTok = dk + (((<usize>b * T + t) * KVH + g) * hd << 2);
      zero(kvTok, hd);
      zero(dv + (((<usize>b * T + t) * KVH + g) * hd << 2), hd);
      for (let h = g * group; h < (g + 1) * group; h++) zero(dq + (((<usize>b * T + t) * H + h) * hd << 2), hd);
    }
    for (let h = g * group; h < (g + 1) * group; h++) {
      for (let t = lo; t < T; t++) {
        const at: usize = ((<usize>b * T + t) * H + h) * hd << 2;
        const qo = q + at;
        const go = dOut + at;
        const n = t - lo + 1;
        probs(qo, k, b, g, lo, n, KVH, T, hd, p);
        let pdp: f32 = 0;
        for (let j = 0; j < n; j++) {
          const x = dot(go, cacheRow(v, b, g, lo + j, KVH, T, hd), hd);
          store<f32>(dp + (<usize>j << 2), x);
          pdp += load<f32>(p + (<usize>j << 2)) * x;
        }
        for (let j = 0; j < n; j++) {
          const pj = load<f32>(p + (<usize>j << 2));
          const ds = pj * (load<f32>(dp + (<usize>j << 2)) - pdp) * scale;
          const tok: usize = ((<usize>b * T + lo + j) * KVH + g) * hd << 2;
          axpy(dq + at, ds, cacheRow(k, b, g, lo + j, KVH, T, hd), hd);
          axpy(dk + tok, ds, qo, hd);
          axpy(dv + tok, pj, go, hd);
        }
      }
    }
  }
}
