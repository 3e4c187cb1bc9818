/**
 * The same conformance suite through Node's `webgpu` package (Dawn). Needs a Vulkan driver: on
 * machines without a GPU, Chromium's SwiftShader (VK_ICD_FILENAMES is set automatically when
 * /usr/lib/chromium has it) plus the Vulkan loader (libvulkan1). When Dawn finds no adapter the
 * suite fails with the reason, never skips.
 */
import { describe, expect, it } from 'vitest';
import { arraySource } from '../backend';
import { WebGPUUnavailableError } from '../errors';
import { isCpuEmulated } from './backend';
import { randn } from '../../../test/support/gpu/cases';
import { acquireDevice } from './device';
import { createNodeWebGPUBackend } from './node';
import { defineWebGPUSuite } from '../../../test/support/gpu/suite';

defineWebGPUSuite('WebGPU (Node, Dawn)', () => createNodeWebGPUBackend());

describe('kernel family by adapter', () => {
  const adapter = (info: Partial<GPUAdapterInfo>) => ({ info }) as unknown as GPUAdapter;

  it('register-only kernels on a CPU-emulated adapter: a fallback adapter or SwiftShader by name', () => {
    expect(isCpuEmulated(adapter({ isFallbackAdapter: true, architecture: '', description: '' }))).toBe(true);
    expect(isCpuEmulated(adapter({ isFallbackAdapter: false, architecture: 'swiftshader', description: '' }))).toBe(true);
    expect(isCpuEmulated(adapter({ architecture: '', description: 'SwiftShader driver 5.0.0' }))).toBe(true);
  });

  it('workgroup-memory kernels on a GPU, and when the adapter is unknown', () => {
    expect(isCpuEmulated(adapter({ isFallbackAdapter: false, vendor: 'nvidia', architecture: 'ada', description: '' }))).toBe(false);
    expect(isCpuEmulated(null)).toBe(false);
  });

  it('a backend created without the option takes the family its adapter calls for', async () => {
    const be = await createNodeWebGPUBackend();
    try {
      expect(be.rt.options.workgroupMemory).toBe(!isCpuEmulated(be.adapter));
    } finally {
      be.destroy();
    }
  });
});

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

describe('f16 weight kernels (Dawn null backend: validates, does not execute)', () => {
  // SwiftShader has no shader-f16, so the f16 variants cannot run here; Dawn's null backend
  // offers the feature and puts every shader and binding through Tint and WebGPU validation.
  it('every f16 variant of linear, matmul and embedding compiles and binds', async () => {
    const be = await createNodeWebGPUBackend({ dawnOptions: ['backend=null'], splitBytes: 1024 });
    expect(be.f16).toBe(true);
    const w = be.weight(arraySource(randn(1, 70 * 16), [70, 16]), 'f16');
    const wOdd = be.weight(arraySource(randn(2, 9 * 7), [9, 7]), 'f16');
    expect(w.dtype).toBe('f16');
    expect(w.chunks.length).toBeGreaterThan(1);
    const x = (m: number, k: number) => be.tensor(randn(m, m * k), [m, k]);
    be.linear(x(2, 16), w, be.tensor(randn(3, 70), [70])); // matvec, vec4 loads of f16
    be.linear(x(9, 16), w); // tiled
    be.linear(x(1, 7), wOdd); // matvec, scalar loads
    be.matmul(x(3, 70), w, false, false); // split along K, accumulated
    be.matmul(x(3, 9), wOdd, false, false);
    be.embedding(w, Int32Array.from([0, 69, 33]));
    // Chunks of 73 halves (146 bytes) end mid-word: read() must still copy in 4-byte units.
    const odd = be.weight(arraySource(randn(4, 9 * 73), [9, 73]), 'f16');
    expect(odd.chunks.length).toBeGreaterThan(1);
    expect((await be.read(odd)).length).toBe(9 * 73);
    await be.sync();
    be.destroy();
  });
});
