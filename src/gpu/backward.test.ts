/**
 * The whole model's gradients (CPU reference, f64) against central finite differences: LoRA's A
 * and B, and full fine-tuning's every weight (projections, biases, norms, the embedding and the
 * LM head, tied or not).
 */
import { describe, expect, it } from 'vitest';
import { checkModel, tinyConfig } from '../../test/random-model';
import { backward, EMBED_KEY, headBackward, zeroGrads, type Grads } from './backward';
import { expectedTensors } from '../models/config';
import { CpuBackend, CpuTensor } from './cpu/backend';
import { leftPad } from './generate';
import { LoraAdapter } from './lora';
import type { CausalLM, Tape } from './model';
import { mulberry32 } from './random';
import { completionRows, type ScoreItem } from './score';

const items: ScoreItem[] = [
  { prompt: [1, 5, 9], completion: [3, 7, 2, 11] },
  { prompt: [4], completion: [8, 8, 30] },
];
const weightsPerToken = [0.7, -1.3, 0.4, 2.1, -0.5, 1.1, 0.3];

/** sum_t w_t * log p(token_t) with the logits divided by `temperature`: a loss whose d/dlogp is exactly the weights. */
function objective(model: CausalLM, adapter?: LoraAdapter, tapeBox?: { value?: Tape }, temperature = 1) {
  const be = model.backend;
  const { ids, T, padLeft } = leftPad(
    items.map((x) => [...x.prompt, ...x.completion]),
    0,
  );
  const cache = model.createCache(items.length, T);
  const hidden = model.forward({ ids, B: items.length, T, start: 0, padLeft }, cache, adapter, tapeBox);
  const { rows, targets } = completionRows(items, T, padLeft);
  const logits = model.logits(hidden, rows, temperature);
  const { logp } = be.logSoftmaxGather(logits, targets);
  const value = Array.from((logp as CpuTensor).data).reduce((s, x, i) => s + x * weightsPerToken[i], 0);
  return { value, hidden, logits, rows, targets };
}

/** The analytic gradients of the objective into `grads`, the way the trainer computes them. */
function analytic(model: CausalLM, grads: Grads, adapter?: LoraAdapter, temperature = 1): void {
  const be = model.backend;
  const tapeBox: { value?: Tape } = {};
  const { hidden, logits, rows, targets } = objective(model, adapter, tapeBox, temperature);
  const dlogits = be.logSoftmaxGatherBackward(logits, targets, be.tensor(Float64Array.from(weightsPerToken) as never, [7]));
  const tape = tapeBox.value!;
  const dHidden = be.zeros([tape.shape.B * tape.shape.T, model.config.hiddenSize]);
  headBackward(model, hidden, rows, dlogits, grads, dHidden, temperature);
  backward(model, tape, dHidden, grads, adapter);
}

/** Central differences of the objective at `entries` of `param`, against `grad`. */
function checkEntries(
  model: CausalLM,
  param: Float64Array | Float32Array,
  grad: Float64Array | Float32Array,
  entries: number[],
  what: string,
  adapter?: LoraAdapter,
  temperature = 1,
): number {
  for (const i of entries) {
    const keep = param[i];
    const h = 1e-5;
    param[i] = keep + h;
    const up = objective(model, adapter, undefined, temperature).value;
    param[i] = keep - h;
    const down = objective(model, adapter, undefined, temperature).value;
    param[i] = keep;
    const numeric = (up - down) / (2 * h);
    expect(Math.abs(grad[i] - numeric), `${what}[${i}]: analytic ${grad[i]}, numeric ${numeric}`).toBeLessThan(1e-6 + 1e-5 * Math.abs(numeric));
  }
  return entries.length;
}

const ends = (n: number) => [0, Math.floor(n / 2), n - 1];

describe.each(['llama', 'qwen2', 'qwen3'] as const)('backward through a random %s model', (family) => {
  it('LoRA: matches central finite differences on A and B of every projection', () => {
    const be = new CpuBackend('f64');
    const model = checkModel(be, tinyConfig(family), 3);
    const adapter = LoraAdapter.init(
      be,
      model.config,
      { rank: 2, alpha: 4, targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] },
      5,
    );
    // B = 0 would make every dA zero; give B values so both gradients are exercised.
    const rand = mulberry32(9);
    for (const { B } of adapter.pairs.values()) (B as CpuTensor).data.forEach((_, i, a) => (a[i] = (rand() - 0.5) * 0.5));
    const grads = zeroGrads(be, adapter.parameters());
    analytic(model, grads, adapter);
    let checked = 0;
    for (const { name, tensor } of adapter.parameters()) {
      checked += checkEntries(model, (tensor as CpuTensor).data, (grads.get(name) as CpuTensor).data, ends(tensor.size), name, adapter);
    }
    expect(checked).toBe(2 * 7 * 2 * 3); // layers x projections x {A, B} x entries
  });

  it('full fine-tuning: matches central finite differences on every weight of the checkpoint', () => {
    const be = new CpuBackend('f64');
    const config = tinyConfig(family);
    const model = checkModel(be, config, 3);
    const names = expectedTensors(config).map((e) => e.name);
    const grads = zeroGrads(
      be,
      names.map((name) => ({ name, tensor: model.w(name) })),
    );
    analytic(model, grads);
    const D = config.hiddenSize;
    for (const name of names) {
      // The embedding: rows of the padding id (0), a repeated id (8) and one only the LM head reads.
      const entries = name === EMBED_KEY ? [...ends(model.w(name).size), 8 * D + 3, 30 * D + 1] : ends(model.w(name).size);
      checkEntries(model, (model.w(name) as CpuTensor).data, (grads.get(name) as CpuTensor).data, entries, name);
    }
    // Every kind of weight the family has was checked, the tied head through the embedding.
    expect(names.includes('lm_head.weight')).toBe(!config.tieWordEmbeddings);
    expect(names.some((n) => n.endsWith('.bias'))).toBe(family === 'qwen2');
    expect(names.some((n) => n.endsWith('q_norm.weight'))).toBe(family === 'qwen3');
  });

  it('full fine-tuning with the embedding frozen: the other gradients are unchanged', () => {
    const be = new CpuBackend('f64');
    const config = tinyConfig(family);
    const model = checkModel(be, config, 3);
    const names = expectedTensors(config).map((e) => e.name);
    const all = zeroGrads(
      be,
      names.map((name) => ({ name, tensor: model.w(name) })),
    );
    const frozen = zeroGrads(
      be,
      names.filter((n) => n !== EMBED_KEY).map((name) => ({ name, tensor: model.w(name) })),
    );
    analytic(model, all);
    analytic(model, frozen);
    expect(frozen.has(EMBED_KEY)).toBe(false);
    for (const [name, g] of frozen) expect(Array.from((g as CpuTensor).data), name).toEqual(Array.from((all.get(name) as CpuTensor).data));
  });
});

describe('backward at a sampling temperature (the logits divided by T, as the trainer scores rollouts)', () => {
  it('full fine-tuning at T = 0.6: matches central finite differences on every weight, the LM head included', () => {
    const be = new CpuBackend('f64');
    const config = tinyConfig('llama');
    const model = checkModel(be, config, 3);
    const names = expectedTensors(config).map((e) => e.name);
    const grads = zeroGrads(
      be,
      names.map((name) => ({ name, tensor: model.w(name) })),
    );
    analytic(model, grads, undefined, 0.6);
    for (const name of names)
      checkEntries(model, (model.w(name) as CpuTensor).data, (grads.get(name) as CpuTensor).data, ends(model.w(name).size), name, undefined, 0.6);
    // The temperature changes the gradient: a backward that ignored it would not pass the check above.
    const atOne = zeroGrads(be, [{ name: EMBED_KEY, tensor: model.w(EMBED_KEY) }]);
    analytic(model, atOne);
    expect(Array.from((atOne.get(EMBED_KEY) as CpuTensor).data)).not.toEqual(Array.from((grads.get(EMBED_KEY) as CpuTensor).data));
  });
});
