import { expect, it } from 'vitest';
import { CpuBackend } from '../cpu/backend';
import { GREEDY } from '../sampler';
import { randn, relError } from '../../../test/support/gpu/cases';
import type { SelftestReply, SelftestRequest } from './selftest.worker';

it('the WebGPU backend works inside a dedicated worker', async () => {
  const req: SelftestRequest = { x: randn(1, 3 * 20), w: randn(2, 37 * 20), M: 3, K: 20, N: 37 };
  const worker = new Worker(new URL('./selftest.worker.ts', import.meta.url), { type: 'module' });
  const reply = await new Promise<SelftestReply>((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => reject(new Error(`worker failed to start: ${e.message}`));
    worker.postMessage(req);
  });
  worker.terminate();
  if (!reply.ok) throw new Error(`worker: ${reply.error}`);
  const cpu = new CpuBackend();
  const logits = cpu.linear(cpu.tensor(req.x, [3, 20]), cpu.tensor(req.w, [37, 20]));
  expect(relError(reply.y, await cpu.read(logits))).toBeLessThan(1e-4);
  expect(Array.from(reply.ids)).toEqual(Array.from((await cpu.sample(logits, GREEDY, new Float32Array(3))).ids));
});
