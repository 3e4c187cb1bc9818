/**
 * Page-side entry of the compute self-check: start the worker, send seeded inputs, compare the
 * engine's WebGPU matmul with the same op on the CPU reference backend.
 */
import { CpuBackend } from '../gpu/cpu/backend';
import { backendMatmul, matmulTolerance, maxAbsDiff, seededUniform, type ComputeCheckRequest, type ComputeCheckResponse } from './compute-check.shared';

export interface ComputeCheckOptions {
  m?: number;
  k?: number;
  n?: number;
  seed?: number;
  /** Give up (and terminate the worker) after this long. */
  timeoutMs?: number;
}

export interface ComputeCheckResult {
  ok: boolean;
  m: number;
  k: number;
  n: number;
  /** Largest |GPU - CPU| over the output; NaN when the GPU part failed. */
  maxAbsError: number;
  tolerance: number;
  /** GPU adapter name as the worker saw it; empty when the GPU part failed. */
  gpuAdapter: string;
  /** Time inside the worker from upload to readback, including shader compilation. */
  gpuMs: number;
  error?: string;
}

let nextId = 1;

/** Run an m x k by k x n matmul on the engine in a WebGPU worker and check it. Resolves, never rejects. */
export async function runComputeCheck(opts: ComputeCheckOptions = {}): Promise<ComputeCheckResult> {
  // Odd sizes on purpose: no dimension is a multiple of a kernel's tile, so edges are exercised.
  const { m = 13, k = 17, n = 11, seed = 20260101, timeoutMs = 60_000 } = opts;
  const a = seededUniform(m * k, seed);
  const b = seededUniform(k * n, seed + 1);
  const want = await backendMatmul(new CpuBackend(), a, b, m, k, n);
  const tolerance = matmulTolerance(k);
  const base = { m, k, n, tolerance };

  let reply: ComputeCheckResponse;
  try {
    reply = await inWorker({ id: nextId++, m, k, n, a, b }, timeoutMs);
  } catch (e) {
    return { ...base, ok: false, maxAbsError: NaN, gpuAdapter: '', gpuMs: NaN, error: e instanceof Error ? e.message : String(e) };
  }
  if (!reply.ok) return { ...base, ok: false, maxAbsError: NaN, gpuAdapter: '', gpuMs: NaN, error: reply.error };
  const maxAbsError = maxAbsDiff(reply.c, want);
  const ok = maxAbsError <= tolerance;
  return {
    ...base,
    ok,
    maxAbsError,
    gpuAdapter: reply.gpuAdapter,
    gpuMs: reply.gpuMs,
    ...(ok ? {} : { error: `GPU result differs from the CPU reference by ${maxAbsError} (tolerance ${tolerance})` }),
  };
}

async function inWorker(req: ComputeCheckRequest, timeoutMs: number): Promise<ComputeCheckResponse> {
  const worker = new Worker(new URL('./compute-check.worker.ts', import.meta.url), {
    type: 'module',
    name: 'compute-check',
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await new Promise<ComputeCheckResponse>((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`compute check timed out after ${timeoutMs} ms`)), timeoutMs);
      worker.onmessage = (ev: MessageEvent<ComputeCheckResponse>) => {
        if (ev.data.id === req.id) resolve(ev.data);
      };
      worker.onerror = (ev: ErrorEvent) => {
        ev.preventDefault();
        reject(new Error(`compute worker failed: ${ev.message || 'script error (did the worker load?)'}`));
      };
      worker.onmessageerror = () => reject(new Error('compute worker sent a message that could not be read'));
      worker.postMessage(req, [req.a.buffer, req.b.buffer]);
    });
  } finally {
    clearTimeout(timer);
    worker.terminate();
  }
}
