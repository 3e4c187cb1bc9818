/**
 * A backend by name in Node. The fast CPU backend is one per thread: its helper threads and
 * memory serve every policy this thread loads (a tensor's block returns to it when the tensor is
 * disposed or collected), so commands that run many policies in turn do not start threads for
 * each. A worker thread (serve's trainer) gets one of its own.
 */
import type { Backend, BackendName } from './backend';
import { CpuBackend } from './cpu/backend';
import { FastCpuBackend } from './cpu-fast/backend';
import { nodeThreads } from './cpu-fast/threads-node';

let fastCpu: Promise<FastCpuBackend> | undefined;

export async function nodeBackend(name: BackendName): Promise<Backend> {
  if (name === 'cpu') return (fastCpu ??= FastCpuBackend.create(nodeThreads()));
  if (name === 'cpu-reference') return new CpuBackend();
  const { createNodeWebGPUBackend } = await import('./webgpu/node');
  return createNodeWebGPUBackend();
}
