/**
 * Dedicated worker for the compute self-check: creates the engine's WebGPU backend, runs its
 * matmul on the inputs it is sent, and posts the result back. Proves that the engine's device
 * acquisition and kernels work inside a worker under the app's COOP/COEP/CSP, where the policy
 * engine runs.
 */
import { createWebGPUBackend } from '../gpu/webgpu/backend';
import { gpuAdapterLabel, backendMatmul, type ComputeCheckRequest, type ComputeCheckResponse } from './compute-check.shared';

const scope = self as unknown as DedicatedWorkerGlobalScope;

scope.onmessage = async (ev: MessageEvent<ComputeCheckRequest>) => {
  const req = ev.data;
  let reply: ComputeCheckResponse;
  try {
    const { c, gpuAdapter, gpuMs } = await runMatmul(req);
    reply = { id: req.id, ok: true, c, gpuAdapter, gpuMs };
    scope.postMessage(reply, [c.buffer]);
  } catch (e) {
    reply = { id: req.id, ok: false, error: e instanceof Error ? e.message : String(e) };
    scope.postMessage(reply);
  }
};

async function runMatmul({ m, k, n, a, b }: ComputeCheckRequest) {
  const backend = await createWebGPUBackend();
  try {
    const t0 = performance.now();
    const c = await backendMatmul(backend, a, b, m, k, n);
    return { c, gpuAdapter: gpuAdapterLabel(backend.adapter?.info), gpuMs: performance.now() - t0 };
  } finally {
    backend.destroy();
  }
}
