/**
 * The policy host on WebGPU (SwiftShader) frees the GPU device of a model it no longer holds:
 * a load that fails, and the model a new load replaces. Without it a page that retries or
 * starts another run keeps each old device, and its memory, until the worker is collected.
 */
import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { makePreset } from '../../rl/presets';
import { PolicyHost, type PolicyLoadRequest } from './policy-host';

const modelUrl = `${location.origin}/@fs${inject('stories260KDir')}`;

const request = (id: string): PolicyLoadRequest => ({
  location: { kind: 'hub', id },
  backend: 'webgpu',
  preset: makePreset('combined', { finetune: { lora: { rank: 2 } } }),
  seed: 1,
  temperature: 1,
});

afterEach(() => vi.restoreAllMocks());

describe('the policy host frees devices it no longer holds', () => {
  it('destroys the device of a load that fails, and that of a model a new load replaces, never the one it serves', async () => {
    const destroy = vi.spyOn(GPUDevice.prototype, 'destroy');
    const host = new PolicyHost({ cacheStorage: null });
    // The dev server answers an unknown path with the app's page: a model that is not there.
    await expect(host.load(request(`${location.origin}/no-such-model`))).rejects.toThrow(/not there/);
    expect(destroy).toHaveBeenCalledTimes(1);
    await host.load(request(modelUrl));
    expect(destroy).toHaveBeenCalledTimes(1);
    await host.load(request(modelUrl));
    expect(destroy).toHaveBeenCalledTimes(2);
    // The model it holds still serves.
    const [g] = await host.generate([
      { messages: [{ role: 'user', content: 'Once upon a time' }], maxNewTokens: 2, sampling: { temperature: 0, topP: 1, topK: 0 }, seed: 1 },
    ]);
    expect(g.tokenIds.length).toBeGreaterThan(0);
  });
});
