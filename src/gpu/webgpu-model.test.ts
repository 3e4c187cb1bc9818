/**
 * Oracle 1 end to end: the whole model on WebGPU (Node, Dawn on SwiftShader) against the CPU
 * reference on real weights: greedy text, scores, one LoRA training step and one full
 * fine-tuning step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { checkModel, tinyConfig } from '../../test/random-model';
import type { Backend } from './backend';
import { CpuBackend } from './cpu/backend';
import { LoraAdapter } from './lora';
import type { Recompute } from './model';
import { Policy } from './policy';
import { score } from './score';
import { DirSource } from '../models/source-node';
import { FullTrainer, LoraTrainer } from './train';
import { DEFAULT_FULL_TRAIN, DEFAULT_TRAIN } from './train-types';
import { createNodeWebGPUBackend } from './webgpu/node';

const stories = dataPath('models/stories260K');

describe('stories260K in f32 on WebGPU (Dawn) vs the CPU reference', () => {
  let gpu: Backend & { destroy?: () => void };
  let onGpu: Policy;
  let onCpu: Policy;

  beforeAll(async () => {
    gpu = await createNodeWebGPUBackend();
    onGpu = await Policy.load(new DirSource(stories), gpu, { weightFormat: 'f32' });
    onCpu = await Policy.load(new DirSource(stories), new CpuBackend(), { weightFormat: 'f32' });
  });
  afterAll(() => gpu?.destroy?.());

  it('greedy decoding reproduces the documented sentence', async () => {
    const [g] = await onGpu.generate(['Once upon a time'], { maxNewTokens: 20 });
    const documented = ', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.';
    expect(g.text.length).toBeGreaterThan(40);
    expect(documented.startsWith(g.text)).toBe(true);
  });

  it('scores a batch the same as the CPU (1e-4)', async () => {
    const items = [
      { prompt: onCpu.promptIds('Once upon a time'), completion: onCpu.tokenizer.encode(' there was a dog named Max.', false) },
      { prompt: onCpu.promptIds('The cat'), completion: onCpu.tokenizer.encode(' sat on the mat and smiled.', false) },
    ];
    const a = await score(onGpu.model, items);
    const b = await score(onCpu.model, items);
    a.forEach((s, i) => s.logprobs.forEach((x, t) => expect(Math.abs(x - b[i].logprobs[t])).toBeLessThan(1e-4)));
  });

  it('gives the same top-k next-token sets as the CPU (top-k hint selection)', async () => {
    const items = [
      { prompt: onCpu.promptIds('Once upon a time'), completion: onCpu.tokenizer.encode(' there was a dog named Max.', false) },
      { prompt: onCpu.promptIds('The cat'), completion: onCpu.tokenizer.encode(' sat on the mat.', false) },
    ];
    const a = await score(onGpu.model, items, { topK: 4 });
    const b = await score(onCpu.model, items, { topK: 4 });
    // As sets: two logits within float error of each other may swap places in the ranking.
    a.forEach((s, i) => s.topIds!.forEach((ids, t) => expect(new Set(ids)).toEqual(new Set(b[i].topIds![t]))));
    expect(a[0].topIds!.length).toBe(items[0].completion.length);
  });

  // With recompute 'layer' on the GPU: the rebuilt layers and the one-layer KV cache against the CPU keeping every tape.
  it.each(['none', 'layer'] as const)(
    'one LoRA training step matches (recompute %s on WebGPU): loss, gradient norm and the updated adapter',
    async (recompute) => {
      const items = [{ prompt: onCpu.promptIds('Once upon a time'), completion: onCpu.tokenizer.encode(' there was a dog.', false) }];
      const lora = { rank: 4, alpha: 8, targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const };
      const run = async (p: Policy, recompute: Recompute) => {
        const adapter = LoraAdapter.init(p.model.backend, p.config, { ...lora, targets: [...lora.targets] }, 4);
        // Nonzero B so that A's gradients are exercised too.
        for (const pair of adapter.pairs.values()) {
          const b = await p.model.backend.read(pair.B);
          b.forEach((_, i) => (b[i] = Math.sin(i) * 0.05));
          p.model.backend.dispose(pair.B);
          pair.B = p.model.backend.tensor(b, pair.B.shape);
        }
        const trainer = new LoraTrainer(p.model, adapter, { ...DEFAULT_TRAIN, lr: 1e-3, recompute });
        const stats = await trainer.trainStep([{ ...items[0], advantages: items[0].completion.map((_, i) => (i % 2 ? 1 : -0.5)) }]);
        const params = await Promise.all(adapter.parameters().map((x) => p.model.backend.read(x.tensor)));
        return { stats, params };
      };
      const g = await run(onGpu, recompute);
      const c = await run(onCpu, 'none');
      expect(g.stats.loss).toBeCloseTo(c.stats.loss, 4);
      expect(Math.abs(g.stats.gradNorm - c.stats.gradNorm) / c.stats.gradNorm).toBeLessThan(1e-3);
      g.params.forEach((t, i) => t.forEach((x, j) => expect(Math.abs(x - c.params[i][j])).toBeLessThan(1e-5)));
    },
  );

  it('scores at a sampling temperature as the CPU does (1e-4), and not as at 1', async () => {
    const items = [{ prompt: onCpu.promptIds('Once upon a time'), completion: onCpu.tokenizer.encode(' there was a dog named Max.', false) }];
    const [a] = await score(onGpu.model, items, { temperature: 0.6 });
    const [b] = await score(onCpu.model, items, { temperature: 0.6 });
    const [atOne] = await score(onCpu.model, items);
    a.logprobs.forEach((x, t) => expect(Math.abs(x - b.logprobs[t])).toBeLessThan(1e-4));
    expect(Math.max(...b.logprobs.map((x, t) => Math.abs(x - atOne.logprobs[t])))).toBeGreaterThan(1e-2);
  });

  // At 0.6 the LM head's backward carries the 1 / T (the embedding is the tied head here).
  it.each([1, 0.6])('one full fine-tuning step at temperature %s matches: loss, gradient norm and every updated weight', async (temperature) => {
    const items = [{ prompt: onCpu.promptIds('Once upon a time'), completion: onCpu.tokenizer.encode(' there was a dog.', false) }];
    const run = async (be: Backend) => {
      const p = await Policy.load(new DirSource(stories), be, { weightFormat: 'f32' });
      // A large epsilon keeps Adam's first step proportional to the gradient: with the default, a
      // near-zero gradient's sign (float noise) would decide a full lr-sized step.
      const trainer = new FullTrainer(p.model, { ...DEFAULT_FULL_TRAIN, lr: 1e-3, adamEps: 1e-2, temperature });
      const stats = await trainer.trainStep([{ ...items[0], advantages: items[0].completion.map((_, i) => (i % 2 ? 1 : -0.5)) }]);
      const weights = await Promise.all(trainer.names.map((n) => be.read(p.model.w(n))));
      trainer.dispose();
      return { stats, weights, names: trainer.names };
    };
    const g = await run(gpu);
    const c = await run(new CpuBackend());
    expect(g.names).toEqual(c.names);
    expect(g.stats.loss).toBeCloseTo(c.stats.loss, 4);
    expect(Math.abs(g.stats.gradNorm - c.stats.gradNorm) / c.stats.gradNorm).toBeLessThan(1e-3);
    g.weights.forEach((t, i) => t.forEach((x, j) => expect(Math.abs(x - c.weights[i][j]), `${g.names[i]}[${j}]`).toBeLessThan(1e-5)));
  });

  it.each(['qwen2', 'qwen3'] as const)(
    'one full step on a random %s model (qwen2 has biases, qwen3 q/k norms; both an untied LM head) matches',
    async (family) => {
      const items = [
        { prompt: [1, 5, 9], completion: [3, 7, 2, 11], advantages: [1, -0.5, 0.7, 2] },
        { prompt: [4], completion: [8, 8, 30], advantages: [-1, 0.3, 1] },
      ];
      const run = async (be: Backend) => {
        const model = checkModel(be, tinyConfig(family), 3);
        const trainer = new FullTrainer(model, { ...DEFAULT_FULL_TRAIN, lr: 1e-3, adamEps: 1e-2 });
        const stats = await trainer.trainStep(items);
        const weights = await Promise.all(trainer.names.map((n) => be.read(model.w(n))));
        trainer.dispose();
        for (const t of model.weights.values()) be.dispose(t);
        return { stats, weights, names: trainer.names };
      };
      const g = await run(gpu);
      const c = await run(new CpuBackend());
      expect(g.names).toContain('lm_head.weight');
      expect(g.stats.loss).toBeCloseTo(c.stats.loss, 4);
      expect(Math.abs(g.stats.gradNorm - c.stats.gradNorm) / c.stats.gradNorm).toBeLessThan(1e-3);
      g.weights.forEach((t, i) => t.forEach((x, j) => expect(Math.abs(x - c.weights[i][j]), `${g.names[i]}[${j}]`).toBeLessThan(1e-5)));
    },
  );
});

// QLoRA's premise, checked per format: a frozen base stored packed (f16, q8, q4) and dequantized
// as the kernels load it, with an f32 adapter trained on top; both backends hold the same packed
// values, so the f32 tolerances hold.
describe.each(['f16', 'q8', 'q4'] as const)('stories260K with %s weights on WebGPU (Dawn) vs the CPU reference', (weightFormat) => {
  let gpu: Backend & { destroy?: () => void };
  let onGpu: Policy;
  let onCpu: Policy;

  beforeAll(async () => {
    gpu = await createNodeWebGPUBackend();
    onGpu = await Policy.load(new DirSource(stories), gpu, { weightFormat });
    onCpu = await Policy.load(new DirSource(stories), new CpuBackend(), { weightFormat });
  });
  afterAll(() => gpu?.destroy?.());

  it('stores the format and scores the same (1e-4)', async () => {
    expect(onGpu.model.w('model.layers.0.mlp.up_proj.weight').dtype).toBe(weightFormat);
    const items = [{ prompt: onCpu.promptIds('Once upon a time'), completion: onCpu.tokenizer.encode(' there was a dog named Max.', false) }];
    const [a] = await score(onGpu.model, items);
    const [b] = await score(onCpu.model, items);
    a.logprobs.forEach((x, t) => expect(Math.abs(x - b.logprobs[t])).toBeLessThan(1e-4));
  });

  it('one LoRA step on the frozen packed base matches: loss, gradient norm, adapter', async () => {
    const items = [{ prompt: onCpu.promptIds('Once upon a time'), completion: onCpu.tokenizer.encode(' there was a dog.', false) }];
    const run = async (p: Policy) => {
      const adapter = LoraAdapter.init(p.model.backend, p.config, { rank: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'down_proj'] }, 4);
      const trainer = new LoraTrainer(p.model, adapter, { ...DEFAULT_TRAIN, lr: 1e-3 });
      const stats = await trainer.trainStep([{ ...items[0], advantages: items[0].completion.map((_, i) => (i % 2 ? 1 : -0.5)) }]);
      return { stats, params: await Promise.all(adapter.parameters().map((x) => p.model.backend.read(x.tensor))) };
    };
    const g = await run(onGpu);
    const c = await run(onCpu);
    expect(g.stats.gradNorm).toBeGreaterThan(0);
    expect(g.stats.loss).toBeCloseTo(c.stats.loss, 4);
    expect(Math.abs(g.stats.gradNorm - c.stats.gradNorm) / c.stats.gradNorm).toBeLessThan(1e-3);
    g.params.forEach((t, i) => t.forEach((x, j) => expect(Math.abs(x - c.params[i][j])).toBeLessThan(1e-5)));
  });

  it('refuses full fine-tuning, which trains f32 weights', () => {
    expect(() => new FullTrainer(onCpu.model, DEFAULT_FULL_TRAIN)).toThrow(/trains f32 weights, but .* is stored as/);
  });
});
