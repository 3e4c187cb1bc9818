import { describe, expect, it } from 'vitest';
import { flushSync, mount, unmount } from 'svelte';
import { probeGpuAdapter, webGpuHelp, type ProbeResult } from './gpu-adapter';
import GpuAdapterPanel from './GpuAdapterPanel.svelte';

/** Mount the panel with a given probe and wait for it to report. */
async function render(probe: () => Promise<ProbeResult>) {
  const target = document.createElement('div');
  document.body.append(target);
  let settled!: (r: ProbeResult) => void;
  const done = new Promise<ProbeResult>((res) => (settled = res));
  const app = mount(GpuAdapterPanel, { target, props: { probe, onresult: (r: ProbeResult) => settled(r) } });
  const result = await done;
  flushSync();
  return {
    target,
    result,
    [Symbol.dispose]() {
      void unmount(app);
      target.remove();
    },
  };
}

describe('adapter probe in a real browser', () => {
  it('gets an adapter with key limits', async () => {
    const r = await probeGpuAdapter();
    expect(r.kind).toBe('ok');
    if (r.kind !== 'ok') return;
    expect(r.adapter.limits.map((l) => l.name)).toContain('maxStorageBufferBindingSize');
    for (const l of r.adapter.limits) expect(l.value).toBeGreaterThan(0);
    expect(r.adapter.shaderF16).toBe(r.adapter.features.includes('shader-f16'));
  });
});

describe('GpuAdapterPanel', () => {
  it('shows the real adapter and its limits', async () => {
    using view = await render(() => probeGpuAdapter());
    expect(view.result.kind).toBe('ok');
    const text = view.target.textContent ?? '';
    expect(text).toContain('Ready');
    expect(text).toContain('maxBufferSize');
    expect(text).toContain('maxComputeInvocationsPerWorkgroup');
    expect(text).toMatch(/shader-f16\s*(yes|no)/);
    expect(view.target.querySelectorAll('table tbody tr').length).toBeGreaterThanOrEqual(4);
  });

  it('explains what to do when the browser has no WebGPU', async () => {
    const ua = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/139.0.0.0';
    using view = await render(async () => ({
      kind: 'no-webgpu',
      reason: 'This browser does not offer WebGPU (navigator.gpu is missing).',
      help: webGpuHelp(ua),
    }));
    const alert = view.target.querySelector('[role="alert"]');
    expect(alert).not.toBeNull();
    const text = alert?.textContent ?? '';
    expect(text).toContain('This browser has no WebGPU.');
    expect(text).toContain('#enable-unsafe-webgpu');
    expect(text).toContain('#enable-vulkan');
    expect(view.target.querySelector('table')).toBeNull();
  });

  it('shows "not reported" for empty adapter fields', async () => {
    using view = await render(async () => ({
      kind: 'ok',
      adapter: {
        vendor: 'acme',
        architecture: '',
        device: '',
        description: '',
        isFallbackAdapter: false,
        shaderF16: true,
        features: ['shader-f16'],
        limits: [{ name: 'maxBufferSize', value: 1024, display: '1 KiB (1,024 bytes)' }],
      },
    }));
    const text = view.target.textContent ?? '';
    expect(text).toContain('acme');
    expect(text).toContain('not reported');
    expect(text).not.toContain('software adapter');
    expect(text).not.toContain('No shader-f16');
  });
});
