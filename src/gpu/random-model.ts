/**
 * A model of any config.json's shape with seeded random weights, generated straight into the
 * storage format a block of rows at a time: how a 4B-shaped model is measured on a machine that
 * holds no such checkpoint, without its f32 copy ever existing. Speed and memory only: the
 * weights mean nothing.
 */
import type { Backend, Tensor, WeightSource } from './backend';
import { expectedTensors, type ModelConfig } from '../models/config';
import { CausalLM, type Weights } from './model';
import { matrixFormat, type WeightFormat } from './quant';
import { mulberry32 } from './random';

export interface RandomModelOptions {
  format: WeightFormat;
  seed?: number;
  /** Standard deviation of the uniform values of matrices and biases (GPT-2's init, 0.02, by default). */
  std?: number;
  /**
   * Norm weights drawn uniformly from 1 +- normJitter / 2 (default 0: the identity scale); a
   * gradient check wants them away from 1 so their gradients are exercised.
   */
  normJitter?: number;
}

/** Uniform values of mean `mean`; each row drawn from its own seed, so rows do not depend on how they are blocked. */
function randomRows(shape: readonly number[], seed: number, halfWidth: number, mean = 0): WeightSource {
  const width = shape.length === 2 ? shape[1] : 1;
  return {
    shape,
    rows(start, count) {
      const out = new Float32Array(count * width);
      for (let r = 0; r < count; r++) {
        const rand = mulberry32(Math.imul(seed, 0x9e3779b1) ^ (start + r));
        for (let c = 0; c < width; c++) out[r * width + c] = mean + (2 * rand() - 1) * halfWidth;
      }
      return out;
    },
  };
}

export function randomModel(config: ModelConfig, backend: Backend, opts: RandomModelOptions): CausalLM {
  const weights: Weights = new Map();
  const seed = opts.seed ?? 1;
  // A uniform on [-h, h] has standard deviation h / sqrt(3).
  const half = (opts.std ?? 0.02) * Math.sqrt(3);
  try {
    expectedTensors(config).forEach((e, i) => {
      const s = seed * 1000 + i;
      let t: Tensor;
      if (e.shape.length === 2) t = backend.weight(randomRows(e.shape, s, half), matrixFormat(e.name, opts.format));
      else if (e.name.endsWith('.bias')) t = backend.tensor(randomRows(e.shape, s, half).rows(0, e.shape[0]), e.shape);
      else t = backend.tensor(randomRows(e.shape, s, (opts.normJitter ?? 0) / 2, 1).rows(0, e.shape[0]), e.shape);
      weights.set(e.name, t);
    });
  } catch (e) {
    for (const w of weights.values()) backend.dispose(w);
    throw e;
  }
  return new CausalLM(backend, config, weights);
}
