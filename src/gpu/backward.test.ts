/** The whole model's LoRA gradients (CPU reference, f64) against central finite differences. */
import { describe, expect, it } from 'vitest';
import { randomModel, tinyConfig } from '../../test/random-model';
import { backward, zeroGrads } from './backward';
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

/** sum_t w_t * log p(token_t): a loss whose d/dlogp is exactly the weights. */
function objective(model: CausalLM, adapter: LoraAdapter, tapeBox?: { value?: Tape }) {
  const be = model.backend;
  const { ids, T, padLeft } = leftPad(items.map((x) => [...x.prompt, ...x.completion]), 0);
  const cache = model.createCache(items.length, T);
  const hidden = model.forward({ ids, B: items.length, T, start: 0, padLeft }, cache, adapter, tapeBox);
  const { rows, targets } = completionRows(items, T, padLeft);
  const logits = model.logits(hidden, rows);
  const { logp } = be.logSoftmaxGather(logits, targets);
  const value = Array.from((logp as CpuTensor).data).reduce((s, x, i) => s + x * weightsPerToken[i], 0);
  return { value, logits, rows, targets };
}

describe.each(['llama', 'qwen2', 'qwen3'] as const)('LoRA backward through a random %s model', (family) => {
  it('matches central finite differences on A and B of every projection', () => {
    const be = new CpuBackend('f64');
    const model = randomModel(be, tinyConfig(family), 3);
    const adapter = LoraAdapter.init(be, model.config, { rank: 2, alpha: 4, targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] }, 5);
    // B = 0 would make every dA zero; give B values so both gradients are exercised.
    const rand = mulberry32(9);
    for (const { B } of adapter.pairs.values()) (B as CpuTensor).data.forEach((_, i, a) => (a[i] = (rand() - 0.5) * 0.5));

    const tapeBox: { value?: Tape } = {};
    const { logits, rows, targets } = objective(model, adapter, tapeBox);
    const grads = zeroGrads(be, adapter);
    const dlogits = be.logSoftmaxGatherBackward(logits, targets, be.tensor(Float64Array.from(weightsPerToken) as never, [7]));
    const N = tapeBox.value!.shape.B * tapeBox.value!.shape.T;
    backward(model, tapeBox.value!, be.scatterRows(be.matmul(dlogits, model.lmHead, false, false), rows, N), adapter, grads);

    let checked = 0;
    for (const [key, pair] of adapter.pairs) {
      for (const which of ['A', 'B'] as const) {
        const param = (pair[which] as CpuTensor).data;
        const analytic = (grads.get(key)![which] as CpuTensor).data;
        for (const i of [0, Math.floor(param.length / 2), param.length - 1]) {
          const keep = param[i];
          const h = 1e-5;
          param[i] = keep + h;
          const up = objective(model, adapter).value;
          param[i] = keep - h;
          const down = objective(model, adapter).value;
          param[i] = keep;
          const numeric = (up - down) / (2 * h);
          expect(Math.abs(analytic[i] - numeric)).toBeLessThan(1e-6 + 1e-5 * Math.abs(numeric));
          checked++;
        }
      }
    }
    expect(checked).toBe(2 * 7 * 2 * 3); // layers x projections x {A, B} x entries
  });
});
