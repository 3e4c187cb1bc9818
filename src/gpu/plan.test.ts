/**
 * The memory planner against the engine's own byte count (Backend.memory(): every tensor the
 * backend creates, at its real size) on the fixtures: real stories260K and TinyStories-656K, and
 * the tiny random Qwen2 / Qwen3 / Llama models (a 151,936-token vocabulary, so the logits count).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { tinyModel, type TinyModelOptions } from '../../test/fixtures/tiny-model';
import type { Backend } from './backend';
import { PROJECTIONS, type Projection } from '../models/config';
import { CpuBackend } from './cpu/backend';
import { loadModel } from './load';
import type { Recompute } from './model';
import { LoraAdapter } from './lora';
import { planMemory, planMemoryFromJson, type PlanInput, type Quantize } from './plan';
import { storedWords } from './quant';
import { DirSource } from '../models/source-node';
import { FullTrainer, LoraTrainer } from './train';
import { DEFAULT_FULL_TRAIN, DEFAULT_TRAIN, type TrainSample } from './train-types';
import { createNodeWebGPUBackend } from './webgpu/node';

/** The shipped config.json of a model people pick (data/model-configs). */
const modelConfig = (name: string) => new URL(`../../data/model-configs/${name}.json`, import.meta.url);

interface Case {
  name: string;
  dir: () => Promise<string>;
  rank: number;
  targets: Projection[];
  sequences: number;
  tokens: number;
  microBatchTokens: number;
}

const tiny = (o: TinyModelOptions) => async () => (await tinyModel(o)).dir;
const CASES: Case[] = [
  {
    name: 'stories260K, all projections, 8 x 64',
    dir: async () => dataPath('models/stories260K'),
    rank: 8,
    targets: [...PROJECTIONS],
    sequences: 8,
    tokens: 64,
    microBatchTokens: 2048,
  },
  {
    name: 'stories260K, q/v, 16 x 48 in micro-batches of 4',
    dir: async () => dataPath('models/stories260K'),
    rank: 4,
    targets: ['q_proj', 'v_proj'],
    sequences: 16,
    tokens: 48,
    microBatchTokens: 200,
  },
  {
    name: 'TinyStories-656K, 4 x 100',
    dir: async () => dataPath('models/TinyStories-656K'),
    rank: 16,
    targets: [...PROJECTIONS],
    sequences: 4,
    tokens: 100,
    microBatchTokens: 2048,
  },
  {
    name: 'tiny Qwen3 (qk-norm, untied), 2 x 24',
    dir: tiny({ family: 'qwen3' }),
    rank: 4,
    targets: [...PROJECTIONS],
    sequences: 2,
    tokens: 24,
    microBatchTokens: 2048,
  },
  {
    name: 'tiny Qwen2 (qkv bias, tied), 3 x 16',
    dir: tiny({ family: 'qwen2', tied: true }),
    rank: 8,
    targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj'],
    sequences: 3,
    tokens: 16,
    microBatchTokens: 2048,
  },
  {
    name: 'tiny Llama, 2 x 64 (logits in chunks)',
    dir: tiny({ family: 'llama' }),
    rank: 4,
    targets: [...PROJECTIONS],
    sequences: 2,
    tokens: 64,
    microBatchTokens: 4096,
  },
];

/** Peak bytes of one real training step, and the bytes of weights and adapter state before it. */
async function measure(c: Case, be: Backend = new CpuBackend(), quantize: Quantize = 'none', recompute: Recompute = 'none') {
  const dir = await c.dir();
  const { model, config } = await loadModel(new DirSource(dir), be, { weightFormat: quantize === 'none' ? 'f32' : quantize });
  const weights = be.memory().allocated;
  const adapter = LoraAdapter.init(be, config, { rank: c.rank, alpha: 2 * c.rank, targets: c.targets }, 1);
  const trainer = new LoraTrainer(model, adapter, { ...DEFAULT_TRAIN, microBatchTokens: c.microBatchTokens, recompute });
  const persistent = be.memory().allocated;
  const samples: TrainSample[] = Array.from({ length: c.sequences }, (_, i) => {
    const ids = Array.from({ length: c.tokens }, (_, t) => (7 * t + 13 * i + 1) % config.vocabSize);
    const completion = ids.slice(1);
    return { prompt: ids.slice(0, 1), completion, advantages: completion.map((_, t) => ((t % 3) - 1) * 0.5) };
  });
  be.resetPeakMemory();
  const stats = await trainer.trainStep(samples);
  return {
    config: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as unknown,
    weights,
    persistent,
    peak: be.memory().peak,
    microBatches: stats.microBatches,
  };
}

/** The LoRA plan of case `c` from its config.json, as the app plans a run. */
const loraPlan = (c: Case, config: unknown, backend: PlanInput['backend'], quantize: Quantize = 'none', recompute: Recompute = 'none') =>
  planMemoryFromJson(config, {
    quantize,
    backend,
    lora: { rank: c.rank, targets: c.targets },
    train: { sequences: c.sequences, tokens: c.tokens },
    microBatchTokens: c.microBatchTokens,
    recompute,
  });

function expectWithinTenPercent(planned: number, measured: number) {
  const ratio = planned / measured;
  expect(ratio, `planned ${planned}, measured ${measured}`).toBeGreaterThan(0.9);
  expect(ratio, `planned ${planned}, measured ${measured}`).toBeLessThan(1.1);
}

describe('memory plan against the engine allocation (CPU backend)', () => {
  for (const c of CASES) {
    it(`${c.name}: within 10% of the measured peak`, async () => {
      const m = await measure(c);
      const plan = loraPlan(c, m.config, 'cpu');
      // Weights are exact: f32, one tensor per checkpoint tensor.
      expect(plan.bytes.weights).toBe(m.weights);
      expect(plan.microBatches?.count).toBe(m.microBatches);
      // Adapter A and B, AdamW m and v: exact; the gradient is allocated in the step.
      expect(plan.bytes.weights + plan.bytes.lora - plan.loraParameters * 4 + plan.bytes.optimizer).toBe(m.persistent);
      expectWithinTenPercent(plan.bytes.total, m.peak);
    });
  }
});

describe('memory plan with per-layer recomputation against the engine allocation (CPU backend)', () => {
  for (const c of [CASES[0], CASES[2], CASES[3]]) {
    it(`${c.name}, recompute layer: within 10% of the measured peak`, async () => {
      const m = await measure(c, new CpuBackend(), 'none', 'layer');
      expectWithinTenPercent(loraPlan(c, m.config, 'cpu', 'none', 'layer').bytes.total, m.peak);
    });
  }

  it('stories260K (5 layers), 2 x 384: the measured peak drops as planned, both plans within 10%', async () => {
    const c: Case = { ...CASES[0], name: 'stories260K, 2 x 384', sequences: 2, tokens: 384 };
    const kept = await measure(c);
    const rebuilt = await measure(c, new CpuBackend(), 'none', 'layer');
    const planKept = loraPlan(c, kept.config, 'cpu');
    const planRebuilt = loraPlan(c, kept.config, 'cpu', 'none', 'layer');
    expectWithinTenPercent(planKept.bytes.total, kept.peak);
    expectWithinTenPercent(planRebuilt.bytes.total, rebuilt.peak);
    // The step's own bytes (the peak above weights, adapter and optimizer) fall by more than half.
    expect(rebuilt.peak - rebuilt.persistent).toBeLessThan(0.5 * (kept.peak - kept.persistent));
    expect(planRebuilt.bytes.kvCache).toBe(planKept.bytes.kvCache / 5);
  });
});

describe('memory plan against the engine allocation per weight format (CPU backend)', () => {
  for (const quantize of ['f16', 'q8', 'q4'] as const) {
    for (const c of [CASES[0], CASES[2]]) {
      it(`${c.name}, ${quantize}: weights exact, the step within 10% of the measured peak`, async () => {
        const m = await measure(c, new CpuBackend(), quantize);
        const plan = loraPlan(c, m.config, 'cpu', quantize);
        expect(plan.bytes.weights).toBe(m.weights);
        expectWithinTenPercent(plan.bytes.total, m.peak);
      });
    }
  }
});

describe('full fine-tuning plan against the engine allocation (CPU backend)', () => {
  const cases = [
    { name: 'stories260K (tied), 4 x 64', dir: async () => dataPath('models/stories260K'), freezeEmbedding: false, sequences: 4, tokens: 64 },
    { name: 'tiny Qwen2 (biases), embedding frozen, 2 x 16', dir: tiny({ family: 'qwen2' }), freezeEmbedding: true, sequences: 2, tokens: 16 },
  ];
  for (const c of cases) {
    it(`${c.name}: within 10% of the measured peak`, async () => {
      const dir = await c.dir();
      const be = new CpuBackend();
      const { model, config } = await loadModel(new DirSource(dir), be, { weightFormat: 'f32' });
      const trainer = new FullTrainer(model, DEFAULT_FULL_TRAIN, { freezeEmbedding: c.freezeEmbedding });
      const samples: TrainSample[] = Array.from({ length: c.sequences }, (_, i) => {
        const ids = Array.from({ length: c.tokens }, (_, t) => (5 * t + 11 * i + 2) % config.vocabSize);
        return { prompt: ids.slice(0, 1), completion: ids.slice(1), advantages: ids.slice(1).map((_, t) => (t % 2 ? 0.5 : -0.5)) };
      });
      be.resetPeakMemory();
      await trainer.trainStep(samples);
      const plan = planMemoryFromJson(JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')), {
        quantize: 'none',
        backend: 'cpu',
        lora: null,
        full: { freezeEmbedding: c.freezeEmbedding },
        train: { sequences: c.sequences, tokens: c.tokens },
      });
      expect(plan.training).toBe('full');
      expectWithinTenPercent(plan.bytes.total, be.memory().peak);
    });
  }

  it('refuses full fine-tuning of f16 or quantized weights, as FullTrainer does', () => {
    const stories = JSON.parse(readFileSync(dataPath('models/stories260K/config.json'), 'utf8')) as unknown;
    expect(() => planMemoryFromJson(stories, { quantize: 'q4', backend: 'webgpu', lora: null, full: {}, train: { sequences: 1, tokens: 8 } })).toThrow(
      /f32 weights/,
    );
  });
});

describe('memory plan against the engine allocation (WebGPU on Dawn)', () => {
  it.each([
    ['none', 'none'],
    ['q4', 'none'],
    ['none', 'layer'],
  ] as const)('stories260K, 8 x 64, weights %s, recompute %s: within a tenth of the runtime count of its buffers', async (quantize, recompute) => {
    const gpu = await createNodeWebGPUBackend();
    try {
      const c = CASES[0];
      const m = await measure(c, gpu, quantize, recompute);
      const plan = loraPlan(c, m.config, 'webgpu', quantize, recompute);
      // The runtime counts buffer.size: size-class rounding of the pool included, as the plan has it.
      expect(plan.bytes.weights).toBe(m.weights);
      expectWithinTenPercent(plan.bytes.total, m.peak);
    } finally {
      gpu.destroy?.();
    }
  });
});

describe('memory plan formats and limits', () => {
  const stories = JSON.parse(readFileSync(dataPath('models/stories260K/config.json'), 'utf8')) as unknown;
  const base = { backend: 'webgpu' as const, lora: null, train: null };

  it('stores matrices in the format at their exact size on either backend; norms stay f32', () => {
    const f32 = planMemoryFromJson(stories, { ...base, backend: 'cpu', quantize: 'none' }).bytes.weights;
    // stories260K: 260,032 parameters, of which 11 norm vectors of 64 (5 layers x 2 + the final norm).
    expect(f32).toBe(260_032 * 4);
    // On WebGPU matrices are created at their size too; only the norms come from the pool (64 floats: a size class of its own).
    expect(planMemoryFromJson(stories, { ...base, quantize: 'none' }).bytes.weights).toBe(f32);
    const f16 = planMemoryFromJson(stories, { ...base, quantize: 'f16' });
    expect(f16.bytes.weights).toBe((260_032 - 11 * 64) * 2 + 11 * 64 * 4);
    expect(f16.weightFormat).toEqual({ storage: 'f16', bitsPerWeight: 16, groupSize: null });
    // Without shader-f16 the same halves are unpacked in the kernels: same bytes, another note.
    const unpacked = planMemoryFromJson(stories, { ...base, quantize: 'f16', shaderF16: false });
    expect(unpacked.bytes.weights).toBe(f16.bytes.weights);
    expect(unpacked.notes.join(' ')).toMatch(/unpacked from u32 words/);
    expect(planMemoryFromJson(stories, { ...base, quantize: 'f16', backend: 'cpu' }).bytes.weights).toBe(f16.bytes.weights);
  });

  it('plans q8 and q4 as groups of 32 with f16 scales (q4 keeps the embedding in q8), as quant.ts stores them', () => {
    for (const [q, bits] of [
      ['q8', 8.5],
      ['q4', 4.5],
    ] as const) {
      const p = planMemoryFromJson(stories, { ...base, quantize: q });
      expect(p.weightFormat).toEqual({ storage: q, bitsPerWeight: bits, groupSize: 32 });
      // stories260K's matrices all have rows of 64 or 172 values: 2 or 6 groups of 32, 17 words (q8) or 9 (q4) a block of two.
      const m = (rows: number, cols: number) => storedWords(rows, cols, q) * 4;
      const perLayer = m(64, 64) + 2 * m(32, 64) + m(64, 64) + 2 * m(172, 64) + m(64, 172);
      expect(p.bytes.weights).toBe(storedWords(512, 64, 'q8') * 4 + 5 * perLayer + 11 * 64 * 4);
      expect(m(64, 172)).toBe(64 * 3 * (q === 'q8' ? 17 : 9) * 4);
    }
  });

  it('names the largest buffer and checks it against the 2 GiB and 4 GiB binding limits', () => {
    const qwen8b = JSON.parse(readFileSync(modelConfig('Qwen3-8B'), 'utf8')) as unknown;
    const p = planMemoryFromJson(qwen8b, { ...base, quantize: 'none' });
    // 151,936 x 4,096 f32 = 2.32 GiB: one binding of 2 GiB cannot hold the embedding.
    expect(p.largest[0]).toMatchObject({ name: 'model.embed_tokens.weight', kind: 'weight', bytes: 151_936 * 4096 * 4 });
    // A weight over the limit is stored split by rows; so is the untied lm_head.
    expect(p.limits).toEqual([
      { name: '2 GiB', bytes: 2 ** 31, fits: false, splitWeights: ['model.embed_tokens.weight', 'lm_head.weight'], tooLarge: [] },
      { name: '4 GiB', bytes: 2 ** 32, fits: true, splitWeights: [], tooLarge: [] },
    ]);
    expect(planMemoryFromJson(qwen8b, { ...base, quantize: 'q4' }).limits.every((l) => l.fits)).toBe(true);
  });

  it('refuses what the engine refuses', () => {
    expect(() => planMemoryFromJson({ architectures: ['GPT2LMHeadModel'] }, { ...base, quantize: 'none' })).toThrow(/architecture/);
    expect(() => planMemoryFromJson(stories, { ...base, quantize: 'none', lora: { rank: 4, targets: ['mlp'] } })).toThrow(/LoRA target/);
    // stories260K has 512 positions, as CausalLM.createCache checks.
    expect(() =>
      planMemoryFromJson(stories, { ...base, quantize: 'none', lora: { rank: 4, targets: ['q_proj'] }, train: { sequences: 1, tokens: 513 } }),
    ).toThrow(/exceed the model's 512 positions/);
  });
});

describe('the paper-size goal', () => {
  it('Qwen3-4B, q4, LoRA rank 16 on every projection, a 16 x 512 step: within 6 GB with per-layer recomputation', () => {
    const config = JSON.parse(readFileSync(modelConfig('Qwen3-4B'), 'utf8')) as unknown;
    const input = { quantize: 'q4' as const, backend: 'webgpu' as const, lora: { rank: 16, targets: [...PROJECTIONS] }, train: { sequences: 16, tokens: 512 } };
    const layer = planMemoryFromJson(config, { ...input, recompute: 'layer' });
    expect(layer.microBatches).toEqual({ count: 4, sequences: 4, tokens: 512 });
    expect(layer.bytes.total).toBeLessThan(6e9);
    // Keeping every layer's tape (recompute 'none', the trainer's default) does not fit.
    expect(planMemoryFromJson(config, input).bytes.total).toBeGreaterThan(6e9);
    expect(planMemory).toBeTypeOf('function');
  });
});
