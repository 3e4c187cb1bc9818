/**
 * TEMPORARY, until src/gpu/random-model.ts lands: randomModel's contract in f32 only, so the
 * device bench runs end to end before the engine has q4 and random weights of its own. Delete
 * this file and import randomModel from src/gpu/random-model instead.
 */
import type { Backend } from '../../src/gpu/backend';
import { expectedTensors, type ModelConfig } from '../../src/gpu/config';
import { CausalLM } from '../../src/gpu/model';
import type { WeightFormat } from '../../src/gpu/quant';
import { mulberry32 } from '../../src/gpu/random';

export function randomModel(config: ModelConfig, backend: Backend, opts: { format: WeightFormat; seed?: number }): CausalLM {
  if (opts.format !== 'f32') throw new Error(`random ${opts.format} weights need src/gpu/random-model.ts, which is not in the engine yet`);
  const rand = mulberry32(opts.seed ?? 1);
  const weights = new Map();
  for (const e of expectedTensors(config)) {
    const n = e.shape.reduce((a, b) => a * b, 1);
    const norm = e.shape.length === 1 && !e.name.endsWith('.bias');
    weights.set(
      e.name,
      backend.tensor(
        Float32Array.from({ length: n }, () => (norm ? 1 : (rand() - 0.5) * 0.1)),
        e.shape,
      ),
    );
  }
  return new CausalLM(backend, config, weights);
}
