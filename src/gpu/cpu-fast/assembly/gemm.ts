// Packed, blocked matrix products on 128-bit SIMD (AssemblyScript, compiled by
// scripts/build-wasm.mjs). Every output element is one thread's sum over k in a fixed order, so a
// result never depends on how the work was split or on thread timing.

/** Rows of op(a) per packed panel and per micro-tile. */
export const MR: i32 = 4;
/** Columns of op(b) per packed panel and per micro-tile (two f32x4 vectors). */
export const NR: i32 = 8;

/** Writes `acc` to c: c = scale * acc (mode 0) or c += scale * acc (mode 1). */
@inline function put(c: usize, acc: v128, scale: v128, mode: i32): void {
  const y = f32x4.mul(acc, scale);
  v128.store(c, mode ? f32x4.add(v128.load(c), y) : y);
}

/**
 * op(a) [M, K] packed into panels of MR rows: ap[q][k][r] = op(a)[q * MR + r, k], rows past M
 * zero. Panels [q0, q1).
 */
export function packA(a: usize, transA: i32, M: i32, K: i32, ap: usize, q0: i32, q1: i32): void {
  for (let q = q0; q < q1; q++) {
    let out = ap + ((<usize>q * K * MR) << 2);
    for (let k = 0; k < K; k++) {
      for (let r = 0; r < MR; r++) {
        const i = q * MR + r;
        const v: f32 = i < M ? load<f32>(a + ((transA ? <usize>k * M + i : <usize>i * K + k) << 2)) : 0;
        store<f32>(out, v);
        out += 4;
      }
    }
  }
}

/**
 * op(b) [K, N] packed into panels of NR columns: bp[p][k][c] = op(b)[k, p * NR + c], columns
 * past N zero. Panels [p0, p1).
 */
export function packB(b: usize, transB: i32, K: i32, N: i32, bp: usize, p0: i32, p1: i32): void {
  for (let p = p0; p < p1; p++) {
    let out = bp + ((<usize>p * K * NR) << 2);
    const j0 = p * NR;
    if (!transB && j0 + NR <= N) {
      // A whole panel of a row-major b: two vector copies a row.
      for (let k = 0; k < K; k++) {
        const src = b + ((<usize>k * N + j0) << 2);
        v128.store(out, v128.load(src));
        v128.store(out, v128.load(src, 16), 16);
        out += NR << 2;
      }
      continue;
    }
    for (let k = 0; k < K; k++) {
      for (let c = 0; c < NR; c++) {
        const j = j0 + c;
        const v: f32 = j < N ? load<f32>(b + ((transB ? <usize>j * K + k : <usize>k * N + j) << 2)) : 0;
        store<f32>(out, v);
        out += 4;
      }
    }
  }
}

/**
 * Micro-tiles [t0, t1) of c [M, N] from packed panels, tile t covering row panel t % Q and column
 * panel t / Q (Q row panels): a thread walks the row panels under one column panel, whose packed
 * b stays in cache. `tmp` is this thread's 128-byte scratch for a tile cut by the edge of c.
 */
export function gemmTiles(ap: usize, bp: usize, c: usize, M: i32, K: i32, N: i32, mode: i32, scale: f32, tmp: usize, t0: i32, t1: i32): void {
  const Q = (M + MR - 1) / MR;
  const s = f32x4.splat(scale);
  for (let t = t0; t < t1; t++) {
    const q = t % Q;
    const p = t / Q;
    let pa = ap + ((<usize>q * K * MR) << 2);
    let pb = bp + ((<usize>p * K * NR) << 2);
    let c00 = f32x4.splat(0), c01 = f32x4.splat(0);
    let c10 = f32x4.splat(0), c11 = f32x4.splat(0);
    let c20 = f32x4.splat(0), c21 = f32x4.splat(0);
    let c30 = f32x4.splat(0), c31 = f32x4.splat(0);
    for (let k = 0; k < K; k++) {
      const b0 = v128.load(pb);
      const b1 = v128.load(pb, 16);
      let a = v128.load32_splat(pa);
      c00 = f32x4.add(c00, f32x4.mul(a, b0));
      c01 = f32x4.add(c01, f32x4.mul(a, b1));
      a = v128.load32_splat(pa, 4);
      c10 = f32x4.add(c10, f32x4.mul(a, b0));
      c11 = f32x4.add(c11, f32x4.mul(a, b1));
      a = v128.load32_splat(pa, 8);
      c20 = f32x4.add(c20, f32x4.mul(a, b0));
      c21 = f32x4.add(c21, f32x4.mul(a, b1));
      a = v128.load32_splat(pa, 12);
      c30 = f32x4.add(c30, f32x4.mul(a, b0));
      c31 = f32x4.add(c31, f32x4.mul(a, b1));
      pa += MR << 2;
      pb += NR << 2;
    }
    const i0 = q * MR;
    const j0 = p * NR;
    const full = i0 + MR <= M && j0 + NR <= N;
    // A whole tile goes straight to c; an edge tile is staged in tmp and copied element-wise.
    const row: usize = full ? (<usize>N << 2) : NR << 2;
    const out: usize = full ? c + ((<usize>i0 * N + j0) << 2) : tmp;
    if (full) {
      put(out, c00, s, mode);
      put(out + 16, c01, s, mode);
      put(out + row, c10, s, mode);
      put(out + row + 16, c11, s, mode);
      put(out + 2 * row, c20, s, mode);
      put(out + 2 * row + 16, c21, s, mode);
      put(out + 3 * row, c30, s, mode);
      put(out + 3 * row + 16, c31, s, mode);
      continue;
    }
    put(out, c00, s, 0);
    put(out + 16, c01, s, 0);
    put(out + row, c10, s, 0);
    put(out + row + 16, c11, s, 0);
    put(out + 2 * row, c20, s, 0);
    put(out + 2 * row + 16, c21, s, 0);
    put(out + 3 * row, c30, s, 0);
    put(out + 3 * row + 16, c31, s, 0);
    for (let r = 0; r < MR && i0 + r < M; r++) {
      for (let cc = 0; cc < NR && j0 + cc < N; cc++) {
        const dst = c + ((<usize>(i0 + r) * N + j0 + cc) << 2);
        const v = load<f32>(tmp + ((<usize>r * NR + cc) << 2));
        store<f32>(dst, mode ? load<f32>(dst) + v : v);
      }
    }
  }
}

/** Horizontal sum of a vector's lanes, in a fixed order. */
@inline export function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}

/** c[m, n] = scale * sum (mode 0) or c[m, n] += scale * sum (mode 1). */
@inline function putOne(c: usize, m: i32, n: i32, N: i32, sum: f32, mode: i32, scale: f32): void {
  const dst = c + ((<usize>m * N + n) << 2);
  store<f32>(dst, mode ? load<f32>(dst) + scale * sum : scale * sum);
}

/**
 * x [M, K] @ w [N, K]^T for few rows (decode): dot products along k, both operands read in place,
 * so the weights stream from memory once per call with no packing. Four weight rows at a time
 * share each load of x. Columns [n0, n1) of c [M, N].
 */
export function dotRows(x: usize, w: usize, c: usize, M: i32, K: i32, N: i32, mode: i32, scale: f32, n0: i32, n1: i32): void {
  const K4 = K & ~3;
  const row: usize = <usize>K << 2;
  let n = n0;
  for (; n + 4 <= n1; n += 4) {
    const w0 = w + <usize>n * row;
    for (let m = 0; m < M; m++) {
      const xr = x + <usize>m * row;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let k = 0;
      for (; k < K4; k += 4) {
        const o: usize = <usize>k << 2;
        const xv = v128.load(xr + o);
        a0 = f32x4.add(a0, f32x4.mul(xv, v128.load(w0 + o)));
        a1 = f32x4.add(a1, f32x4.mul(xv, v128.load(w0 + row + o)));
        a2 = f32x4.add(a2, f32x4.mul(xv, v128.load(w0 + 2 * row + o)));
        a3 = f32x4.add(a3, f32x4.mul(xv, v128.load(w0 + 3 * row + o)));
      }
      let s0 = hsum(a0), s1 = hsum(a1), s2 = hsum(a2), s3 = hsum(a3);
      for (; k < K; k++) {
        const o: usize = <usize>k << 2;
        const xs = load<f32>(xr + o);
        s0 += xs * load<f32>(w0 + o);
        s1 += xs * load<f32>(w0 + row + o);
        s2 += xs * load<f32>(w0 + 2 * row + o);
        s3 += xs * load<f32>(w0 + 3 * row + o);
      }
      putOne(c, m, n, N, s0, mode, scale);
      putOne(c, m, n + 1, N, s1, mode, scale);
      putOne(c, m, n + 2, N, s2, mode, scale);
      putOne(c, m, n + 3, N, s3, mode, scale);
    }
  }
  for (; n < n1; n++) {
    const wr = w + <usize>n * row;
    for (let m = 0; m < M; m++) {
      const xr = x + <usize>m * row;
      let acc = f32x4.splat(0);
      let k = 0;
      for (; k < K4; k += 4) acc = f32x4.add(acc, f32x4.mul(v128.load(xr + (<usize>k << 2)), v128.load(wr + (<usize>k << 2))));
      let sum = hsum(acc);
      for (; k < K; k++) sum += load<f32>(xr + (<usize>k << 2)) * load<f32>(wr + (<usize>k << 2));
      putOne(c, m, n, N, sum, mode, scale);
    }
  }
}
