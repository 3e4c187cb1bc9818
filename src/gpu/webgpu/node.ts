/**
 * WebGPU in Node through the `webgpu` package (Dawn). Import this module only from Node code
 * (CLI, tests): it loads a native addon.
 */
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { WebGPUUnavailableError } from '../errors';
import { createWebGPUBackend, type WebGPUBackend, type WebGPUBackendOptions } from './backend';

/** Chromium's SwiftShader ICD: a software Vulkan driver for machines without a GPU driver. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';
const CHROMIUM_VULKAN_LOADER = '/usr/lib/chromium/libvulkan.so.1';
const LOADER_DIRS = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/lib/x86_64-linux-gnu', '/lib64'];
/** glibc's RTLD_NODELETE, which node's os.constants.dlopen does not list. */
const RTLD_NODELETE = 0x1000;

function systemVulkanLoader(): boolean {
  const ldPath = (process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean);
  return [...LOADER_DIRS, ...ldPath].some((d) => existsSync(`${d}/libvulkan.so.1`));
}

/**
 * Dawn dlopen()s "libvulkan.so.1" by name. Machines with Chromium but without the libvulkan1
 * package have the loader only in Chromium's private directory, which LD_LIBRARY_PATH can no
 * longer reach once node runs. Loading Chromium's copy first, pinned with RTLD_NODELETE, makes
 * Dawn's later dlopen find it by soname. process.dlopen then rejects it as "not a node module",
 * which is expected: only the side effect of loading is wanted.
 */
function preloadChromiumVulkanLoader(): void {
  if (process.platform !== 'linux' || systemVulkanLoader() || !existsSync(CHROMIUM_VULKAN_LOADER)) return;
  try {
    process.dlopen({ exports: {} }, CHROMIUM_VULKAN_LOADER, constants.dlopen.RTLD_NOW | RTLD_NODELETE);
  } catch {
    // "Module did not self-register": the library is loaded and stays loaded.
  }
}

/** Why `webgpu` did not load: left out at install (it is optional) says how to add it. */
function webgpuLoadError(e: Error & { code?: string }): WebGPUUnavailableError {
  if (e.code === 'ERR_MODULE_NOT_FOUND' && e.message.includes("'webgpu'")) {
    return new WebGPUUnavailableError(
      "the optional 'webgpu' package (Dawn for Node) is not installed (npm's --omit=optional leaves it out): run `npm install webgpu` in this folder, or use --backend cpu.",
    );
  }
  return new WebGPUUnavailableError(`the 'webgpu' package (Dawn for Node) failed to load: ${e.message}`);
}

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
  preloadChromiumVulkanLoader();
  let mod: typeof import('webgpu');
  try {
    mod = await import('webgpu');
  } catch (e) {
    throw webgpuLoadError(e as Error & { code?: string });
  }
  Object.assign(globalThis, mod.globals);
  const gpu = mod.create(dawnOptions);
  instances.set(key, gpu);
  return gpu;
}

/** Why Dawn gave no adapter, as far as this machine shows it. */
function diagnose(): string {
  const hints: string[] = [];
  if (!systemVulkanLoader() && !existsSync(CHROMIUM_VULKAN_LOADER)) {
    hints.push('the Vulkan loader libvulkan.so.1 is not installed: `apt-get install libvulkan1` (or chromium, which ships a copy)');
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
