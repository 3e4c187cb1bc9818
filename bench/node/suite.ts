/**
 * The engine in Node: the fast CPU backend (the default) and the reference it is checked
 * against, then WebGPU through Dawn when it gives an adapter.
 */
import { CpuBackend } from '../../src/gpu/cpu/backend';
import { FastCpuBackend } from '../../src/gpu/cpu-fast/backend';
import { nodeThreads } from '../../src/gpu/cpu-fast/threads-node';
import { DirSource } from '../../src/models/source-node';
import { createNodeWebGPUBackend } from '../../src/gpu/webgpu/node';
import type { WebGPUBackend } from '../../src/gpu/webgpu/backend';
import { adapterReport } from '../lib/adapter';
import { attempt } from '../lib/attempt';
import { measureCpu, type CpuFigures } from '../lib/cpu';
import { measureEngine } from '../lib/engine';
import { measureMatmul } from '../lib/matmul';
import { isSkipped, type AdapterReport, type EngineRun, type MatmulCell, type Maybe } from '../lib/types';
import type { Workload } from '../lib/workload';
import { log } from './log';
import type { BenchModel } from './models';

export interface NodeModelResult {
  'cpu-node': Maybe<EngineRun>;
  'cpu-reference-node': Maybe<EngineRun>;
  'webgpu-node': Maybe<EngineRun>;
}

export interface NodeRun {
  dawnAdapter: Maybe<AdapterReport>;
  matmul: Maybe<MatmulCell>;
  cpu: Maybe<CpuFigures>;
  models: Record<string, NodeModelResult>;
}

/** A fresh Dawn device per use, destroyed after, so memory figures start from zero. */
export async function withDawn<T>(fn: (be: WebGPUBackend) => Promise<T>): Promise<T> {
  const be = await createNodeWebGPUBackend();
  try {
    return await fn(be);
  } finally {
    be.device.destroy();
  }
}

export async function runInNode(models: BenchModel[], w: Workload, opts: { dawn: boolean }): Promise<NodeRun> {
  const dawnAdapter: Maybe<AdapterReport> = opts.dawn
    ? await attempt('getting a Dawn adapter', () => withDawn(async (be) => adapterReport(be.adapter!)), log)
    : { skipped: '--no-dawn' };
  const noDawn = isSkipped(dawnAdapter) ? dawnAdapter : null;
  const matmul = noDawn ?? (await attempt('the matmul on Dawn', () => withDawn((be) => measureMatmul(be, w)), log));
  log(`matmul ${w.matmulN}^3 on Dawn: ${JSON.stringify(matmul)}`);
  const fast = await FastCpuBackend.create(nodeThreads());
  const oneThread = await FastCpuBackend.create({ threads: 1 });
  const cpu = await attempt('the fast CPU backend against its peak', () => measureCpu(oneThread, fast, w), log);
  oneThread.close();
  log(`CPU: ${JSON.stringify(cpu)}`);
  const out: Record<string, NodeModelResult> = {};
  for (const m of models) {
    const source = new DirSource(m.dir);
    out[m.key] = {
      'cpu-node': await attempt(`the engine on the fast CPU backend in Node (${m.name})`, () => measureEngine(source, fast, 'node', w, log), log),
      'cpu-reference-node': await attempt(
        `the engine on the reference CPU backend in Node (${m.name})`,
        () => measureEngine(source, new CpuBackend(), 'node', w, log),
        log,
      ),
      'webgpu-node': noDawn ?? (await attempt(`the engine on Dawn (${m.name})`, () => withDawn((be) => measureEngine(source, be, 'node', w, log)), log)),
    };
  }
  fast.close();
  return { dawnAdapter, matmul, cpu, models: out };
}
