import { describe, expect, it } from 'vitest';
import type { PeftFiles } from '../../gpu/peft';
import type { PolicyReply, PolicyRequest, PolicyService, TrainItem, TrainResult } from '../../runtime/policy-service';
import { CheckpointingPolicy } from './checkpoint';

/** Serves version v while training v+1 and swaps only when no generation is in flight, like EnginePolicyService. */
class FakePolicy implements PolicyService {
  readonly label = 'fake';
  version = 0;
  pending: number | null = null;
  inFlight = 0;
  gens: { resolve: () => void }[] = [];
  servingVersion() {
    return this.version;
  }
  private swap() {
    if (this.pending !== null && this.inFlight === 0) {
      this.version = this.pending;
      this.pending = null;
    }
  }
  async generate(requests: PolicyRequest[]): Promise<PolicyReply[]> {
    this.swap();
    const version = this.version;
    this.inFlight++;
    await new Promise<void>((resolve) => this.gens.push({ resolve }));
    this.inFlight--;
    this.swap();
    return requests.map(() => ({ text: '', tokenIds: [], logprobs: [], tokenTexts: [], version, startedAt: 0, finishedAt: 0 }));
  }
  async score(): Promise<number[][]> {
    return [];
  }
  async train(_items: TrainItem[]): Promise<TrainResult> {
    this.pending = this.version + 1;
    this.swap();
    return { version: this.version + (this.pending !== null ? 1 : 0), stats: {} as TrainResult['stats'], startedAt: 0, finishedAt: 0 };
  }
  async exportAdapter(): Promise<PeftFiles> {
    return { 'adapter_model.safetensors': new Uint8Array([this.version]), 'adapter_config.json': `{"v":${this.version}}` };
  }
  async restore(): Promise<void> {}
}

const tick = () => new Promise((r) => setTimeout(r, 0));
const request: PolicyRequest = { messages: [], maxNewTokens: 1, sampling: { temperature: 1, topP: 1, topK: 0 }, seed: 0 };

describe('CheckpointingPolicy', () => {
  it('saves the adapter of the version a step produced, even while a generation of the old version is in flight', async () => {
    const inner = new FakePolicy();
    const saved: [number, string][] = [];
    const policy = new CheckpointingPolicy(inner, async (v, files) => void saved.push([v, files['adapter_config.json']]));
    const first = policy.generate([request]);
    await tick();
    const step = policy.train([]);
    await tick();
    // A request made during the checkpoint waits until it is saved.
    const held = policy.generate([request]);
    await tick();
    expect(inner.gens).toHaveLength(1);
    expect(saved).toEqual([]);
    inner.gens[0].resolve();
    expect((await first)[0].version).toBe(0);
    const result = await step;
    expect(result.version).toBe(1);
    expect(saved).toEqual([[1, '{"v":1}']]);
    await tick();
    expect(inner.gens).toHaveLength(2);
    inner.gens[1].resolve();
    expect((await held)[0].version).toBe(1);
  });

  it('fails the step when the adapter cannot be saved, and releases held generations', async () => {
    const inner = new FakePolicy();
    const policy = new CheckpointingPolicy(inner, async () => {
      throw new Error('disk full');
    });
    await expect(policy.train([])).rejects.toThrow('disk full');
    const g = policy.generate([request]);
    await tick();
    inner.gens[0].resolve();
    await expect(g).resolves.toHaveLength(1);
  });

  it('a held request that is aborted meanwhile is not sent', async () => {
    const inner = new FakePolicy();
    let finishSave!: () => void;
    const policy = new CheckpointingPolicy(inner, () => new Promise<void>((r) => (finishSave = r)));
    const step = policy.train([]);
    await tick();
    const controller = new AbortController();
    const g = policy.generate([request], controller.signal);
    controller.abort(new DOMException('stop', 'AbortError'));
    finishSave();
    await step;
    await expect(g).rejects.toMatchObject({ name: 'AbortError' });
    expect(inner.gens).toHaveLength(0);
  });
});
