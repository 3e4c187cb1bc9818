// Causal grouped-query attention over a KV cache, forward and backward, in f32 on 128-bit SIMD.
// The layouts are the CPU reference's (src/gpu/ops/attention.ts); each work item owns the outputs
// it writes, so the split across threads cannot change a result.
import { hsum } from './gemm';
import { expv, ld, st } from './vec';

/** Sum over d < n of x[d] * y[d]: four lanes along d, then the lanes and the tail in order. */
@inline function dot(x: usize, y: usize, n: i32): f32 {
  let acc = f32x4.splat(0);
  let d = 0;
  for (; d + 4 <= n; d += 4) acc = f32x4.add(acc, f32x4.mul(v128.load(x + (<usize>d << 2)), v128.load(y + (<usize>d << 2))));
  let s = hsum(acc);
  for (; d < n; d++) s += load<f32>(x + (<usize>d << 2)) * load<f32>(y + (<usize>d << 2));
  return s;
}

/** out[i] = dot(x, row i of y) * scale for the four rows `row` bytes apart from y: the same sums as dot's. */
@inline function dot4(x: usize, y: usize, row: usize, n: i32, scale: f32, out: usize): void {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  const y1 = y + row;
  const y2 = y1 + row;
  const y3 = y2 + row;
  let d = 0;
  for (; d + 4 <= n; d += 4) {
    const o: usize = <usize>d << 2;
    const u = v128.load(x + o);
    a0 = f32x4.add(a0, f32x4.mul(u, v128.load(y + o)));
    a1 = f32x4.add(a1, f32x4.mul(u, v128.load(y1 + o)));
    a2 = f32x4.add(a2, f32x4.mul(u, v128.load(y2 + o)));
    a3 = f32x4.add(a3, f32x4.mul(u, v128.load(y3 + o)));
  }
  let s0 = hsum(a0), s1 = hsum(a1), s2 = hsum(a2), s3 = hsum(a3);
  for (; d < n; d++) {
    const o: usize = <usize>d << 2;
    const u = load<f32>(x + o);
    s0 += u * load<f32>(y + o);
    s1 += u * load<f32>(y1 + o);
    s2 += u * load<f32>(y2 + o);
    s3 += u * load<f32>(y3 + o);
  }
  store<f32>(out, s0 * scale);
  store<f32>(out, s1 * scale, 4);
  store<f32>(out, s2 * scale, 8);
  store<f32>(out, s3 * scale, 12);
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

/**
 * out[d] = sum over j < n of p[j] * v[j][d] (rows of hd floats from v), summed in j order as
 * axpy into a zeroed row would, but sixteen columns at a time in registers, not through memory.
 */
function weightedRows(out: usize, p: usize, v: usize, n: i32, hd: i32): void {
  const row: usize = <usize>hd << 2;
  let d = 0;
  for (; d + 16 <= hd; d += 16) {
    let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
    let at = v + (<usize>d << 2);
    for (let j = 0; j < n; j++, at += row) {
      const w = v128.load32_splat(p + (<usize>j << 2));
      a0 = f32x4.add(a0, f32x4.mul(w, v128.load(at)));
      a1 = f32x4.add(a1, f32x4.mul(w, v128.load(at, 16)));
      a2 = f32x4.add(a2, f32x4.mul(w, v128.load(at, 32)));
      a3 = f32x4.add(a3, f32x4.mul(w, v128.load(at, 48)));
    }
    const o = out + (<usize>d << 2);
    v128.store(o, a0);
    v128.store(o, a1, 16);
    v128.store(o, a2, 32);
    v128.store(o, a3, 48);
  }
  for (; d + 4 <= hd; d += 4) {
    let a = f32x4.splat(0);
    let at = v + (<usize>d << 2);
    for (let j = 0; j < n; j++, at += row) a = f32x4.add(a, f32x4.mul(v128.load32_splat(p + (<usize>j << 2)), v128.load(at)));
    v128.store(out + (<usize>d << 2), a);
  }
  for (; d < hd; d++) {
    let a: f32 = 0;
    let at = v + (<usize>d << 2);
    for (let j = 0; j < n; j++, at += row) a += load<f32>(p + (<usize>j << 2)) * load<f32>(at);
    store<f32>(out + (<usize>d << 2), a);
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
 * max, exp (a quad at a time), the sum in order, and the division by it, as the reference orders them.
 */
function probs(qo: usize, k: usize, b: i32, g: i32, lo: i32, n: i32, KVH: i32, maxT: i32, hd: i32, p: usize): void {
  const scale: f32 = 1 / Mathf.sqrt(<f32>hd);
  // Four slots at a time: four independent sums, where one dot product waits on each add.
  const first = cacheRow(k, b, g, lo, KVH, maxT, hd);
  const row: usize = <usize>hd << 2;
  let j = 0;
  for (; j + 4 <= n; j += 4) dot4(qo, first + <usize>j * row, row, hd, scale, p + (<usize>j << 2));
  for (; j < n; j++) store<f32>(p + (<usize>j << 2), dot(qo, first + <usize>j * row, hd) * scale);
  let max: f32 = -Infinity;
  for (let i = 0; i < n; i++) max = Mathf.max(max, load<f32>(p + (<usize>i << 2)));
  const mv = f32x4.splat(max);
  for (let j = 0; j < n; j += 4) st(p, j, n, expv(f32x4.sub(ld(p, j, n), mv)));
  let sum: f32 = 0;
  for (let j = 0; j < n; j++) sum += load<f32>(p + (<usize>j << 2));
  const sv = f32x4.splat(sum);
  for (let j = 0; j < n; j += 4) st(p, j, n, f32x4.div(ld(p, j, n), sv));
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
    weightedRows(o, p, cacheRow(v, b, g, lo, KVH, maxT, hd), n, hd);
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
        // dp[j] = dOut . v_j, then ds_j = p_j (dp_j - sum p dp) scale in its place.
        const v0 = cacheRow(v, b, g, lo, KVH, T, hd);
        const row: usize = <usize>hd << 2;
        let j = 0;
        for (; j + 4 <= n; j += 4) dot4(go, v0 + <usize>j * row, row, hd, 1, dp + (<usize>j << 2));
        for (; j < n; j++) store<f32>(dp + (<usize>j << 2), dot(go, v0 + <usize>j * row, hd));
        let pdp: f32 = 0;
        for (let i = 0; i < n; i++) pdp += load<f32>(p + (<usize>i << 2)) * load<f32>(dp + (<usize>i << 2));
        for (let i = 0; i < n; i++) {
          const at = dp + (<usize>i << 2);
          store<f32>(at, load<f32>(p + (<usize>i << 2)) * (load<f32>(at) - pdp) * scale);
        }
        weightedRows(dq + at, dp, cacheRow(k, b, g, lo, KVH, T, hd), n, hd);
        for (let i = 0; i < n; i++) {
          const tok: usize = ((<usize>b * T + lo + i) * KVH + g) * hd << 2;
          axpy(dk + tok, load<f32>(dp + (<usize>i << 2)), qo, hd);
          axpy(dv + tok, load<f32>(p + (<usize>i << 2)), go, hd);
        }
      }
    }
  }
}
