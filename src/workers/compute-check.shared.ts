/**
 * The message protocol and pure maths of the compute self-check: a tiled WGSL matmul that runs
 * in a dedicated worker, compared with a CPU reference. Pure code only (tested in Node).
 */

export interface ComputeCheckRequest {
  id: number;
  m: number;
  k: number;
  n: number;
  /** Row-major m x k. */
  a: Float32Array<ArrayBuffer>;
  /** Row-major k x n. */
  b: Float32Array<ArrayBuffer>;
}

export type ComputeCheckResponse =
  | { id: number; ok: true; c: Float32Array<ArrayBuffer>; adapter: string; gpuMs: number }
  | { id: number; ok: false; error: string };

/** Side of the square workgroup tile in the WGSL kernel (8 x 8 = 64 invocations). */
export const TILE = 8;

/**
 * C = A x B, one invocation per output element, K walked in TILE-wide slabs staged through
 * workgroup memory. Out-of-range rows/columns load zeros and skip the store, so any shape works.
 * No early return: every invocation must reach the barriers.
 */
export const MATMUL_WGSL = /* wgsl */ `
struct Dims { m: u32, k: u32, n: u32, pad: u32 }
const T: u32 = ${TILE}u;
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;
var<workgroup> ta: array<f32, ${TILE * TILE}>;
var<workgroup> tb: array<f32, ${TILE * TILE}>;

@compute @workgroup_size(${TILE}, ${TILE})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
  let row = gid.y;
  let col = gid.x;
  var acc = 0.0;
  let slabs = (dims.k + T - 1u) / T;
  for (var s = 0u; s < slabs; s++) {
    let ak = s * T + lid.x;
    var av = 0.0;
    if (row < dims.m && ak < dims.k) { av = a[row * dims.k + ak]; }
    ta[lid.y * T + lid.x] = av;
    let bk = s * T + lid.y;
    var bv = 0.0;
    if (bk < dims.k && col < dims.n) { bv = b[bk * dims.n + col]; }
    tb[lid.y * T + lid.x] = bv;
    workgroupBarrier();
    for (var i = 0u; i < T; i++) {
      acc += ta[lid.y * T + i] * tb[i * T + lid.x];
    }
    workgroupBarrier();
  }
  if (row < dims.m && col < dims.n) {
    c[row * dims.n + col] = acc;
  }
}
`;

/** CPU reference: row-major matmul with float64 accumulation. */
export function matmulCpu(a: Float32Array, b: Float32Array, m: number, k: number, n: number): Float32Array<ArrayBuffer> {
  if (a.length !== m * k || b.length !== k * n) {
    throw new Error(`matmulCpu: shapes do not match (a ${a.length} != ${m}x${k} or b ${b.length} != ${k}x${n})`);
  }
  const c = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let p = 0; p < k; p++) acc += a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
  }
  return c;
}

/** Largest |x[i] - y[i]|; Infinity when lengths differ or any value is NaN. */
export function maxAbsDiff(x: ArrayLike<number>, y: ArrayLike<number>): number {
  if (x.length !== y.length) return Infinity;
  let worst = 0;
  for (let i = 0; i < x.length; i++) {
    const d = Math.abs(x[i] - y[i]);
    if (Number.isNaN(d)) return Infinity;
    if (d > worst) worst = d;
  }
  return worst;
}

/**
 * Tolerance for an f32 dot product of length k with inputs in [-1, 1]: each of k products and
 * adds may round by ~6e-8 relative, so 1e-5 * k is a generous bound that still catches a
 * wrong index (errors of order 0.1-1).
 */
export function matmulTolerance(k: number): number {
  return 1e-5 * Math.max(1, k);
}

/** Deterministic inputs in [-1, 1) from a 32-bit seed (mulberry32). */
export function seededUniform(length: number, seed: number): Float32Array<ArrayBuffer> {
  const out = new Float32Array(length);
  let s = seed >>> 0;
  for (let i = 0; i < length; i++) {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const u = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    out[i] = u * 2 - 1;
  }
  return out;
}
