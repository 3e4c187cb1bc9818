/**
 * Per-layer recomputation (TrainSettings.recompute 'layer') against keeping every layer's tape,
 * CPU reference backend: the backward re-runs the same ops in the same order, so a LoRA step and
 * a full fine-tuning step give the same loss, gradient norm and updated parameters, bit for bit,
 * on stories260K and on a random Qwen3 (q/k norms, untied LM head), while holding less.
 */
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { checkModel, tinyConfig } from '../../test/random-model';
import type { Backend } from './backend';
import { PROJECTIONS } from '../models/config';
import { CpuBackend } from './cpu/backend';
import { loadModel } from './load';
import { LoraAdapter } from './lora';
import type { CausalLM, Recompute } from './model';
import { DirSource } from '../models/source-node';
import { FullTrainer, LoraTrainer, type Trainer } from './train';
import { DEFAULT_FULL_TRAIN, DEFAULT_TRAIN, type StepStats, type TrainSample, type TrainSettings } from './train-types';

type Make = (be: Backend) => Promise<CausalLM>;
const stories: Make = async (be) => (await loadModel(new DirSource(dataPath('models/stories260K')), be, { weightFormat: 'f32' })).model;
const qwen3: Make = async (be) => checkModel(be, tinyConfig('qwen3'), 3);

/** Left-padded sequences of different lengths, and more of them than one micro-batch takes. */
function samples(vocab: number, n: number, len: number): TrainSample[] {
  return Array.from({ length: n }, (_, i) => {
    const ids = Array.from({ length: len - 3 * (i % 3) }, (_, t) => (7 * t + 13 * i + 1) % vocab);
    const completion = ids.slice(2);
    return { prompt: ids.slice(0, 2), completion, advantages: completion.map((_, t) => ((t % 3) - 1) * 0.7 + 0.1 * i) };
  });
}

interface Run {
  stats: StepStats;
  params: Float32Array[];
  peak: number;
}

/** One step of a fresh trainer on a fresh model; the peak of live bytes during the step. */
async function step(make: Make, kind: 'lora' | 'full' | 'full-frozen-embedding', settings: Partial<TrainSettings>): Promise<Run> {
  const be = new CpuBackend();
  const model = await make(be);
  let trainer: Trainer;
  if (kind === 'lora') {
    const adapter = LoraAdapter.init(be, model.config, { rank: 4, alpha: 8, targets: [...PROJECTIONS] }, 2);
    // Nonzero B, so A's gradients and the LoRA branch of the rebuilt layers count too.
    for (const pair of adapter.pairs.values()) {
      const b = await be.read(pair.B);
      b.forEach((_, i) => (b[i] = Math.sin(i + 1) * 0.05));
      be.dispose(pair.B);
      pair.B = be.tensor(b, pair.B.shape);
    }
    trainer = new LoraTrainer(model, adapter, { ...DEFAULT_TRAIN, lr: 1e-3, ...settings });
  } else {
    trainer = new FullTrainer(model, { ...DEFAULT_FULL_TRAIN, lr: 1e-3, adamEps: 1e-2, ...settings }, { freezeEmbedding: kind === 'full-frozen-embedding' });
  }
  const batch = samples(model.config.vocabSize, 5, 24);
  // A first step, so the second starts from moved weights and warm optimizer moments.
  await trainer.trainStep(batch.slice(0, 2));
  const before = be.memory().allocated;
  be.resetPeakMemory();
  const stats = await trainer.trainStep(batch);
  const peak = be.memory().peak;
  // Every rebuilt tape and the one-layer cache are freed again.
  expect(be.memory().allocated).toBe(before);
  const params = await Promise.all(trainer.trainable.parameters().map((p) => be.read(p.tensor)));
  return { stats, params, peak };
}

function expectSame(a: Run, b: Run) {
  expect(a.stats.skipped).toBeNull();
  expect(a.stats.gradNorm).toBeGreaterThan(0);
  for (const key of ['loss', 'policyLoss', 'kl', 'entropy', 'gradNorm', 'tokens', 'microBatches'] as const) expect(b.stats[key], key).toBe(a.stats[key]);
  expect(b.params.length).toBe(a.params.length);
  a.params.forEach((t, i) => expect(b.params[i]).toEqual(t));
}

describe.each([
  ['stories260K', stories],
  ['a random Qwen3 (q/k norms, untied)', qwen3],
] as const)('recompute layer on %s equals keeping every tape', (_, make) => {
  const cases = [
    ['a LoRA step with the KL term, in micro-batches', 'lora', { klCoef: 0.3, microBatchTokens: 48 }],
    ['a full fine-tuning step', 'full', {}],
    ['a full fine-tuning step with the embedding frozen', 'full-frozen-embedding', { microBatchTokens: 60 }],
  ] as const;
  it.each(cases)('%s: the same loss, gradient norm and parameters, exactly', async (_name, kind, settings) => {
    const kept = await step(make, kind, { ...settings, recompute: 'none' });
    const rebuilt = await step(make, kind, { ...settings, recompute: 'layer' as Recompute });
    expectSame(kept, rebuilt);
    expect(rebuilt.peak).toBeLessThan(kept.peak);
  });
});

describe('the one-layer KV cache', () => {
  it('refuses what it cannot serve: a forward past slot 0, or a kept tape of every layer', async () => {
    const be = new CpuBackend();
    const model = await qwen3(be);
    const cache = model.createCache(1, 8, { oneLayer: true });
    expect(cache.k).toHaveLength(1);
    const batch = { ids: new Int32Array([1, 2, 3, 4]), B: 1, T: 4, padLeft: new Int32Array([0]) };
    expect(() => model.forward({ ...batch, start: 4 }, cache)).toThrow(/whole-sequence forward/);
    expect(() => model.forward({ ...batch, start: 0 }, cache, undefined, {})).toThrow(/every layer's K\/V/);
  });

  it('scores a whole sequence as a full cache does', async () => {
    const be = new CpuBackend();
    const model = await qwen3(be);
    const batch = { ids: new Int32Array([1, 2, 3, 4, 5, 6, 0, 7, 9, 11, 2, 3]), B: 2, T: 6, start: 0, padLeft: new Int32Array([0, 1]) };
    const hidden = (oneLayer: boolean) => be.read(model.forward(batch, model.createCache(2, 6, { oneLayer })));
    expect(await hidden(true)).toEqual(await hidden(false));
  });
});
