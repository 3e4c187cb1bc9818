/**
 * The fast CPU backend in Chromium: on the page (one thread: a page's main thread may not block)
 * and in a worker with helper threads, as the lab's policy worker runs it, against the reference.
 */
import { describe, expect, it } from 'vitest';
import { CpuBackend } from '../cpu/backend';
import { opCases, readOutputs, relError } from '../../../test/support/gpu/cases';
import { FastCpuBackend } from './backend';
import { browserCpuBackend } from './browser';
import type { WorkerReport } from './backend.browser-worker';

describe('fast CPU backend in Chromium', () => {
  it('the page is cross-origin isolated, so the lab gets the fast backend', async () => {
    expect(crossOriginIsolated).toBe(true);
    const be = await browserCpuBackend('cpu');
    expect(be).toBeInstanceOf(FastCpuBackend);
    expect((be as FastCpuBackend).threads).toBe(1);
    (be as FastCpuBackend).close();
  });

  it('every conformance case on the page matches the reference', async () => {
    const fast = (await browserCpuBackend('cpu')) as FastCpuBackend;
    for (const c of opCases) {
      const want = await readOutputs(new CpuBackend(), await c.run(new CpuBackend()));
      const got = await readOutputs(fast, await c.run(fast));
      got.forEach((g, i) => expect(relError(g, want[i]), `${c.name}: output ${i}`).toBeLessThan(c.tol ?? 1e-4));
    }
    fast.close();
  });

  it('in a worker it starts helper threads, and their products are the one-thread bits', async () => {
    const worker = new Worker(new URL('./backend.browser-worker.ts', import.meta.url), { type: 'module' });
    const report = await new Promise<WorkerReport>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<WorkerReport>) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message));
    });
    worker.terminate();
    expect(report.error).toBeUndefined();
    expect(report.threads).toBe(Math.min(16, navigator.hardwareConcurrency));
    expect(report.threads).toBeGreaterThan(1);
    expect(report.sameBits).toBe(true);
    expect(report.relError).toBeLessThan(1e-4);
  });
});
