// Matrix products on 128-bit SIMD (AssemblyScript, compiled by scripts/build-wasm.mjs).
//
// Every output element is the same dot product whatever the shapes around it: x's row m with w's
// row n along k, as four lane sums over k = 0..K4-1 (lane l takes k = l mod 4), added as
// (l0 + l1) + (l2 + l3), then the k past K4 in order. A row's result is therefore the same bits
// in a batch of one or of fifty, in any tile, on any thread, with the operands stored either way:
// a run does not depend on which requests happened to be batched together, nor on how the work
// was split, nor on whether a product came from a forward (x @ w^T) or a backward (dy @ w).

/** Rows of a transposed x packed at a time: its block and one w panel stay in cache together. */
const X_BLOCK = 32;
/**
 * Values of k a pass takes at most: a longer product (an LM head's backward, K the vocabulary)
 * runs in chunks of k, its lane sums kept in scratch between them, so that x's rows are read
 * once for all of a thread's columns rather than once per block of four, and a packed w panel
 * stays in cache. A multiple of 4: every chunk but the last ends on a whole step.
 */
const K_CHUNK = 2048;
/**
 * Floats a packed row takes past K: rows K floats apart (K a multiple of 1024 bytes) would share
 * a cache set and evict each other while they are written a quad at a time.
 */
const PAD = 16;

/**
 * Below this K (a rank-16 adapter's products, a small model's LM head) a dot product is too short
 * to pay for its horizontal sum and scalar store: shortProducts sums four columns in the lanes.
 */
const SHORT_K = 32;

/** Horizontal sum of a vector's lanes, in the fixed order above. */
@inline export function hsum(v: v128): f32 {
  return f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}

/**
 * The hsum of each of four vectors, in the lanes of one: a 4 x 4 transpose, then the lanes added
 * as hsum adds them, (l0 + l1) + (l2 + l3), so each lane holds the same bits hsum gives.
 */
@inline function hsum4(a0: v128, a1: v128, a2: v128, a3: v128): v128 {
  const t0 = v128.shuffle<f32>(a0, a1, 0, 4, 1, 5);
  const t1 = v128.shuffle<f32>(a2, a3, 0, 4, 1, 5);
  const t2 = v128.shuffle<f32>(a0, a1, 2, 6, 3, 7);
  const t3 = v128.shuffle<f32>(a2, a3, 2, 6, 3, 7);
  const l01 = f32x4.add(v128.shuffle<f32>(t0, t1, 0, 1, 4, 5), v128.shuffle<f32>(t0, t1, 2, 3, 6, 7));
  const l23 = f32x4.add(v128.shuffle<f32>(t2, t3, 0, 1, 4, 5), v128.shuffle<f32>(t2, t3, 2, 3, 6, 7));
  return f32x4.add(l01, l23);
}

/**
 * c[m, n] = scale * sum (mode 0) or c[m, n] += scale * sum (mode 1), for c stored with rows of
 * `ld` values, or transposed (`tr`: c[m, n] at row n, column m).
 */
@inline function put(c: usize, m: i32, n: i32, ld: i32, tr: i32, sum: f32, mode: i32, scale: f32): void {
  const dst = c + ((tr ? <usize>n * ld + m : <usize>m * ld + n) << 2);
  store<f32>(dst, mode ? load<f32>(dst) + scale * sum : scale * sum);
}

/**
 * Bytes of scratch each thread of `threads` needs for products(): a w panel, a block of x when
 * transA, and the lane sums of its columns' block of rows when K runs in chunks.
 */
export function productScratch(K: i32, N: i32, transA: i32, threads: i32): i32 {
  const chunk = min(K, K_CHUNK);
  const sums = K > K_CHUNK ? X_BLOCK * ((((N + 3) >> 2) + threads - 1) / threads) * 64 : 0;
  return (4 + (transA ? X_BLOCK : 0)) * (chunk + PAD) * 4 + sums;
}

/**
 * c [M, N] = op(x) @ op(w) (scaled, or added scaled) for column blocks [p0, p1) of four, where
 * op(x) is [M, K] (x stored so, or [K, M] when transA) and op(w) is [K, N] (w stored [N, K]
 * when transB, a linear layer's weight, or [K, N]). The tile reads x's rows and w's rows along
 * k; an operand not stored that way is packed into `scratch` a piece at a time (four w rows per
 * block, X_BLOCK x rows), so no transposed copy of a whole operand is made. c is stored [M, N],
 * or [N, M] when trC (the caller's c^T = op(w)^T op(x)^T, the same sums).
 */
export function products(x: usize, transA: i32, w: usize, transB: i32, c: usize, trC: i32, M: i32, K: i32, N: i32, mode: i32, scale: f32, scratch: usize, p0: i32, p1: i32): void {
  // c's rows are N long, or M long where it is stored transposed.
  const ld = trC ? M : N;
  if (K < SHORT_K) {
    shortProducts(x, transA, w, transB, c, trC, ld, M, K, N, mode, scale, scratch, p0, p1);
    return;
  }
  const row: usize = <usize>K << 2;
  const chunked = K > K_CHUNK;
  const packed: usize = <usize>(min(K, K_CHUNK) + PAD) << 2;
  const panel = scratch;
  const xBlock = scratch + 4 * packed;
  const sums = xBlock + (transA ? X_BLOCK * packed : 0);
  const rowsAtOnce = transA || chunked ? X_BLOCK : M;
  for (let m0 = 0; m0 < M; m0 += rowsAtOnce) {
    const rows = min(rowsAtOnce, M - m0);
    for (let k0 = 0; k0 < K; k0 += K_CHUNK) {
      const kLen = min(K_CHUNK, K - k0);
      let xs = x + <usize>m0 * row + (<usize>k0 << 2);
      let xRow = row;
      if (transA) {
        packRows(x + ((<usize>k0 * M) << 2), M, m0, rows, kLen, xBlock, packed);
        xs = xBlock;
        xRow = packed;
      }
      for (let p = p0; p < p1; p++) {
        const n = p * 4;
        const cols = min(4, N - n);
        let ws = w + <usize>n * row + (<usize>k0 << 2);
        let wRow = row;
        // A block cut by N is padded with zero rows, which are summed but never stored.
        if (!transB || cols < 4) {
          packColumns(transB ? w + (<usize>k0 << 2) : w + ((<usize>k0 * N) << 2), transB, N, row, kLen, n, cols, panel, packed);
          ws = panel;
          wRow = packed;
        }
        const blockSums = sums + <usize>(p - p0) * <usize>rows * 64;
        const cm = c + ((trC ? <usize>m0 : <usize>m0 * ld) << 2);
        tile(xs, xRow, rows, ws, wRow, kLen, cm, n, ld, trC, cols, mode, scale, blockSums, k0 === 0, k0 + kLen === K);
      }
    }
  }
}

/**
 * Output rows [0, M) by columns [n, n + cols) of c, from M rows of x (`row` bytes apart) and four
 * rows of w (`wRow` bytes apart), all of length K: two x rows by four w rows at a time (eight
 * sums, six loads a step), then the row left over.
 */
function tile(x: usize, row: usize, M: i32, w0: usize, wRow: usize, K: i32, c: usize, n: i32, ld: i32, tr: i32, cols: i32, mode: i32, scale: f32, sums: usize, first: bool, last: bool): void {
  const K4 = K & ~3;
  const w1 = w0 + wRow;
  const w2 = w1 + wRow;
  const w3 = w2 + wRow;
  let m = 0;
  for (; m + 2 <= M; m += 2) {
    const x0 = x + <usize>m * row;
    const x1 = x0 + row;
    const sa = sums + (<usize>m << 6);
    const sb = sa + 64;
    let a0 = first ? f32x4.splat(0) : v128.load(sa), a1 = first ? f32x4.splat(0) : v128.load(sa, 16);
    let a2 = first ? f32x4.splat(0) : v128.load(sa, 32), a3 = first ? f32x4.splat(0) : v128.load(sa, 48);
    let b0 = first ? f32x4.splat(0) : v128.load(sb), b1 = first ? f32x4.splat(0) : v128.load(sb, 16);
    let b2 = first ? f32x4.splat(0) : v128.load(sb, 32), b3 = first ? f32x4.splat(0) : v128.load(sb, 48);
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
    if (!last) {
      keepSums(sa, a0, a1, a2, a3);
      keepSums(sb, b0, b1, b2, b3);
      continue;
    }
    if (K4 === K) {
      putQuad(c, m, n, ld, tr, cols, hsum4(a0, a1, a2, a3), mode, f32x4.splat(scale));
      putQuad(c, m + 1, n, ld, tr, cols, hsum4(b0, b1, b2, b3), mode, f32x4.splat(scale));
      continue;
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
    putRow(c, m, n, ld, tr, cols, s0, s1, s2, s3, mode, scale);
    putRow(c, m + 1, n, ld, tr, cols, t0, t1, t2, t3, mode, scale);
  }
  if (m < M) {
    const x0 = x + <usize>m * row;
    const sa = sums + (<usize>m << 6);
    let a0 = first ? f32x4.splat(0) : v128.load(sa), a1 = first ? f32x4.splat(0) : v128.load(sa, 16);
    let a2 = first ? f32x4.splat(0) : v128.load(sa, 32), a3 = first ? f32x4.splat(0) : v128.load(sa, 48);
    for (let k = 0; k < K4; k += 4) {
      const o: usize = <usize>k << 2;
      const u = v128.load(x0 + o);
      a0 = f32x4.add(a0, f32x4.mul(u, v128.load(w0 + o)));
      a1 = f32x4.add(a1, f32x4.mul(u, v128.load(w1 + o)));
      a2 = f32x4.add(a2, f32x4.mul(u, v128.load(w2 + o)));
      a3 = f32x4.add(a3, f32x4.mul(u, v128.load(w3 + o)));
    }
    if (!last) {
      keepSums(sa, a0, a1, a2, a3);
      return;
    }
    if (K4 === K) {
      putQuad(c, m, n, ld, tr, cols, hsum4(a0, a1, a2, a3), mode, f32x4.splat(scale));
      return;
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
    putRow(c, m, n, ld, tr, cols, s0, s1, s2, s3, mode, scale);
  }
}

/** A row's four lane sums, kept for the next chunk of k. */
@inline function keepSums(at: usize, a0: v128, a1: v128, a2: v128, a3: v128): void {
  v128.store(at, a0);
  v128.store(at, a1, 16);
  v128.store(at, a2, 32);
  v128.store(at, a3, 48);
}

/** The first `cols` of a row's four sums. */
@inline function putRow(c: usize, m: i32, n: i32, ld: i32, tr: i32, cols: i32, s0: f32, s1: f32, s2: f32, s3: f32, mode: i32, scale: f32): void {
  put(c, m, n, ld, tr, s0, mode, scale);
  if (cols > 1) put(c, m, n + 1, ld, tr, s1, mode, scale);
  if (cols > 2) put(c, m, n + 2, ld, tr, s2, mode, scale);
  if (cols > 3) put(c, m, n + 3, ld, tr, s3, mode, scale);
}

/**
 * Four rows of op(w) along k, for columns [n, n + cols) and k < K, into `panel` (rows `packed`
 * bytes apart); rows past cols are zeros. w is stored [K, N] (read as 4 x 4 blocks, each
 * transposed) or, for a block cut by N, [N, K] (`row` bytes apart; rows copied whole).
 */
function packColumns(w: usize, transB: i32, N: i32, row: usize, K: i32, n: i32, cols: i32, panel: usize, packed: usize): void {
  if (cols < 4) memory.fill(panel, 0, 4 * packed);
  if (transB) {
    for (let j = 0; j < cols; j++) memory.copy(panel + <usize>j * packed, w + <usize>(n + j) * row, <usize>K << 2);
    return;
  }
  if (cols === 4) {
    transposeQuads(w + (<usize>n << 2), <usize>N << 2, 4, K, panel, packed);
    return;
  }
  for (let k = 0; k < K; k++) {
    const src = w + ((<usize>k * N + n) << 2);
    for (let j = 0; j < cols; j++) store<f32>(panel + <usize>j * packed + (<usize>k << 2), load<f32>(src + (<usize>j << 2)));
  }
}

/** Rows [m0, m0 + rows) of op(x) along k, from x stored [K, M], into `block` (rows `packed` bytes apart). */
function packRows(x: usize, M: i32, m0: i32, rows: i32, K: i32, block: usize, packed: usize): void {
  const R4 = rows & ~3;
  transposeQuads(x + (<usize>m0 << 2), <usize>M << 2, R4, K, block, packed);
  for (let r = R4; r < rows; r++) {
    const dst = block + <usize>r * packed;
    for (let k = 0; k < K; k++) store<f32>(dst + (<usize>k << 2), load<f32>(x + ((<usize>k * M + m0 + r) << 2)));
  }
}

/**
 * dst row j (`packed` bytes apart), element k = src row k (`stride` bytes apart), element j, for
 * j < cols (a multiple of 4) and k < K: 4 x 4 blocks through registers, then the k past the last
 * whole block one by one.
 */
function transposeQuads(src: usize, stride: usize, cols: i32, K: i32, dst: usize, packed: usize): void {
  const K4 = K & ~3;
  for (let j = 0; j < cols; j += 4) {
    const s = src + (<usize>j << 2);
    const d = dst + <usize>j * packed;
    let k = 0;
    for (; k < K4; k += 4) {
      const at = s + <usize>k * stride;
      const r0 = v128.load(at);
      const r1 = v128.load(at + stride);
      const r2 = v128.load(at + 2 * stride);
      const r3 = v128.load(at + 3 * stride);
      const t0 = v128.shuffle<f32>(r0, r1, 0, 4, 1, 5);
      const t1 = v128.shuffle<f32>(r2, r3, 0, 4, 1, 5);
      const t2 = v128.shuffle<f32>(r0, r1, 2, 6, 3, 7);
      const t3 = v128.shuffle<f32>(r2, r3, 2, 6, 3, 7);
      const o = d + (<usize>k << 2);
      v128.store(o, v128.shuffle<f32>(t0, t1, 0, 1, 4, 5));
      v128.store(o + packed, v128.shuffle<f32>(t0, t1, 2, 3, 6, 7));
      v128.store(o + 2 * packed, v128.shuffle<f32>(t2, t3, 0, 1, 4, 5));
      v128.store(o + 3 * packed, v128.shuffle<f32>(t2, t3, 2, 3, 6, 7));
    }
    for (; k < K; k++) {
      const v = v128.load(s + <usize>k * stride);
      const o = d + (<usize>k << 2);
      v128.store32_lane(o, v, 0);
      v128.store32_lane(o + packed, v, 1);
      v128.store32_lane(o + 2 * packed, v, 2);
      v128.store32_lane(o + 3 * packed, v, 3);
    }
  }
}

/**
 * products() for K < SHORT_K, the same sums: a step along k multiplies a quad of op(w)'s row k
 * (four columns) by one x value splat over the lanes, into one of four accumulators by k mod 4,
 * which hold what the dot-product tile's lanes hold; adding them as (0 + 1) + (2 + 3) is its hsum,
 * lane by lane. Two x rows by one quad of columns at a time. op(w)'s rows are read in place when
 * w is stored [K, N]; stored [N, K], or cut by N, a block's quads are packed into `scratch` first.
 */
function shortProducts(x: usize, transA: i32, w: usize, transB: i32, c: usize, tr: i32, ld: i32, M: i32, K: i32, N: i32, mode: i32, scale: f32, scratch: usize, p0: i32, p1: i32): void {
  // Bytes between x's consecutive rows and consecutive k.
  const xm: usize = transA ? 4 : <usize>K << 2;
  const xk: usize = transA ? <usize>M << 2 : 4;
  const sv = f32x4.splat(scale);
  for (let p = p0; p < p1; p++) {
    const n = p * 4;
    const cols = min(4, N - n);
    let q = w + (<usize>n << 2);
    let qk: usize = <usize>N << 2;
    if (transB || cols < 4) {
      packQuads(w, transB, N, K, n, cols, scratch);
      q = scratch;
      qk = 16;
    }
    let m = 0;
    for (; m + 2 <= M; m += 2) {
      const x0 = x + <usize>m * xm;
      const x1 = x0 + xm;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
      let k = 0;
      for (; k + 4 <= K; k += 4) {
        const xo = <usize>k * xk;
        const qo = q + <usize>k * qk;
        let wv = v128.load(qo);
        a0 = f32x4.add(a0, f32x4.mul(v128.load32_splat(x0 + xo), wv));
        b0 = f32x4.add(b0, f32x4.mul(v128.load32_splat(x1 + xo), wv));
        wv = v128.load(qo + qk);
        a1 = f32x4.add(a1, f32x4.mul(v128.load32_splat(x0 + xo + xk), wv));
        b1 = f32x4.add(b1, f32x4.mul(v128.load32_splat(x1 + xo + xk), wv));
        wv = v128.load(qo + 2 * qk);
        a2 = f32x4.add(a2, f32x4.mul(v128.load32_splat(x0 + xo + 2 * xk), wv));
        b2 = f32x4.add(b2, f32x4.mul(v128.load32_splat(x1 + xo + 2 * xk), wv));
        wv = v128.load(qo + 3 * qk);
        a3 = f32x4.add(a3, f32x4.mul(v128.load32_splat(x0 + xo + 3 * xk), wv));
        b3 = f32x4.add(b3, f32x4.mul(v128.load32_splat(x1 + xo + 3 * xk), wv));
      }
      let s0 = f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3));
      let s1 = f32x4.add(f32x4.add(b0, b1), f32x4.add(b2, b3));
      for (; k < K; k++) {
        const wv = v128.load(q + <usize>k * qk);
        s0 = f32x4.add(s0, f32x4.mul(v128.load32_splat(x0 + <usize>k * xk), wv));
        s1 = f32x4.add(s1, f32x4.mul(v128.load32_splat(x1 + <usize>k * xk), wv));
      }
      putQuad(c, m, n, ld, tr, cols, s0, mode, sv);
      putQuad(c, m + 1, n, ld, tr, cols, s1, mode, sv);
    }
    if (m < M) {
      const x0 = x + <usize>m * xm;
      let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
      let k = 0;
      for (; k + 4 <= K; k += 4) {
        const xo = x0 + <usize>k * xk;
        const qo = q + <usize>k * qk;
        a0 = f32x4.add(a0, f32x4.mul(v128.load32_splat(xo), v128.load(qo)));
        a1 = f32x4.add(a1, f32x4.mul(v128.load32_splat(xo + xk), v128.load(qo + qk)));
        a2 = f32x4.add(a2, f32x4.mul(v128.load32_splat(xo + 2 * xk), v128.load(qo + 2 * qk)));
        a3 = f32x4.add(a3, f32x4.mul(v128.load32_splat(xo + 3 * xk), v128.load(qo + 3 * qk)));
      }
      let s0 = f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3));
      for (; k < K; k++) s0 = f32x4.add(s0, f32x4.mul(v128.load32_splat(x0 + <usize>k * xk), v128.load(q + <usize>k * qk)));
      putQuad(c, m, n, ld, tr, cols, s0, mode, sv);
    }
  }
}

/** quads[k] = op(w)'s row k at columns [n, n + cols), zeros past cols, for k < K. */
function packQuads(w: usize, transB: i32, N: i32, K: i32, n: i32, cols: i32, quads: usize): void {
  if (cols === 4) {
    // w stored [N, K]: four of its rows, each a column of op(w), through 4 x 4 transposes.
    const K4 = K & ~3;
    const row: usize = <usize>K << 2;
    transposeQuads(w + <usize>n * row, row, K4, 4, quads, 16);
    for (let k = K4; k < K; k++) {
      const src = w + <usize>n * row + (<usize>k << 2);
      const v = f32x4.replace_lane(f32x4.replace_lane(f32x4.replace_lane(f32x4.splat(load<f32>(src)), 1, load<f32>(src + row)), 2, load<f32>(src + 2 * row)), 3, load<f32>(src + 3 * row));
      v128.store(quads + (<usize>k << 4), v);
    }
    return;
  }
  for (let k = 0; k < K; k++) {
    const dst = quads + (<usize>k << 4);
    v128.store(dst, f32x4.splat(0));
    for (let j = 0; j < cols; j++) {
      const at = transB ? (<usize>(n + j) * K + k) << 2 : (<usize>k * N + n + j) << 2;
      store<f32>(dst + (<usize>j << 2), load<f32>(w + at));
    }
  }
}

/** c[m, n + j] for j < cols as put() writes them, from the lanes of `sum`; a whole quad of a row stored at once. */
@inline function putQuad(c: usize, m: i32, n: i32, ld: i32, tr: i32, cols: i32, sum: v128, mode: i32, scale: v128): void {
  if (cols === 4 && !tr) {
    const dst = c + ((<usize>m * ld + n) << 2);
    const y = f32x4.mul(scale, sum);
    v128.store(dst, mode ? f32x4.add(v128.load(dst), y) : y);
    return;
  }
  const f = f32x4.extract_lane(scale, 0);
  put(c, m, n, ld, tr, f32x4.extract_lane(sum, 0), mode, f);
  if (cols > 1) put(c, m, n + 1, ld, tr, f32x4.extract_lane(sum, 1), mode, f);
  if (cols > 2) put(c, m, n + 2, ld, tr, f32x4.extract_lane(sum, 2), mode, f);
  if (cols > 3) put(c, m, n + 3, ld, tr, f32x4.extract_lane(sum, 3), mode, f);
}
