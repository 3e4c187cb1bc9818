/**
 * WebGPU in Node through the `webgpu` package (Dawn). Import this module only from Node code
 * (CLI, tests): it loads a native addon.
 */
import { existsSync } from 'node:fs';
import { WebGPUUnavailableError } from '../errors';
import { createWebGPUBackend, type WebGPUBackend, type WebGPUBackendOptions } from './backend';

/** Chromium's SwiftShader ICD: a software Vulkan driver for machines without a GPU driver. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/**
 * Dawn's instance must outlive every adapter and device made from it: once the GPU object is
 * garbage collected its worker threads go away under live devices and the process aborts (seen
 * as futex / mutex assertion failures). So it is created once and held here for good.
 */
const instances = new Map<string, GPU>();

/**
 * A navigator.gpu for Node. Dawn reads VK_ICD_FILENAMES when it creates its Vulkan instance, so
 * setting it here (if the caller did not) is early enough.
 */
export async function nodeGPU(dawnOptions: string[] = []): Promise<GPU> {
  const key = dawnOptions.join('\n');
  const have = instances.get(key);
  if (have) return have;
  if (!process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  let mod: typeof import('webgpu');
  try {
    mod = await import('webgpu');
  } catch (e) {
    throw new WebGPUUnavailableError(`the 'webgpu' package (Dawn for Node) failed to load: ${(e as Error).message}`);
  }
  Object.assign(globalThis, mod.globals);
  const gpu = mod.create(dawnOptions);
  instances.set(key, gpu);
  return gpu;
}

/** Why Dawn gave no adapter, as far as this machine shows it. */
function diagnose(): string {
  const hints: string[] = [];
  const loaderDirs = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/lib/x86_64-linux-gnu'];
  const ldPath = (process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean);
  if (![...loaderDirs, ...ldPath].some((d) => existsSync(`${d}/libvulkan.so.1`))) {
    hints.push(
      'the Vulkan loader libvulkan.so.1 is not installed: `apt-get install libvulkan1`, or start node with ' +
        'LD_LIBRARY_PATH=/usr/lib/chromium (Chromium ships a copy)',
    );
  }
  if (!process.env.VK_ICD_FILENAMES) {
    hints.push(`no Vulkan driver is configured: install chromium and set VK_ICD_FILENAMES=${SWIFTSHADER_ICD}`);
  }
  return hints.length ? hints.join('; ') : 'run with DEBUG=* to see what Dawn reports';
}

export async function createNodeWebGPUBackend(opts: WebGPUBackendOptions & { dawnOptions?: string[] } = {}): Promise<WebGPUBackend> {
  const gpu = await nodeGPU(opts.dawnOptions);
  const adapter = opts.adapter ?? (await gpu.requestAdapter());
  if (!adapter) throw new WebGPUUnavailableError(`Dawn (the 'webgpu' package) found no GPU adapter: ${diagnose()}`);
  return createWebGPUBackend({ ...opts, adapter });
}
