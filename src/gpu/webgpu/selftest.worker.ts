/**
 * A dedicated worker that runs a few ops on its own WebGPU backend: the engine serves and trains
 * inside a worker, so device acquisition and the kernels must work there (WorkerNavigator.gpu).
 */
import { GREEDY } from '../sampler';
import { createWebGPUBackend } from './backend';

export interface SelftestRequest {
  x: Float32Array;
  w: Float32Array;
  M: number;
  K: number;
  N: number;
}
export type SelftestReply = { ok: true; y: Float32Array; ids: Int32Array } | { ok: false; error: string };

self.onmessage = async (e: MessageEvent<SelftestRequest>) => {
  const { x, w, M, K, N } = e.data;
  try {
    const be = await createWebGPUBackend();
    const logits = be.linear(be.tensor(x, [M, K]), be.tensor(w, [N, K]));
    const reply: SelftestReply = { ok: true, y: await be.read(logits), ids: (await be.sample(logits, GREEDY, new Float32Array(M))).ids };
    be.destroy();
    self.postMessage(reply);
  } catch (err) {
    self.postMessage({ ok: false, error: String((err as Error)?.stack ?? err) } satisfies SelftestReply);
  }
};
