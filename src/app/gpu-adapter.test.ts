import { describe, expect, it } from 'vitest';
import {
  KEY_LIMITS,
  gpuAdapterLabel,
  detectPlatform,
  formatBytes,
  formatCount,
  formatLimit,
  probeGpuAdapter,
  summarizeGpuAdapter,
  webGpuHelp,
  type GpuAdapterLike,
} from './gpu-adapter';

const LINUX_CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/139.0.0.0 Safari/537.36';
const WINDOWS_FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:141.0) Gecko/20100101 Firefox/141.0';
const MAC_SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Safari/605.1.15';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';
const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/139.0.0.0 Mobile Safari/537.36';

/** What headless Chromium on this machine reports (SwiftShader). */
function swiftshaderLike(features: string[] = ['subgroups', 'timestamp-query']): GpuAdapterLike {
  const set = new Set(features);
  return {
    info: { vendor: 'google', architecture: 'swiftshader', device: '', description: '', isFallbackAdapter: true },
    features: set,
    limits: {
      maxStorageBufferBindingSize: 1073741824,
      maxBufferSize: 1073741824,
      maxComputeWorkgroupStorageSize: 32768,
      maxComputeInvocationsPerWorkgroup: 256,
      maxComputeWorkgroupSizeX: 256,
      maxStorageBuffersPerShaderStage: 10,
    },
  };
}

describe('formatBytes / formatCount', () => {
  it('picks binary units and trims decimals', () => {
    expect(formatBytes(0)).toBe('0 bytes');
    expect(formatBytes(100)).toBe('100 bytes');
    expect(formatBytes(1024)).toBe('1 KiB');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(32768)).toBe('32 KiB');
    expect(formatBytes(134217728)).toBe('128 MiB');
    expect(formatBytes(1073741824)).toBe('1 GiB');
    expect(formatBytes(4294967292)).toBe('4 GiB');
    expect(formatBytes(2 ** 50)).toBe('1024 TiB');
  });

  it('passes odd inputs through rather than inventing a size', () => {
    expect(formatBytes(NaN)).toBe('NaN');
    expect(formatBytes(-1)).toBe('-1');
  });

  it('groups thousands without the locale', () => {
    expect(formatCount(0)).toBe('0');
    expect(formatCount(999)).toBe('999');
    expect(formatCount(1000)).toBe('1,000');
    expect(formatCount(1073741824)).toBe('1,073,741,824');
  });

  it('formats byte limits with both units and counts plainly', () => {
    expect(formatLimit('maxBufferSize', 268435456)).toBe('256 MiB (268,435,456 bytes)');
    expect(formatLimit('maxComputeWorkgroupStorageSize', 16384)).toBe('16 KiB (16,384 bytes)');
    expect(formatLimit('maxComputeWorkgroupStorageSize', 512)).toBe('512 bytes');
    expect(formatLimit('maxComputeInvocationsPerWorkgroup', 1024)).toBe('1,024');
  });
});

describe('summarizeGpuAdapter', () => {
  it('reads info, shader-f16 and the key limits in a fixed order', () => {
    const s = summarizeGpuAdapter(swiftshaderLike());
    expect(s.vendor).toBe('google');
    expect(s.architecture).toBe('swiftshader');
    expect(s.isFallbackAdapter).toBe(true);
    expect(s.shaderF16).toBe(false);
    expect(s.features).toEqual(['subgroups', 'timestamp-query']);
    expect(s.limits.map((l) => l.name)).toEqual([...KEY_LIMITS]);
    expect(s.limits[0]).toEqual({
      name: 'maxStorageBufferBindingSize',
      value: 1073741824,
      display: '1 GiB (1,073,741,824 bytes)',
    });
    expect(gpuAdapterLabel(s)).toBe('google swiftshader');
  });

  it('sees shader-f16 and sorts features', () => {
    const s = summarizeGpuAdapter(swiftshaderLike(['timestamp-query', 'shader-f16', 'bgra8unorm-storage']));
    expect(s.shaderF16).toBe(true);
    expect(s.features).toEqual(['bgra8unorm-storage', 'shader-f16', 'timestamp-query']);
  });

  it('copes with browsers that report no info and only some limits', () => {
    const s = summarizeGpuAdapter({
      features: new Set<string>(),
      limits: { maxBufferSize: 268435456 },
      isFallbackAdapter: false,
    });
    expect(s.vendor).toBe('');
    expect(s.isFallbackAdapter).toBe(false);
    expect(s.limits).toHaveLength(1);
    expect(gpuAdapterLabel(s)).toBe('unnamed adapter');
    expect(gpuAdapterLabel({ ...s, description: 'Apple M2' })).toBe('Apple M2');
  });
});

describe('webGpuHelp', () => {
  it('detects platforms from user agents', () => {
    expect(detectPlatform(LINUX_CHROME)).toBe('linux');
    expect(detectPlatform(WINDOWS_FIREFOX)).toBe('windows');
    expect(detectPlatform(MAC_SAFARI)).toBe('mac');
    expect(detectPlatform(IPHONE)).toBe('ios');
    expect(detectPlatform(ANDROID)).toBe('android');
    expect(detectPlatform('curl/8.0')).toBe('other');
  });

  it('names the supported browsers everywhere', () => {
    for (const ua of [LINUX_CHROME, WINDOWS_FIREFOX, MAC_SAFARI, 'curl/8.0']) {
      const text = webGpuHelp(ua).steps.join(' ');
      expect(text).toContain('Chrome or Edge 113');
      expect(text).toContain('Safari 26');
      expect(text).toContain('Firefox 141 or newer on Windows');
    }
  });

  it('gives the Linux Chrome flags only on Linux', () => {
    const linux = webGpuHelp(LINUX_CHROME).steps.join(' ');
    expect(linux).toContain('#enable-unsafe-webgpu');
    expect(linux).toContain('#enable-vulkan');
    expect(webGpuHelp(WINDOWS_FIREFOX).steps.join(' ')).not.toContain('#enable-vulkan');
  });

  it('mentions secure contexts only when the page is not one', () => {
    expect(webGpuHelp(LINUX_CHROME, { secureContext: false }).steps[0]).toMatch(/secure/);
    expect(webGpuHelp(LINUX_CHROME, { secureContext: true }).steps.join(' ')).not.toMatch(/secure pages/);
  });
});

describe('probeGpuAdapter with fake navigators', () => {
  it('reports a missing navigator.gpu', async () => {
    const r = await probeGpuAdapter({ userAgent: LINUX_CHROME }, true);
    expect(r.kind).toBe('no-webgpu');
    if (r.kind === 'no-webgpu') {
      expect(r.reason).toMatch(/navigator\.gpu is missing/);
      expect(r.help.platform).toBe('linux');
    }
  });

  it('blames an insecure context when there is one', async () => {
    const r = await probeGpuAdapter({ userAgent: LINUX_CHROME }, false);
    expect(r.kind === 'no-webgpu' && r.reason).toMatch(/not a secure context/);
  });

  it('reports a null adapter and a throwing requestAdapter', async () => {
    const none = await probeGpuAdapter({ userAgent: MAC_SAFARI, gpu: { requestAdapter: async () => null } }, true);
    expect(none.kind).toBe('no-adapter');
    const boom = await probeGpuAdapter(
      {
        userAgent: MAC_SAFARI,
        gpu: {
          requestAdapter: async () => {
            throw new Error('GPU process crashed');
          },
        },
      },
      true,
    );
    expect(boom.kind === 'no-adapter' && boom.reason).toBe('requestAdapter() failed: GPU process crashed');
  });

  it('summarizes the adapter it gets', async () => {
    const fake = swiftshaderLike() as unknown as GPUAdapter;
    const r = await probeGpuAdapter({ userAgent: LINUX_CHROME, gpu: { requestAdapter: async () => fake } }, true);
    expect(r.kind).toBe('ok');
    if (r.kind === 'ok') expect(r.adapter.architecture).toBe('swiftshader');
  });
});
