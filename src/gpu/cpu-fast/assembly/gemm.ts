// Matrix products on 128-bit SIMD (AssemblyScript, compiled by scripts/build-wasm.mjs).
//
// Every output element is the same dot product whatever the shapes around it: x's row m with w's
// row n along k, as four lane sums over k = 0..K4-1 (lane l takes k = l mod 4), added as
// (l0 + l1) + (l2 + l3), then the k past K4 in order. A row's result is therefore the same bits
// in a batch of one or of fifty, in any tile, on any thread: a run does not depend on which
// requests happened to be batched together, nor on how the work was split.

/** Horizontal sum of a vector's lanes, in the fixed order above. */
@inline export function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}

/** dst [cols, rows] = src [rows, cols]^T, for source rows [r0, r1). */
export function transpose(src: usize, rows: i32, cols: i32, dst: usize, r0: i32, r1: i32): void {
  for (let r = r0; r < r1; r++) {
    const s = src + ((<usize>r * cols) << 2);
    for (let c = 0; c < cols; c++) store<f32>(dst + ((<usize>c * rows + r) << 2), load<f32>(s + (<usize>c << 2)));
  }
}

/** c[m, n] = scale * sum (mode 0) or c[m, n] += scale * sum (mode 1). */
@inline function put(c: usize, m: i32, n: i32, N: i32, sum: f32, mode: i32, scale: f32): void {
  const dst = c + ((<usize>m * N + n) << 2);
  store<f32>(dst, mode ? load<f32>(dst) + scale * sum : scale * sum);
}

/** One output's dot product of rows at x and w, in the canonical order. */
@inline function dot1(x: usize, w: usize, K: i32, K4: i32): f32 {
  let acc = f32x4.splat(0);
  let k = 0;
  for (; k < K4; k += 4) acc = f32x4.add(acc, f32x4.mul(v128.load(x + (<usize>k << 2)), v128.load(w + (<usize>k << 2))));
  let s = hsum(acc);
  for (; k < K; k++) s += load<f32>(x + (<usize>k << 2)) * load<f32>(w + (<usize>k << 2));
  return s;
}

/**
 * c [M, N] = x [M, K] @ w [N, K]^T (scaled, or added scaled), for column blocks [p0, p1) of four
 * w rows: two x rows by four w rows at a time (eight sums, six loads a step), the rows left over
 * one by one, all in the canonical order.
 */
export function dotProducts(x: usize, w: usize, c: usize, M: i32, K: i32, N: i32, mode: i32, scale: f32, p0: i32, p1: i32): void {
  const K4 = K & ~3;
  const row: usize = <usize>K << 2;
  for (let p = p0; p < p1; p++) {
    const n = p * 4;
    const w0 = w + <usize>n * row;
    if (n + 4 > N) {
      for (let j = n; j < N; j++) for (let m = 0; m < M; m++) put(c, m, j, N, dot1(x + <usize>m * row, w + <usize>j * row, K, K4), mode, scale);
      continue;
    }
    const w1 = w0 + row;
    const w2 = w1 + row;
    const w3 = w2 + row;
    let m = 0;
    for (; m + 2 <= M; m += 2) {
      const x0 = x + <usize>m * row;
      const x1 = x0 + row;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
      for (let k = 0; k < K4; k += 4) {
        const o: usize = <usize>k << 2;
        const u = v128.load(x0 + o);
        const v = v128.load(x1 + o);
        let wv = v128.load(w0 + o);
        a0 = f32x4.add(a0, f32x4.mul(u, wv));
        b0 = f32x4.add(b0, f32x4.mul(v, wv));
        wv = v128.load(w1 + o);
        a1 = f32x4.add(a1, f32x4.mul(u, wv));
        b1 = f32x4.add(b1, f32x4.mul(v, wv));
        wv = v128.load(w2 + o);
        a2 = f32x4.add(a2, f32x4.mul(u, wv));
        b2 = f32x4.add(b2, f32x4.mul(v, wv));
        wv = v128.load(w3 + o);
        a3 = f32x4.add(a3, f32x4.mul(u, wv));
        b3 = f32x4.add(b3, f32x4.mul(v, wv));
      }
      let s0 = hsum(a0), s1 = hsum(a1), s2 = hsum(a2), s3 = hsum(a3);
      let t0 = hsum(b0), t1 = hsum(b1), t2 = hsum(b2), t3 = hsum(b3);
      for (let k = K4; k < K; k++) {
        const o: usize = <usize>k << 2;
        const u = load<f32>(x0 + o);
        const v = load<f32>(x1 + o);
        s0 += u * load<f32>(w0 + o);
        s1 += u * load<f32>(w1 + o);
        s2 += u * load<f32>(w2 + o);
        s3 += u * load<f32>(w3 + o);
        t0 += v * load<f32>(w0 + o);
        t1 += v * load<f32>(w1 + o);
        t2 += v * load<f32>(w2 + o);
        t3 += v * load<f32>(w3 + o);
      }
      put(c, m, n, N, s0, mode, scale);
      put(c, m, n + 1, N, s1, mode, scale);
      put(c, m, n + 2, N, s2, mode, scale);
      put(c, m, n + 3, N, s3, mode, scale);
      put(c, m + 1, n, N, t0, mode, scale);
      put(c, m + 1, n + 1, N, t1, mode, scale);
      put(c, m + 1, n + 2, N, t2, mode, scale);
      put(c, m + 1, n + 3, N, t3, mode, scale);
    }
    for (; m < M; m++) {
      const x0 = x + <usize>m * row;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      for (let k = 0; k < K4; k += 4) {
        const o: usize = <usize>k << 2;
        const u = v128.load(x0 + o);
        a0 = f32x4.add(a0, f32x4.mul(u, v128.load(w0 + o)));
        a1 = f32x4.add(a1, f32x4.mul(u, v128.load(w1 + o)));
        a2 = f32x4.add(a2, f32x4.mul(u, v128.load(w2 + o)));
        a3 = f32x4.add(a3, f32x4.mul(u, v128.load(w3 + o)));
      }
      let s0 = hsum(a0), s1 = hsum(a1), s2 = hsum(a2), s3 = hsum(a3);
      for (let k = K4; k < K; k++) {
        const o: usize = <usize>k << 2;
        const u = load<f32>(x0 + o);
        s0 += u * load<f32>(w0 + o);
        s1 += u * load<f32>(w1 + o);
        s2 += u * load<f32>(w2 + o);
        s3 += u * load<f32>(w3 + o);
      }
      put(c, m, n, N, s0, mode, scale);
      put(c, m, n + 1, N, s1, mode, scale);
      put(c, m, n + 2, N, s2, mode, scale);
      put(c, m, n + 3, N, s3, mode, scale);
    }
  }
}
