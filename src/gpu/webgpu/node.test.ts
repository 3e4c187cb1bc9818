/**
 * The same conformance suite through Node's `webgpu` package (Dawn). Needs a Vulkan driver: on
 * machines without a GPU, Chromium's SwiftShader (VK_ICD_FILENAMES is set automatically when
 * /usr/lib/chromium has it) plus the Vulkan loader (libvulkan1). When Dawn finds no adapter the
 * suite fails with the reason, never skips.
 */
import { describe, expect, it } from 'vitest';
import { WebGPUUnavailableError } from '../errors';
import { acquireDevice } from './device';
import { createNodeWebGPUBackend } from './node';
import { defineWebGPUSuite } from './suite';

defineWebGPUSuite('WebGPU (Node, Dawn)', () => createNodeWebGPUBackend());

describe('device acquisition', () => {
  it('without navigator.gpu, throws WebGPUUnavailableError saying what to do', async () => {
    const g = globalThis as { navigator?: unknown };
    const saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    Object.defineProperty(globalThis, 'navigator', { value: {}, configurable: true, writable: true });
    try {
      await expect(acquireDevice()).rejects.toThrow(WebGPUUnavailableError);
      await expect(acquireDevice()).rejects.toThrow(/navigator\.gpu is missing.*CPU backend/);
    } finally {
      if (saved) Object.defineProperty(globalThis, 'navigator', saved);
      else delete g.navigator;
    }
  });
});
