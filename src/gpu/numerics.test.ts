/**
 * Finite weights that overflow f32 in the forward pass (3e38, an adapter scale of 1e38) stop
 * generation, scoring and training with one line naming where the first NaN or infinity appears,
 * instead of log-probs of NaN (written as null) or a sampled token -1.
 */
import { describe, expect, it } from 'vitest';
import { parseModelConfig } from '../models/config';
import { CpuBackend } from './cpu/backend';
import { generate } from './generate';
import { LoraAdapter } from './lora';
import { CausalLM } from './model';
import { firstNonFinite, NonFiniteError } from './numerics';
import { randomModel } from './random-model';
import { score } from './score';
import { LoraTrainer } from './train';
import { DEFAULT_TRAIN } from './train-types';

const config = parseModelConfig({
  architectures: ['LlamaForCausalLM'],
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  vocab_size: 64,
  max_position_embeddings: 64,
});
const prompt = [1, 5, 9];
const completion = [3, 4];

/** A random model whose layer-1 up projection holds finite weights of 3e38: its product overflows. */
function overflowing(): CausalLM {
  const be = new CpuBackend();
  const model = randomModel(config, be, { format: 'f32', seed: 3 });
  const name = 'model.layers.1.mlp.up_proj.weight';
  const shape = model.w(name).shape;
  be.dispose(model.w(name));
  model.weights.set(name, be.tensor(new Float32Array(shape[0] * shape[1]).fill(3e38), shape));
  return model;
}

/** An adapter on q_proj with lora_alpha 1e38 and B of 1000s: finite numbers, an infinite product. */
function hugeAdapter(model: CausalLM): LoraAdapter {
  const adapter = LoraAdapter.init(model.backend, config, { rank: 2, alpha: 1e38, targets: ['q_proj'] }, 1);
  for (const pair of adapter.pairs.values()) {
    model.backend.dispose(pair.B);
    pair.B = model.backend.tensor(new Float32Array(pair.B.shape[0] * pair.B.shape[1]).fill(1000), pair.B.shape);
  }
  return adapter;
}

async function refusal(work: Promise<unknown>): Promise<string> {
  const e = await work.then(
    () => null,
    (x: Error) => x,
  );
  expect(e).toBeInstanceOf(NonFiniteError);
  expect(e!.message).not.toContain('\n');
  return e!.message;
}

describe('a forward pass that overflows f32', () => {
  it('is located layer by layer: the first tensor holding NaN or infinity', async () => {
    expect(await firstNonFinite(overflowing(), [...prompt, ...completion])).toBe('model.layers.1.mlp.up_proj');
    const fine = randomModel(config, new CpuBackend(), { format: 'f32', seed: 3 });
    expect(await firstNonFinite(fine, prompt)).toBeNull();
    const adapter = hugeAdapter(fine);
    expect(await firstNonFinite(fine, prompt, adapter)).toBe('model.layers.0.self_attn.q_proj');
  });

  it('stops generation at the first token, naming the layer, instead of sampling token -1', async () => {
    const message = await refusal(generate(overflowing(), [prompt], { maxNewTokens: 4 }));
    expect(message).toBe(
      'the log-prob of generated token 1 of sequence 1 is NaN or infinite: the first NaN or infinite value is in model.layers.1.mlp.up_proj. ' +
        'The weights overflow f32; use an undamaged checkpoint or a smaller adapter scale.',
    );
  });

  it('stops scoring instead of returning log-probs of NaN', async () => {
    expect(await refusal(score(overflowing(), [{ prompt, completion }]))).toMatch(
      /^the log-prob of completion token 1 of sequence 1 is NaN or infinite: the first NaN or infinite value is in model\.layers\.1\.mlp\.up_proj\./,
    );
  });

  it('stops a training step, and names the adapter when one is applied', async () => {
    const model = randomModel(config, new CpuBackend(), { format: 'f32', seed: 3 });
    const adapter = hugeAdapter(model);
    const trainer = new LoraTrainer(model, adapter, { ...DEFAULT_TRAIN, lr: 1e-3 });
    const message = await refusal(trainer.trainStep([{ prompt, completion, advantages: [1, 1] }]));
    expect(message).toMatch(/in model\.layers\.0\.self_attn\.q_proj\. The weights or the adapter \(its lora_alpha and weights\) overflow f32/);
    expect(trainer.stepsTaken).toBe(0);
    expect(await refusal(generate(model, [prompt], { maxNewTokens: 2, lora: adapter }))).toMatch(/self_attn\.q_proj/);
  });

  it('frees what the search allocated', async () => {
    const model = overflowing();
    const before = model.backend.memory().allocated;
    await firstNonFinite(model, [...prompt, ...completion]);
    expect(model.backend.memory().allocated).toBe(before);
  });
});
