/**
 * EnginePolicyService's version numbers: every training step is a new version, even when two
 * steps finish while a generation holds the serving adapter (the second replaces the first's
 * pending adapter before it ever serves). The tool-call track trains twice in a row whenever two
 * groups fill two batches together.
 */
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { CpuBackend } from '../gpu/cpu/backend';
import type { PeftFiles } from '../gpu/peft';
import { Policy } from '../gpu/policy';
import { parseSafetensors, tensorToFloat32 } from '../models/safetensors';
import { DirSource } from '../models/source-node';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '../rl/messages';
import { makePreset } from '../rl/presets';
import { CALCULATOR_TOOL } from '../sims/toolcall/index';
import { EnginePolicyService, NoAdapterError } from './policy-service';

/** A rank-2 LoRA service on the tiny Qwen3 fixture, and an item that reinforces every token of one reply it sampled. */
async function serviceAndItem() {
  const { dir } = await tinyModel({ family: 'qwen3' });
  const policy = await Policy.load(new DirSource(dir), new CpuBackend());
  const service = new EnginePolicyService(policy, makePreset('binary', { finetune: { lora: { rank: 2 } } }), 1, 1);
  const messages: ChatMessage[] = [{ role: 'user', content: 'Tell me a story.' }];
  const sampling = { temperature: 1, topP: 1, topK: 0 };
  const [first] = await service.generate([{ messages, maxNewTokens: 3, sampling, seed: 1 }]);
  const item = { messages, tokenIds: first.tokenIds, advantages: first.tokenIds.map(() => 1), rolloutLogp: first.logprobs, trainable: true };
  return { service, item, messages, sampling };
}

describe('EnginePolicyService', () => {
  it("scores and trains at the run's sampling temperature: the trainer's old log-probs are those generation recorded", async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const policy = await Policy.load(new DirSource(dir), new CpuBackend());
    const preset = makePreset('binary', { finetune: { lora: { rank: 2 } } });
    const messages: ChatMessage[] = [{ role: 'user', content: 'Tell me a story.' }];
    const sampling = { temperature: 0.6, topP: 1, topK: 0 };
    const gaps: number[] = [];
    for (const temperature of [0.6, 1]) {
      const service = new EnginePolicyService(policy, preset, 1, temperature);
      const [reply] = await service.generate([{ messages, maxNewTokens: 6, sampling, seed: 1 }]);
      const [scored] = await service.score([{ messages, tokenIds: reply.tokenIds }], 'current');
      const item = { messages, tokenIds: reply.tokenIds, advantages: reply.tokenIds.map(() => 1), rolloutLogp: reply.logprobs, trainable: true };
      const { stats } = await service.train([item]);
      gaps.push(stats.rolloutGap!);
      if (temperature === 0.6) scored.forEach((lp, t) => expect(lp).toBeCloseTo(reply.logprobs[t], 5));
    }
    expect(gaps[0]).toBeLessThan(1e-5);
    // A trainer that scored at 1 what was drawn at 0.6 would see the gap.
    expect(gaps[1]).toBeGreaterThan(1e-3);
  }, 120_000);

  it('numbers versions by training steps when two steps finish during one generation', async () => {
    const { service, item, messages, sampling } = await serviceAndItem();

    // A long generation holds the serving adapter while both steps finish.
    let generating = true;
    const inFlight = service.generate([{ messages, maxNewTokens: 24, sampling, seed: 2 }]).finally(() => (generating = false));
    const a = await service.train([item]);
    const b = await service.train([item]);
    expect(generating).toBe(true);
    const [during] = await inFlight;
    expect(during.version).toBe(0);
    expect([a.version, b.version]).toEqual([1, 2]);
    const [after] = await service.generate([{ messages, maxNewTokens: 2, sampling, seed: 3 }]);
    expect(after.version).toBe(2);
    expect(service.servingVersion()).toBe(2);
  }, 120_000);

  it('exports the newest step adapter while a generation still serves the previous one', async () => {
    const { service, item, messages, sampling } = await serviceAndItem();
    const loraB = async (files: Promise<PeftFiles>) => {
      const parsed = parseSafetensors((await files)['adapter_model.safetensors'], 'adapter_model.safetensors');
      return [...parsed.tensors.values()].filter((t) => t.name.includes('lora_B')).flatMap((t) => Array.from(tensorToFloat32(t)));
    };
    expect((await loraB(service.exportAdapter())).every((x) => x === 0)).toBe(true);

    let generating = true;
    const inFlight = service.generate([{ messages, maxNewTokens: 24, sampling, seed: 2 }]).finally(() => (generating = false));
    await service.train([item]);
    // The checkpoint of step 1 holds step 1's weights (B moved off zero), not the served v0's;
    // a second step finishing during the export must not free what the export reads.
    const [exported] = await Promise.all([loraB(service.exportAdapter()), service.train([item])]);
    expect(generating).toBe(true);
    expect(exported.some((x) => x !== 0)).toBe(true);
    expect((await inFlight)[0].version).toBe(0);
    expect(service.servingVersion()).toBe(2);
  }, 120_000);

  it('a generation in flight during the first step keeps the weights it started with', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const policy = await Policy.load(new DirSource(dir), new CpuBackend());
    // A large learning rate, so that one step visibly changes greedy text.
    const service = new EnginePolicyService(policy, makePreset('binary', { optimizer: { lr: 0.05 }, finetune: { lora: { rank: 2 } } }), 1, 1);
    const messages: ChatMessage[] = [{ role: 'user', content: 'Tell me a story.' }];
    const greedy = { temperature: 0, topP: 1, topK: 0 };
    const request = { messages, maxNewTokens: 24, sampling: greedy, seed: 0 };
    const [base] = await service.generate([request]);
    const item = { messages, tokenIds: base.tokenIds, advantages: base.tokenIds.map(() => -1), rolloutLogp: base.logprobs, trainable: true };

    let generating = true;
    const inFlight = service.generate([request]).finally(() => (generating = false));
    await service.train([item]);
    expect(generating).toBe(true);
    const [during] = await inFlight;
    expect(during.version).toBe(0);
    expect(during.tokenIds).toEqual(base.tokenIds);
    expect(during.logprobs).toEqual(base.logprobs);
    const [after] = await service.generate([request]);
    expect(after.version).toBe(1);
    expect(after.logprobs).not.toEqual(base.logprobs);
  }, 120_000);

  it('hands the loss mask to the trainer: a masked item adds no token, KL or token update', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const policy = await Policy.load(new DirSource(dir), new CpuBackend());
    const preset = makePreset('binary', { loss: { klCoef: 0.5, aggregation: 'token-mean' }, finetune: { lora: { rank: 2 } } });
    const service = new EnginePolicyService(policy, preset, 1, 1);
    const messages: ChatMessage[] = [{ role: 'user', content: 'Tell me a story.' }];
    const [reply] = await service.generate([{ messages, maxNewTokens: 4, sampling: { temperature: 1, topP: 1, topK: 0 }, seed: 1 }]);
    const item = { messages, tokenIds: reply.tokenIds, advantages: reply.tokenIds.map(() => 1), rolloutLogp: reply.logprobs, trainable: true };
    const { stats } = await service.train([item, { ...item, advantages: item.advantages.map(() => 0), trainable: false }]);
    expect(stats.tokens).toBe(reply.tokenIds.length);
    expect(stats.perSample![0]).not.toBeNull();
    expect(stats.perSample![1]).toBeNull();
  }, 120_000);

  it("passes the preset's finetune.recompute to the trainer: 'layer' takes the same step as the default", async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const step = async (recompute?: 'layer') => {
      const policy = await Policy.load(new DirSource(dir), new CpuBackend());
      const service = new EnginePolicyService(policy, makePreset('binary', { finetune: { lora: { rank: 2 }, recompute } }), 1, 1);
      const messages: ChatMessage[] = [{ role: 'user', content: 'Tell me a story.' }];
      const [reply] = await service.generate([{ messages, maxNewTokens: 4, sampling: { temperature: 0, topP: 1, topK: 0 }, seed: 1 }]);
      const item = {
        messages,
        tokenIds: reply.tokenIds,
        advantages: reply.tokenIds.map((_, i) => (i % 2 ? 1 : -1)),
        rolloutLogp: reply.logprobs,
        trainable: true,
      };
      await service.train([item]);
      return (await service.train([item])).stats;
    };
    const kept = await step();
    const rebuilt = await step('layer');
    expect(rebuilt.gradNorm).toBeGreaterThan(0);
    expect([rebuilt.loss, rebuilt.gradNorm]).toEqual([kept.loss, kept.gradNorm]);
  }, 120_000);

  it('renders the tools a request lists into its prompt, and trains on that same prompt', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const policy = await Policy.load(new DirSource(dir), new CpuBackend());
    const messages: ChatMessage[] = [{ role: 'user', content: 'What is 6 * 7?' }];
    const plain = policy.promptIds(messages);
    const withTools = policy.promptIds(messages, { tools: [CALCULATOR_TOOL] });
    expect(withTools.length).toBeGreaterThan(plain.length + 100);
    expect(policy.promptText(messages, { tools: [CALCULATOR_TOOL] })).toContain('"name": "calculator"');
    // Greedy: the same prompt ids give the same tokens through generate, with or without the service.
    const service = new EnginePolicyService(policy, makePreset('binary', { finetune: { lora: { rank: 2 } } }), 1, 1);
    const greedy = { temperature: 0, topP: 1, topK: 0 };
    const [viaService] = await service.generate([{ messages, tools: [CALCULATOR_TOOL], maxNewTokens: 4, sampling: greedy, seed: 0 }]);
    const [direct] = await policy.generate([messages], { maxNewTokens: 4, sampling: greedy, tools: [[CALCULATOR_TOOL]] });
    const [untooled] = await policy.generate([messages], { maxNewTokens: 4, sampling: greedy });
    expect(viaService.tokenIds).toEqual(direct.tokens);
    expect(viaService.logprobs).toEqual(direct.logprobs);
    expect(untooled.logprobs).not.toEqual(direct.logprobs);
    // The trainer's old log-probs are the rollout's when the item carries the same tools (gap ~ 0).
    const item = { messages, tokenIds: viaService.tokenIds, advantages: viaService.tokenIds.map(() => 0), rolloutLogp: viaService.logprobs, trainable: true };
    const same = await service.train([{ ...item, tools: [CALCULATOR_TOOL] }]);
    expect(same.stats.rolloutGap!).toBeLessThan(1e-4);
  }, 120_000);

  it("finetune.mode 'full' trains every weight: the loaded model stays the initial policy, serving swaps whole copies, the model exports as a folder", async () => {
    // stories260K: a real checkpoint with a small vocabulary (the fixtures carry Qwen3's 151k).
    const be = new CpuBackend();
    const policy = await Policy.load(new DirSource(dataPath('models/stories260K')), be);
    const initialWeights = await Promise.all([...policy.model.weights.values()].map((t) => be.read(t)));
    const service = new EnginePolicyService(policy, makePreset('binary', { finetune: { mode: 'full' }, optimizer: { lr: 0.01 } }), 1, 1);
    expect(service.label).toMatch(/full fine-tuning/);
    const messages: ChatMessage[] = [{ role: 'user', content: 'Once upon a time' }];
    const greedy = { temperature: 0, topP: 1, topK: 0 };
    const request = { messages, maxNewTokens: 12, sampling: greedy, seed: 0 };
    const [base] = await service.generate([request]);
    const item = { messages, tokenIds: base.tokenIds, advantages: base.tokenIds.map(() => -1), rolloutLogp: base.logprobs, trainable: true };

    // A generation in flight during the step keeps the weights it started with.
    const inFlight = service.generate([request]);
    const { version, stats } = await service.train([item]);
    expect(version).toBe(1);
    expect(stats.skipped).toBeNull();
    const [during] = await inFlight;
    expect(during.logprobs).toEqual(base.logprobs);
    const [after] = await service.generate([request]);
    expect(after.version).toBe(1);
    expect(after.logprobs).not.toEqual(base.logprobs);

    // Not LoRA: the base weights are what was trained (a copy of them), and the loaded model is untouched.
    const now = await Promise.all([...policy.model.weights.values()].map((t) => be.read(t)));
    now.forEach((t, i) => expect(Array.from(t)).toEqual(Array.from(initialWeights[i])));
    const scoreItem = [{ messages, tokenIds: base.tokenIds }];
    expect((await service.score(scoreItem, 'initial'))[0]).toEqual(base.logprobs);
    const current = (await service.score([{ messages, tokenIds: after.tokenIds }], 'current'))[0];
    current.forEach((x, t) => expect(x).toBeCloseTo(after.logprobs[t], 5));

    await expect(service.exportAdapter()).rejects.toThrow(NoAdapterError);
    await expect(service.restore({ 'adapter_model.safetensors': new Uint8Array(), 'adapter_config.json': '{}' }, 1)).rejects.toThrow(NoAdapterError);
    const files = await service.exportModel();
    expect(files.has('optimizer.safetensors')).toBe(true);
    const out = mkdtempSync(join(tmpdir(), 'full-service-'));
    for (const [name, bytes] of files) writeFileSync(join(out, name), bytes);
    const reloaded = await Policy.load(new DirSource(out), be);
    const [again] = await reloaded.generate([messages], { maxNewTokens: 12, sampling: greedy });
    expect(again.logprobs).toEqual(after.logprobs);

    // The KL term's reference is the initial policy: after one step away from it, the KL is positive.
    const kl = new EnginePolicyService(policy, makePreset('binary', { finetune: { mode: 'full' }, optimizer: { lr: 0.01 }, loss: { klCoef: 0.1 } }), 1, 1);
    await kl.train([item]);
    expect((await kl.train([item])).stats.kl).toBeGreaterThan(0);
  }, 120_000);
});
