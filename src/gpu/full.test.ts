/**
 * Full fine-tuning on real pretrained weights (stories260K, tied; TinyStories-656K, tied and
 * stored only as lm_head.weight), CPU reference backend: the step's direction, frozen
 * embeddings, the reference model of the KL term, the Hugging Face folder and optimizer resume.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { EMBED_KEY } from './backward';
import { expectedTensors } from '../models/config';
import { CpuBackend } from './cpu/backend';
import { EngineError, FullTrainingMemoryError } from './errors';
import {
  checkFullTrainingFits,
  copyWeights,
  fullModelFolder,
  fullTrainingBytes,
  MODEL_WEIGHTS,
  OPTIMIZER_FILE,
  optimizerFromSafetensors,
  optimizerToSafetensors,
  parameterShape,
} from './full';
import { CausalLM } from './model';
import { Policy } from './policy';
import { parseSafetensors, writeSafetensors } from '../models/safetensors';
import { score } from './score';
import { DirSource } from '../models/source-node';
import { FullTrainer } from './train';
import { DEFAULT_FULL_TRAIN, type TrainSample } from './train-types';

const stories = dataPath('models/stories260K');
const mean = (xs: ArrayLike<number>) => Array.from(xs).reduce((a, b) => a + b, 0) / xs.length;
const settings = { ...DEFAULT_FULL_TRAIN, lr: 1e-3 };

async function setup(dir = stories) {
  const be = new CpuBackend();
  const policy = await Policy.load(new DirSource(dir), be);
  const prompt = policy.promptIds('Once upon a time');
  const completion = policy.tokenizer.encode(' there was a dog named Max. Max liked to run.', false);
  const sample = (a: number): TrainSample => ({ prompt, completion, advantages: completion.map(() => a) });
  const meanLogp = async (model = policy.model) => mean((await score(model, [{ prompt, completion }]))[0].logprobs);
  const weights = async (model = policy.model) => new Map(await Promise.all([...model.weights].map(async ([n, t]) => [n, await be.read(t)] as const)));
  return { be, policy, prompt, completion, sample, meanLogp, weights };
}

function writeFolder(files: Map<string, Uint8Array>): string {
  const dir = mkdtempSync(join(tmpdir(), 'full-'));
  for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
  return dir;
}

describe('full fine-tuning on stories260K', () => {
  it('A = +1 raises the completion log-prob, A = -1 lowers it, at the reference lr of 1e-5 too', async () => {
    for (const [a, sign, lr] of [
      [1, 1, 1e-3],
      [-1, -1, 1e-3],
      [1, 1, 1e-5],
    ] as const) {
      const s = await setup();
      const before = await s.meanLogp();
      const trainer = new FullTrainer(s.policy.model, { ...settings, lr });
      for (let i = 0; i < 2; i++) {
        const stats = await trainer.trainStep([s.sample(a)]);
        expect(stats.skipped).toBeNull();
        expect(stats.gradNorm).toBeGreaterThan(0);
      }
      expect(Math.sign((await s.meanLogp()) - before)).toBe(sign);
    }
  });

  it('trains every checkpoint weight, and with the embedding frozen (a tied head too) leaves it as it was', async () => {
    const s = await setup();
    const names = expectedTensors(s.policy.config).map((e) => e.name);
    expect(new FullTrainer(s.policy.model, settings).names).toEqual(names);
    const before = await s.weights();
    const frozen = new FullTrainer(s.policy.model, settings, { freezeEmbedding: true });
    expect(frozen.names).toEqual(names.filter((n) => n !== EMBED_KEY));
    await frozen.trainStep([s.sample(1)]);
    const after = await s.weights();
    expect(Array.from(after.get(EMBED_KEY)!)).toEqual(Array.from(before.get(EMBED_KEY)!));
    for (const n of frozen.names) expect(Array.from(after.get(n)!), n).not.toEqual(Array.from(before.get(n)!));
  });

  it('frees every tensor a step makes', async () => {
    const s = await setup();
    const trainer = new FullTrainer(s.policy.model, settings);
    await trainer.trainStep([s.sample(1)]);
    const before = s.be.memory().allocated;
    await trainer.trainStep([s.sample(-1), s.sample(0.5)]);
    expect(s.be.memory().allocated).toBe(before);
  });

  it('the KL term needs a frozen copy as reference, and with one pulls toward it', async () => {
    const s = await setup();
    const trainer = new FullTrainer(s.policy.model, { ...settings, klCoef: 0.5 });
    await expect(trainer.trainStep([s.sample(1)])).rejects.toThrow(EngineError);
    const frozen = new CausalLM(s.be, s.policy.config, copyWeights(s.be, s.policy.model));
    const first = await trainer.trainStep([s.sample(1)], { reference: { kind: 'model', model: frozen } });
    expect(first.kl).toBeCloseTo(0, 6);
    const second = await trainer.trainStep([s.sample(1)], { reference: { kind: 'model', model: frozen } });
    expect(second.kl).toBeGreaterThan(0);
  });

  it('exports a complete Hugging Face folder under the checkpoint key names that loads back unchanged', async () => {
    const s = await setup();
    await new FullTrainer(s.policy.model, settings).trainStep([s.sample(1)]);
    const trained = (await score(s.policy.model, [{ prompt: s.prompt, completion: s.completion }]))[0].logprobs;
    const files = await fullModelFolder(s.policy.model, s.policy.source);
    expect([...files.keys()].sort()).toEqual([
      'LICENSE.md',
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const original = parseSafetensors(await s.policy.source.bytes(MODEL_WEIGHTS));
    const written = parseSafetensors(files.get(MODEL_WEIGHTS)!);
    expect([...written.tensors.keys()]).toEqual([...original.tensors.keys()]);
    const reloaded = await Policy.load(new DirSource(writeFolder(files)), s.be);
    const again = (await score(reloaded.model, [{ prompt: s.prompt, completion: s.completion }]))[0].logprobs;
    expect(Array.from(again)).toEqual(Array.from(trained));
    const w = await s.weights();
    const w2 = await s.weights(reloaded.model);
    for (const [n, data] of w) expect(Array.from(w2.get(n)!), n).toEqual(Array.from(data));
  });

  it('a checkpoint with the optimizer state resumes to the very step an unbroken run takes', async () => {
    const unbroken = await setup();
    const t1 = new FullTrainer(unbroken.policy.model, settings);
    await t1.trainStep([unbroken.sample(1)]);
    const files = await fullModelFolder(unbroken.policy.model, unbroken.policy.source);
    files.set(OPTIMIZER_FILE, optimizerToSafetensors(await t1.optimizerState(), parameterShape(unbroken.policy.model)));
    await t1.trainStep([unbroken.sample(-0.5)]);
    const dir = writeFolder(files);

    const resumed = await setup(dir);
    const t2 = new FullTrainer(resumed.policy.model, settings);
    const state = optimizerFromSafetensors(files.get(OPTIMIZER_FILE)!);
    expect(state.step).toBe(1);
    t2.restoreOptimizer(state);
    expect(t2.stepsTaken).toBe(1);
    await t2.trainStep([resumed.sample(-0.5)]);
    const a = await unbroken.weights();
    const b = await resumed.weights();
    for (const [n, data] of a) expect(Array.from(b.get(n)!), n).toEqual(Array.from(data));

    // Without the moments the step differs (Adam's first step is sign-like), so the state mattered.
    const fresh = await setup(dir);
    await new FullTrainer(fresh.policy.model, settings).trainStep([fresh.sample(-0.5)]);
    const c = await fresh.weights();
    expect(Array.from(c.get('model.norm.weight')!)).not.toEqual(Array.from(a.get('model.norm.weight')!));
  });

  it('refuses an optimizer state that belongs to another model or mode, naming the parameter', async () => {
    const s = await setup();
    const trainer = new FullTrainer(s.policy.model, settings);
    const state = await trainer.optimizerState();
    state.moments.delete('model.norm.weight');
    expect(() => trainer.restoreOptimizer(state)).toThrow(/model\.norm\.weight/);
    // A model's weights are not an optimizer state.
    expect(() => optimizerFromSafetensors(writeSafetensors([], { format: 'pt' }))).toThrow(/not an optimizer state/);
  });

  it('refuses a hostile optimizer state before it touches the moments: negative second moments, a step of 1e20, a wrong shape, stray tensors', async () => {
    const s = await setup();
    const trainer = new FullTrainer(s.policy.model, settings);
    await trainer.trainStep([s.sample(1)]);
    const good = await trainer.optimizerState();
    const shapes = parameterShape(s.policy.model);
    const file = (state = good, metadata?: Record<string, string>) => {
      const bytes = optimizerToSafetensors(state, shapes);
      if (!metadata) return bytes;
      const { tensors } = parseSafetensors(bytes);
      return writeSafetensors(
        [...tensors.values()].map((t) => ({ name: t.name, shape: t.shape, data: new Float32Array(new Uint8Array(t.bytes).buffer) })),
        metadata,
      );
    };
    const withMoments = (change: (m: { m: Float32Array; v: Float32Array }) => { m: Float32Array; v: Float32Array }) => ({
      step: good.step,
      moments: new Map([...good.moments].map(([n, m]) => [n, change(m)])),
    });
    // Every exp_avg_sq at -1: AdamW's square root made all 47 tensors NaN, with exit 0.
    const negative = optimizerFromSafetensors(file(withMoments((m) => ({ m: m.m, v: new Float32Array(m.v.length).fill(-1) }))));
    expect(() => trainer.restoreOptimizer(negative)).toThrow(
      /^optimizer state: model\.embed_tokens\.weight's exp_avg_sq\[0\] is -1; a second moment is a finite number of at least 0\. The state is damaged/,
    );
    expect(() => optimizerFromSafetensors(file(good, { format: 'nextstate-adamw', step: '1e20' }))).toThrow(
      /step 1e20; the step must be a whole number up to 100,000,000/,
    );
    expect(() => optimizerFromSafetensors(file(good, { format: 'nextstate-adamw', step: '100000001' }))).toThrow(/the step must be a whole number/);
    expect(() => trainer.restoreOptimizer({ ...good, step: 1e20 })).toThrow(/step 100000000000000000000 is not a whole number up to 100,000,000/);
    // The same number of values in another shape: the moments of some other matrix.
    const embed = 'model.embed_tokens.weight';
    const [rows, cols] = shapes(embed);
    const transposed = optimizerToSafetensors(good, (n) => (n === embed ? [cols, rows] : shapes(n)));
    expect(() => trainer.restoreOptimizer(optimizerFromSafetensors(transposed))).toThrow(
      `optimizer state: ${embed} has shape [${cols},${rows}], the parameter [${rows},${cols}]; it belongs to another model`,
    );
    const stray = { ...good, moments: new Map([...good.moments, ['model.layers.99.mlp.up_proj.weight', good.moments.get(embed)!]]) };
    expect(() => trainer.restoreOptimizer(stray)).toThrow(/moments for model\.layers\.99\.mlp\.up_proj\.weight, which this model does not train/);
    const { tensors } = parseSafetensors(file());
    const extra = writeSafetensors(
      [
        ...[...tensors.values()].map((t) => ({ name: t.name, shape: t.shape, data: new Float32Array(new Uint8Array(t.bytes).buffer) })),
        { name: 'notes', shape: [1], data: Float32Array.of(0) },
      ],
      { format: 'nextstate-adamw', step: '1' },
    );
    expect(() => optimizerFromSafetensors(extra)).toThrow(/holds notes, which is neither an exp_avg nor an exp_avg_sq/);
    // Nothing was taken: the next step is the one an untouched trainer takes.
    expect(trainer.stepsTaken).toBe(1);
    expect((await trainer.optimizerState()).moments.get(embed)!.v).toEqual(good.moments.get(embed)!.v);
  });
});

describe('whether full fine-tuning fits, said before anything is loaded', () => {
  it('counts weights, gradients and two moments (and any weight copies) against the memory, and each weight against one buffer', async () => {
    const s = await setup();
    const c = s.policy.config;
    const params = expectedTensors(c).reduce((n, e) => n + e.shape.reduce((a, b) => a * b, 1), 0);
    expect(fullTrainingBytes(params)).toBe(params * 16);
    expect(() => checkFullTrainingFits(c, { memoryBytes: params * 16 })).not.toThrow();
    expect(() => checkFullTrainingFits(c, { memoryBytes: params * 16 - 1 })).toThrow(FullTrainingMemoryError);
    expect(() => checkFullTrainingFits(c, { memoryBytes: params * 16, copies: 1 })).toThrow(/train LoRA instead/);
    // The embedding [512, 64] in f32 is 131072 bytes.
    expect(() => checkFullTrainingFits(c, { maxBufferBytes: 131072 })).not.toThrow();
    expect(() => checkFullTrainingFits(c, { maxBufferBytes: 131071 })).toThrow(/model\.embed_tokens\.weight/);
  });
});

describe('full fine-tuning on TinyStories-656K (tied, stored only as lm_head.weight)', () => {
  it('writes the tied weight back as lm_head.weight with the alias metadata, and loads back unchanged', async () => {
    const s = await setup(dataPath('models/TinyStories-656K'));
    await new FullTrainer(s.policy.model, settings).trainStep([s.sample(1)]);
    const trained = (await score(s.policy.model, [{ prompt: s.prompt, completion: s.completion }]))[0].logprobs;
    const files = await fullModelFolder(s.policy.model, s.policy.source);
    expect(files.has('special_tokens_map.json')).toBe(true);
    const written = parseSafetensors(files.get(MODEL_WEIGHTS)!);
    const original = parseSafetensors(await s.policy.source.bytes(MODEL_WEIGHTS));
    expect([...written.tensors.keys()]).toEqual([...original.tensors.keys()]);
    expect(written.tensors.has(EMBED_KEY)).toBe(false);
    expect(written.metadata[EMBED_KEY]).toBe('lm_head.weight');
    const reloaded = await Policy.load(new DirSource(writeFolder(files)), s.be);
    const again = (await score(reloaded.model, [{ prompt: s.prompt, completion: s.completion }]))[0].logprobs;
    expect(Array.from(again)).toEqual(Array.from(trained));
  });
});
