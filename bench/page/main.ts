/**
 * The bench page: the engine (WebGPU and CPU backends) and the transformers.js peer, run one
 * after the other in this tab on the models the Node side serves. The Node side calls
 * window.__bench.run(plan) and reads back the result; progress goes to the console.
 */
import { browserCpuBackend } from '../../src/gpu/cpu-fast/browser';
import { HubSource } from '../../src/models/source';
import { createWebGPUBackend, type WebGPUBackend } from '../../src/gpu/webgpu/backend';
import { adapterReport } from '../lib/adapter';
import { attempt as attemptLogged } from '../lib/attempt';
import { measureDurability } from '../lib/durability';
import { measureEngine } from '../lib/engine';
import { measureMatmul } from '../lib/matmul';
import { paperRun } from '../lib/paper';
import { isSkipped, type Maybe, type PeerRun } from '../lib/types';
import { measurePeer, transformers } from './peer';
import { measureJudgeTurns } from './judge';
import { FILES_ROUTE, type PageModelResult, type PagePlan, type PageResult, type PeerKey } from './protocol';

const log = (line: string) => console.log(line);
const attempt = <T>(what: string, fn: () => Promise<T>) => attemptLogged(what, fn, log);

/** A fresh device per use, destroyed after, so memory figures start from zero. */
async function withWebGPU<T>(fn: (be: WebGPUBackend) => Promise<T>): Promise<T> {
  const be = await createWebGPUBackend();
  try {
    return await fn(be);
  } finally {
    be.device.destroy();
  }
}

async function run(plan: PagePlan): Promise<PageResult> {
  const w = plan.workload;
  const adapter = await attempt('requesting a WebGPU adapter', async () => {
    const a = await navigator.gpu?.requestAdapter({ powerPreference: 'high-performance' });
    if (!a) throw new Error('navigator.gpu gave no adapter');
    return adapterReport(a);
  });
  const matmul = await attempt('the WebGPU matmul', () => withWebGPU((be) => measureMatmul(be, w)));
  log(`matmul ${w.matmulN}^3: ${JSON.stringify(matmul)}`);
  const models: Record<string, PageModelResult> = {};
  for (const m of plan.models) {
    const source = () => new HubSource(`${location.origin}${FILES_ROUTE}${m.key}`, { cacheStorage: null });
    const webgpu = await attempt(`the engine on WebGPU (${m.name})`, () => withWebGPU((be) => measureEngine(source(), be, 'chromium', w, log)));
    // The page's main thread may not block, so the fast backend runs on this one thread here.
    const cpu = await attempt(`the engine on the CPU backend (${m.name})`, async () =>
      measureEngine(source(), await browserCpuBackend('cpu'), 'chromium', w, log),
    );
    const peer = {} as Record<PeerKey, Maybe<PeerRun>>;
    for (const device of ['webgpu', 'wasm'] as const) {
      const name: PeerKey = `transformers.js-${device}`;
      const peerKey = m.peerKey;
      peer[name] = isSkipped(peerKey) ? peerKey : await attempt(`${name} (${m.name})`, () => measurePeer(peerKey, device, w, log));
    }
    models[m.key] = { 'webgpu-chromium': webgpu, 'cpu-chromium': cpu, peer };
  }
  const peerRuntime = await attempt('loading transformers.js', async () => {
    const { env } = await transformers();
    return { transformers: env.version, ortWasmThreads: env.backends.onnx.wasm?.numThreads ?? 'default' };
  });
  return {
    userAgent: navigator.userAgent,
    hardwareConcurrency: navigator.hardwareConcurrency,
    crossOriginIsolated,
    adapter,
    matmul,
    peerRuntime,
    models,
  };
}

window.__bench = {
  run,
  durability: () => measureDurability(),
  judge: (plan) => measureJudgeTurns(plan, log),
  paper: (plan) => withWebGPU(async (be) => paperRun(be, plan, adapterReport(be.adapter!), log)),
};
