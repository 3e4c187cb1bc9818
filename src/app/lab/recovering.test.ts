import { describe, expect, it } from 'vitest';
import type { PolicyReply, PolicyRequest, PolicyService } from '../../runtime/policy-service';
import { RecoveringPolicy } from './recovering';

function flaky(failures: unknown[]) {
  const calls: number[] = [];
  const inner = {
    label: 'flaky',
    servingVersion: () => 0,
    async generate(_r: PolicyRequest[]): Promise<PolicyReply[]> {
      calls.push(calls.length);
      const f = failures.shift();
      if (f) throw f;
      return [];
    },
  } as unknown as PolicyService;
  return { inner, calls };
}

const gpuError = new Error("Failed to execute 'mapAsync' on 'GPUBuffer': Buffer was unmapped before mapping was resolved.");

describe('RecoveringPolicy', () => {
  it('retries once a call that failed around a reported device loss', async () => {
    const { inner, calls } = flaky([gpuError]);
    const policy = new RecoveringPolicy(inner, 1000);
    const result = policy.generate([]);
    // The loss is reported just after the failure, as the worker's event arrives late.
    setTimeout(() => policy.deviceLost(), 10);
    await expect(result).resolves.toEqual([]);
    expect(calls).toHaveLength(2);
  });

  it('passes other failures through after the grace period, and aborts at once', async () => {
    const { inner, calls } = flaky([gpuError]);
    const policy = new RecoveringPolicy(inner, 30);
    await expect(policy.generate([])).rejects.toBe(gpuError);
    expect(calls).toHaveLength(1);

    // A stop (the caller's signal) is never retried.
    const abort = new DOMException('stop', 'AbortError');
    const aborted = flaky([abort]);
    const p2 = new RecoveringPolicy(aborted.inner, 1000);
    const controller = new AbortController();
    controller.abort(abort);
    const stopped = p2.generate([], controller.signal);
    setTimeout(() => p2.deviceLost(), 10);
    await expect(stopped).rejects.toBe(abort);
    expect(aborted.calls).toHaveLength(1);
  });

  it('retries the GPU\u2019s own AbortError (mapAsync on a destroyed device)', async () => {
    const gpuAbort = new DOMException("Failed to execute 'mapAsync' on 'GPUBuffer': Buffer was unmapped before mapping was resolved.", 'AbortError');
    const { inner, calls } = flaky([gpuAbort]);
    const policy = new RecoveringPolicy(inner, 1000);
    const result = policy.generate([], new AbortController().signal);
    setTimeout(() => policy.deviceLost(), 10);
    await expect(result).resolves.toEqual([]);
    expect(calls).toHaveLength(2);
  });

  it('does not retry twice', async () => {
    const { inner, calls } = flaky([gpuError, gpuError]);
    const policy = new RecoveringPolicy(inner, 1000);
    const result = policy.generate([]);
    setTimeout(() => policy.deviceLost(), 10);
    await expect(result).rejects.toBe(gpuError);
    expect(calls).toHaveLength(2);
  });
});
