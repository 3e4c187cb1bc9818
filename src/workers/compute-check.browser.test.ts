import { describe, expect, it } from 'vitest';
import { runComputeCheck } from './compute-check';

// Runs in headless Chromium (Vitest browser mode) on whatever adapter it offers; on the CI
// machines that is SwiftShader, so the shapes stay tiny.
describe("the engine's WebGPU matmul in a dedicated worker", () => {
  it('has WebGPU on the page', () => {
    expect(navigator.gpu, 'navigator.gpu: is Chromium started with --enable-unsafe-webgpu?').toBeDefined();
  });

  it('matches the CPU reference for a tile-straddling matmul', async () => {
    const r = await runComputeCheck({ m: 13, k: 17, n: 11 });
    expect(r.error).toBeUndefined();
    expect(r.ok).toBe(true);
    expect(r.maxAbsError).toBeLessThanOrEqual(r.tolerance);
    expect(r.gpuAdapter.length).toBeGreaterThan(0);
  });

  it('handles shapes smaller than one tile and several tiles deep', async () => {
    for (const [m, k, n] of [
      [1, 1, 1],
      [3, 40, 5],
      [16, 8, 24],
    ]) {
      const r = await runComputeCheck({ m, k, n, seed: m * 1000 + k * 10 + n });
      expect(r.error, `${m}x${k}x${n}`).toBeUndefined();
      expect(r.maxAbsError, `${m}x${k}x${n}`).toBeLessThanOrEqual(r.tolerance);
    }
  });

  it('reports a worker that times out instead of hanging', async () => {
    const r = await runComputeCheck({ m: 2, k: 2, n: 2, timeoutMs: 0 });
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/timed out/);
  });
});
