/**
 * Matrix products on the GPU; the reference is ./matmul.ts. Three kernels:
 *
 * - tiled: 64x64 output tiles, K in slabs of 16 staged through workgroup memory, 4x4 outputs per
 *   invocation; 64x16 tiles and 4x1 outputs for products at most 16 wide (a LoRA rank). Tile
 *   loads are laid out per transpose flag so that neighbouring invocations read neighbouring
 *   addresses whichever way the operand is stored. For prefill and training.
 * - blocked: the same 4x4 outputs per invocation, read straight from storage with no workgroup
 *   memory. Used instead of tiled where workgroup memory is slow (RuntimeOptions.workgroupMemory false): a
 *   CPU-emulated adapter such as SwiftShader runs every invocation of a workgroup that declares
 *   workgroup memory as a coroutine, ~2 us each per workgroup, which for the small products of a
 *   small model or a LoRA rank cost 4-12x the arithmetic (measured on SwiftShader).
 * - matvec: for a few rows x against weights [N, K] (decode). Along a long K, 32 invocations
 *   per weight row read vec4s (coalesced) and reduce through a shared-memory tree, eight rows per
 *   workgroup. Along a short K (a small model's LM head: 151,936 rows of 32) that would leave
 *   most lanes idle and launch ~20k workgroups, so each invocation takes whole rows instead.
 *
 * The weight operand b may be stored in any weight format (f32, f16 native or unpacked from u32,
 * q8, q4: dequantized as it is loaded, see weightBinding; the pipeline key names the format) and
 * may be split by rows across buffers: a split along N (b transposed, as nn.Linear stores
 * weights) computes each chunk's output columns; a split along K (b not transposed, the backward
 * through a frozen projection) accumulates the chunks' partial products.
 */
import { EngineError } from '../errors';
import type { Runtime } from '../webgpu/runtime';
import type { GpuTensor } from '../webgpu/tensor';
import { entry, FLAT_WORKGROUP, header, Params, weightBinding, weightRead, type WeightRead } from '../webgpu/wgsl';

const P_MM = new Params({
  M: 'u32',
  N: 'u32',
  K: 'u32',
  lda: 'u32',
  ldb: 'u32',
  ldc: 'u32',
  aOff: 'u32',
  nOff: 'u32',
  accumulate: 'u32',
  tilesN: 'u32',
  alpha: 'f32',
});

const BM = 64;
const BN = 64;
const BN_NARROW = 16;
const BK = 16;
const R4 = [0, 1, 2, 3];

interface TiledKey extends Extras {
  transA: boolean;
  transB: boolean;
  read: WeightRead;
  /** 64 x 16 tiles for products at most 16 wide (a LoRA rank): a 64-wide tile would be 3/4 idle. */
  narrow: boolean;
}

/** Output columns of a tile. */
const tileWidth = (k: { narrow: boolean }) => (k.narrow ? BN_NARROW : BN);

/** What the store adds to a product: a bias row, a residual of c's shape. */
interface Extras {
  bias: boolean;
  residual: boolean;
}

/** Output epilogue shared by both kernels: scale, bias, residual, accumulation into c, store. */
const EPILOGUE = (x: Extras) => `
fn store(i: u32, j: u32, v: f32) {
  let o = i * P.ldc + P.nOff + j;
  var r = P.alpha * v${x.bias ? ' + bias[P.nOff + j]' : ''}${x.residual ? ' + residual[o]' : ''};
  if (P.accumulate != 0u) { r += c[o]; }
  c[o] = r;
}
`;

/** The epilogue's bindings from `first` on: bias, residual (each when used), then c. */
function outBindings(first: number, x: Extras): string {
  let b = first;
  return (
    (x.bias ? `@group(0) @binding(${b++}) var<storage, read> bias: array<f32>;\n` : '') +
    (x.residual ? `@group(0) @binding(${b++}) var<storage, read> residual: array<f32>;\n` : '') +
    `@group(0) @binding(${b}) var<storage, read_write> c: array<f32>;\n`
  );
}

const extrasKey = (x: Extras) => `${x.bias ? 'bias' : ''}${x.residual ? '+res' : ''}`;

const TILED = (k: TiledKey) => {
  // Element r (0..3) of this invocation's share of a 64 x 16 slab, as (row-in-tile, k-in-slab):
  // k-contiguous storage walks k fastest, row-contiguous storage walks rows fastest.
  const W = tileWidth(k);
  const slab = (kContiguous: boolean, r: number, width: number) =>
    kContiguous
      ? `let rr = lid / ${BK}u + ${(256 / BK) * r}u; let kk = lid % ${BK}u;`
      : `let kk = lid / ${width}u + ${(256 / width) * r}u; let rr = lid % ${width}u;`;
  // Slab elements per invocation: 64 x 16 of a, and 64 x 16 (or 16 x 16) of b, over 256.
  const bLoads = k.narrow ? [0] : R4;
  return `${header(k.read === 'f16')}${P_MM.wgsl}
@group(0) @binding(1) var<storage, read> a: array<f32>;
${weightBinding(2, 'b', k.read, false)}
${outBindings(3, k)}
var<workgroup> As: array<f32, ${BK * BM}>;
var<workgroup> Bs: array<f32, ${BK * W}>;
${EPILOGUE(k)}
${FLAT_WORKGROUP}
${entry(256)}
  let tileRow = wg / P.tilesN;
  let tileCol = wg % P.tilesN;
  // Folded grids overshoot; the test depends only on the workgroup id, so it is uniform.
  if (tileRow * ${BM}u >= P.M) { return; }
  let tx = lid % 16u;
  let ty = lid / 16u;
  // Accumulators are vec4s spelled out by the template (private arrays indexed in loops stay
  // in memory on some compilers, SwiftShader's among them): rows r, columns c..c+3 of a wide
  // tile, or the four rows of a narrow tile's one column.
${k.narrow ? '  var acc = vec4<f32>(0.0);' : R4.map((r) => `  var acc${r} = vec4<f32>(0.0);`).join('\n')}
  for (var k0 = 0u; k0 < P.K; k0 += ${BK}u) {
${R4.map(
  (r) => `    {
      ${slab(!k.transA, r, BM)}
      let i = tileRow * ${BM}u + rr;
      let kg = k0 + kk;
      var v = 0.0;
      if (i < P.M && kg < P.K) { v = a[P.aOff + ${k.transA ? 'kg * P.lda + i' : 'i * P.lda + kg'}]; }
      As[kk * ${BM}u + rr] = v;
    }`,
).join('\n')}
${bLoads
  .map(
    (r) => `    {
      ${slab(k.transB, r, W)}
      let j = tileCol * ${W}u + rr;
      let kg = k0 + kk;
      var v = 0.0;
      if (j < P.N && kg < P.K) { v = loadB(${k.transB ? 'j * P.ldb + kg' : 'kg * P.ldb + j'}); }
      Bs[kk * ${W}u + rr] = v;
    }`,
  )
  .join('\n')}
    workgroupBarrier();
    for (var kk = 0u; kk < ${BK}u; kk++) {
${
  k.narrow
    ? `      acc += vec4<f32>(${R4.map((r) => `As[kk * ${BM}u + ty + ${16 * r}u]`).join(', ')}) * Bs[kk * ${W}u + tx];`
    : `      let b4 = vec4<f32>(${R4.map((c) => `Bs[kk * ${W}u + tx + ${16 * c}u]`).join(', ')});
${R4.map((r) => `      acc${r} += As[kk * ${BM}u + ty + ${16 * r}u] * b4;`).join('\n')}`
}
    }
    workgroupBarrier();
  }
${R4.map(
  (r) => `  {
    let i = tileRow * ${BM}u + ty + ${16 * r}u;
${
  k.narrow
    ? `    if (i < P.M && tileCol * ${W}u + tx < P.N) { store(i, tileCol * ${W}u + tx, acc[${r}]); }`
    : R4.map((c) => `    if (i < P.M && tileCol * ${W}u + tx + ${16 * c}u < P.N) { store(i, tileCol * ${W}u + tx + ${16 * c}u, acc${r}[${c}]); }`).join('\n')
}
  }`,
).join('\n')}
}`;
};

/** Invocations per workgroup of the blocked kernel, 4x4 outputs each. */
const BLOCKED_WG = 64;

interface BlockedKey extends Extras {
  transA: boolean;
  transB: boolean;
  read: WeightRead;
  /**
   * How operands are read, in vec4s where rows allow (index parameters then count vec4s):
   * `dot`: x @ w^T with K % 4 == 0, both along K; `bRows`: b untransposed with N % 4 == 0, the
   * block's four columns at once; `aCols`: a transposed with M % 4 == 0, the block's four rows.
   */
  dot: boolean;
  bRows: boolean;
  aCols: boolean;
}

/** The vec4 reads a blocked product of this layout and size can use (see BlockedKey). */
function blockedReads(transA: boolean, transB: boolean, M: number, N: number, K: number) {
  const dot = transB && !transA && K % 4 === 0;
  return { dot, bRows: !transB && N % 4 === 0, aCols: transA && M % 4 === 0 };
}

/**
 * Rows and columns past the edge are clamped on load (they read a valid neighbour) and skipped on
 * store, so the inner loop has no branches.
 */
const BLOCKED = (k: BlockedKey) => {
  const aAt = (r: number, kk: string) => (k.dot ? `a[i${r} * P.lda + ${kk}]` : `a[P.aOff + ${k.transA ? `${kk} * P.lda + i${r}` : `i${r} * P.lda + ${kk}`}]`);
  const bAt = (c: number, kk: string) => (k.dot ? `loadB4(j${c} * P.ldb + ${kk})` : `loadB(${k.transB ? `j${c} * P.ldb + ${kk}` : `${kk} * P.ldb + j${c}`})`);
  // One step of K (kk, an expression): dot products of vec4s, or each a row's scalar times the
  // block's four b columns.
  const step = (kk: string) =>
    k.dot
      ? `    {
${R4.map((c) => `      let b${c} = ${bAt(c, kk)};`).join('\n')}
${R4.map((r) => `      { let a4 = ${aAt(r, kk)}; acc${r} += vec4<f32>(${R4.map((c) => `dot(a4, b${c})`).join(', ')}); }`).join('\n')}
    }`
      : `    {
      let b4 = ${k.bRows ? `loadB4(${kk} * P.ldb + col0 / 4u)` : `vec4<f32>(${R4.map((c) => bAt(c, kk)).join(', ')})`};
${k.aCols ? `      let a4 = a[P.aOff + ${kk} * P.lda + row0 / 4u];\n` : ''}${R4.map((r) => `      acc${r} += ${k.aCols ? `a4[${r}]` : aAt(r, kk)} * b4;`).join('\n')}
    }`;
  // Scalar steps come four to an iteration (a dot step already covers four of K).
  const loop = k.dot
    ? `  for (var kk = 0u; kk < P.K; kk++) {
${step('kk')}
  }`
    : `  var k4 = 0u;
  for (; k4 + 4u <= P.K; k4 += 4u) {
${R4.map((u) => step(`(k4 + ${u}u)`)).join('\n')}
  }
  for (var kk = k4; kk < P.K; kk++) {
${step('kk')}
  }`;
  return `${header(k.read === 'f16')}${P_MM.wgsl}
@group(0) @binding(1) var<storage, read> a: array<${k.dot || k.aCols ? 'vec4<f32>' : 'f32'}>;
${weightBinding(2, 'b', k.read, k.dot || k.bRows)}
${outBindings(3, k)}
${EPILOGUE(k)}
${FLAT_WORKGROUP}
${entry(BLOCKED_WG)}
  let block = wg * ${BLOCKED_WG}u + lid;
  let row0 = (block / P.tilesN) * 4u;
  let col0 = (block % P.tilesN) * 4u;
  if (row0 >= P.M) { return; }
${R4.map((r) => `  let i${r} = min(row0 + ${r}u, P.M - 1u);`).join('\n')}
${R4.map((c) => `  let j${c} = min(col0 + ${c}u, P.N - 1u);`).join('\n')}
${R4.map((r) => `  var acc${r} = vec4<f32>(0.0);`).join('\n')}
${loop}
${R4.map(
  (r) => `  if (row0 + ${r}u < P.M) {
${R4.map((c) => `    if (col0 + ${c}u < P.N) { store(row0 + ${r}u, col0 + ${c}u, acc${r}[${c}]); }`).join('\n')}
  }`,
).join('\n')}
}`;
};

const MV_THREADS = 256;
/** Up to this many K units (vec4s or scalars) per row, one invocation computes a whole row. */
const MV_SHORT_K = 16;
/** Rows of x a short-row matvec takes at once (each invocation keeps M accumulators). */
const MV_SHORT_ROWS = 16;

interface MatvecKey extends Extras {
  M: number;
  vec4: boolean;
  read: WeightRead;
  /** Invocations sharing one weight row (matvecLanes). */
  lanes: number;
}

/**
 * Invocations per weight row: one for short rows or where workgroup memory is slow; otherwise a
 * power of two giving each lane at least four units, up to 32, so a mid-length row (a small
 * model's MLP) is not reduced through a tree wider than its work.
 */
function matvecLanes(units: number, workgroupMemory: boolean): number {
  if (units <= MV_SHORT_K || !workgroupMemory) return 1;
  return Math.min(32, 2 ** Math.floor(Math.log2(units / 4)));
}

/** c[m, nOff + n] = x[m, :] . w[n, :]; K is counted in vec4s when vec4 (P.K = K / 4). */
const MATVEC = (k: MatvecKey) => {
  const X = k.vec4 ? 'vec4<f32>' : 'f32';
  // One accumulator per row of x, unrolled when the kernel is built (a private array indexed in a
  // loop stays in memory on some compilers, SwiftShader's among them).
  const rows = Array.from({ length: k.M }, (_, m) => m);
  const each = (line: (m: number) => string, indent: string) => rows.map((m) => indent + line(m)).join('\n');
  const mac = (m: number) => (k.vec4 ? `acc${m} += dot(w4, a[${m}u * P.lda + kk]);` : `acc${m} += w4 * a[${m}u * P.lda + kk];`);
  // Whole rows per invocation need no reduction, and so no workgroup memory.
  const reduce =
    k.lanes === 1
      ? `  if (n < P.N) {
${each((m) => `store(${m}u, n, acc${m});`, '    ')}
  }`
      : `${each((m) => `red[${m * 256}u + lid] = acc${m};`, '  ')}
  for (var s = ${k.lanes / 2}u; s > 0u; s = s >> 1u) {
    workgroupBarrier();
    if (lane < s) {
${each((m) => `red[${m * 256}u + lid] += red[${m * 256}u + lid + s];`, '      ')}
    }
  }
  if (lane == 0u && n < P.N) {
${each((m) => `store(${m}u, n, red[${m * 256}u + lid]);`, '    ')}
  }`;
  return `${header(k.read === 'f16')}${P_MM.wgsl}
@group(0) @binding(1) var<storage, read> a: array<${X}>;
${weightBinding(2, 'b', k.read, k.vec4)}
${outBindings(3, k)}
${k.lanes === 1 ? '' : `var<workgroup> red: array<f32, ${k.M * 256}>;`}
${EPILOGUE(k)}
${FLAT_WORKGROUP}
${entry(256)}
  let row = lid / ${k.lanes}u;
  let lane = lid % ${k.lanes}u;
  let n = wg * ${MV_THREADS / k.lanes}u + row;
${each((m) => `var acc${m} = 0.0;`, '  ')}
  if (n < P.N) {
    for (var kk = lane; kk < P.K; kk += ${k.lanes}u) {
      let w4 = ${k.vec4 ? 'loadB4' : 'loadB'}(n * P.ldb + kk);
${each(mac, '      ')}
    }
  }
${reduce}
}`;
};

export interface MatmulOptions {
  /** Up to this many rows of x, a transposed-b product uses the matrix-vector kernel. */
  matvecMaxRows: number;
}

interface Job {
  a: GpuTensor;
  b: GpuTensor;
  bias?: GpuTensor;
  /** Added to the output, same shape [M, N] (one buffer). */
  residual?: GpuTensor;
  /** Accumulate alpha * product into this [M, N] tensor (one buffer) instead of a new one. */
  into?: { c: GpuTensor; alpha: number };
  M: number;
  N: number;
  K: number;
  transA: boolean;
  transB: boolean;
}

/**
 * op(a) [M, K] @ op(b) [K, N] (+ bias + residual) -> [M, N], with b possibly f16 and/or
 * row-split; or, with `into`, c += alpha * op(a) @ op(b), returning c.
 */
export function matmulWgsl(rt: Runtime, job: Job, opts: MatmulOptions, op: string): GpuTensor {
  const { a, b, bias, residual, into, M, N, K, transA, transB } = job;
  if (a.dtype !== 'f32') throw new EngineError(`${op}: the first operand must be f32; pass ${a.dtype} weights as the second`);
  const read = weightRead(b.dtype, rt.f16);
  // b's stored row: K values when transposed, N when not, padded to whole groups when quantized.
  const ldb = b.rowStride;
  const out = into?.c ?? rt.allocOut([M, N], op);
  const cBuf = out.buffer(op);
  if (M === 0 || N === 0) return out;
  if (K === 0) {
    if (into) return out;
    rt.free(out);
    return rt.zeros([M, N]);
  }
  const aBuf = a.buffer(op);
  const biasBuf = bias?.buffer(op);
  const residualBuf = residual?.buffer(op);
  b.chunks.forEach((chunk, ci) => {
    // Along N when b is [N, K] (transposed), along K when b is [K, N].
    const Nc = transB ? chunk.rows : N;
    const Kc = transB ? K : chunk.rows;
    const nOff = transB ? chunk.rowStart : 0;
    const kOff = transB ? 0 : chunk.rowStart;
    const base = {
      M,
      N: Nc,
      K: Kc,
      ldc: N,
      nOff,
      accumulate: into || (!transB && ci > 0) ? 1 : 0,
      alpha: into?.alpha ?? 1,
    };
    // Added once per output element: by every N chunk, or by the first of the K chunks.
    const first = transB || ci === 0;
    const extras: Extras = { bias: !!biasBuf && first, residual: !!residualBuf && first };
    const buffers = [aBuf, chunk.buffer, ...(extras.bias ? [biasBuf!] : []), ...(extras.residual ? [residualBuf!] : []), cBuf];
    const vec4 = K % 4 === 0;
    const units = vec4 ? K / 4 : K;
    // Short rows also take the matvec path for a decode batch of up to 16 where the alternative
    // is the tiled kernel: its 64-wide tiles would stage a whole slab of K for a handful of rows.
    const rowsForMatvec = units <= MV_SHORT_K && rt.options.workgroupMemory ? Math.max(opts.matvecMaxRows, MV_SHORT_ROWS) : opts.matvecMaxRows;
    if (transB && !transA && M <= rowsForMatvec && kOff === 0) {
      const key: MatvecKey = { M, vec4, read, ...extras, lanes: matvecLanes(units, rt.options.workgroupMemory) };
      rt.dispatch({
        key: `matvec:${M}:${vec4 ? 'v4' : 's'}:${read}:${extrasKey(extras)}:${key.lanes}`,
        wgsl: () => MATVEC(key),
        params: P_MM,
        values: { ...base, K: units, lda: units, ldb: vec4 ? ldb / 4 : ldb, aOff: 0, tilesN: 0 },
        buffers,
        workgroups: Math.ceil(Nc / (MV_THREADS / key.lanes)),
      });
      return;
    }
    const values = { ...base, lda: transA ? M : K, ldb, aOff: transA ? kOff * M : kOff };
    if (!rt.options.workgroupMemory) {
      const reads = blockedReads(transA, transB, M, N, K);
      const key: BlockedKey = { transA, transB, read, ...extras, ...reads };
      const tilesN = Math.ceil(Nc / 4);
      // Index parameters in vec4s for the operands read as vec4s.
      const inVec4s = {
        ...(reads.dot ? { K: Kc / 4, lda: K / 4, ldb: ldb / 4 } : {}),
        ...(reads.bRows ? { ldb: ldb / 4 } : {}),
        ...(reads.aCols ? { lda: M / 4, aOff: values.aOff / 4 } : {}),
      };
      rt.dispatch({
        key: `matmulBlocked:${transA ? 'T' : 'N'}${transB ? 'T' : 'N'}:${read}:${extrasKey(extras)}:${['dot', 'bRows', 'aCols'].filter((f) => reads[f as keyof typeof reads]).join('+')}`,
        wgsl: () => BLOCKED(key),
        params: P_MM,
        values: { ...values, ...inVec4s, tilesN },
        buffers,
        workgroups: Math.ceil((Math.ceil(M / 4) * tilesN) / BLOCKED_WG),
      });
      return;
    }
    const key: TiledKey = { transA, transB, read, ...extras, narrow: Nc <= BN_NARROW };
    const tilesN = Math.ceil(Nc / tileWidth(key));
    rt.dispatch({
      key: `matmul:${transA ? 'T' : 'N'}${transB ? 'T' : 'N'}:${read}:${extrasKey(extras)}:${key.narrow ? 'narrow' : 'wide'}`,
      wgsl: () => TILED(key),
      params: P_MM,
      values: { ...values, tilesN },
      buffers,
      workgroups: Math.ceil(M / BM) * tilesN,
    });
  });
  return out;
}
