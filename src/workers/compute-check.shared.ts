/**
 * The message protocol and pure parts of the compute self-check: the engine's own matmul, run
 * through the Backend interface on the worker's WebGPU backend and on the CPU reference backend,
 * must agree. Nothing here touches WebGPU, so it is tested in Node.
 */
import type { Backend, Tensor } from '../gpu/backend';
import { mulberry32 } from '../gpu/random';

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
  { id: number; ok: true; c: Float32Array<ArrayBuffer>; gpuAdapter: string; gpuMs: number } | { id: number; ok: false; error: string };

/** C = A x B on `backend`, through the same op the model's forward and backward use. */
export async function backendMatmul(backend: Backend, a: Float32Array, b: Float32Array, m: number, k: number, n: number): Promise<Float32Array<ArrayBuffer>> {
  const held: Tensor[] = [];
  const keep = (t: Tensor) => (held.push(t), t);
  try {
    const c = keep(backend.matmul(keep(backend.tensor(a, [m, k])), keep(backend.tensor(b, [k, n])), false, false));
    return new Float32Array(await backend.read(c));
  } finally {
    for (const t of held) backend.dispose(t);
  }
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

/** Deterministic inputs in [-1, 1), from the engine's own PRNG. */
export function seededUniform(length: number, seed: number): Float32Array<ArrayBuffer> {
  const rand = mulberry32(seed);
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = rand() * 2 - 1;
  return out;
}

/** "vendor architecture device" of a WebGPU adapter, or its description when those are empty. */
export function gpuAdapterLabel(info: Pick<GPUAdapterInfo, 'vendor' | 'architecture' | 'device' | 'description'> | undefined): string {
  if (!info) return '';
  return [info.vendor, info.architecture, info.device].filter(Boolean).join(' ') || info.description;
}
