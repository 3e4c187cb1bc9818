/** What a WebGPU adapter says about itself, the same way in the page and in Node (Dawn). */
import { isCpuEmulated } from '../../src/gpu/webgpu/backend';
import type { AdapterReport } from './types';

export function adapterReport(adapter: GPUAdapter): AdapterReport {
  // Dawn's GPUAdapterInfo keeps its fields as getters, so spreading it would print nothing.
  const info = adapter.info;
  return {
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    shaderF16: adapter.features.has('shader-f16'),
    kernels: isCpuEmulated(adapter) ? 'register-only' : 'workgroup-memory',
  };
}
