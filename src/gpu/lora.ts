/**
 * LoRA adapters: for a targeted projection W [out, in], y = x W^T + (alpha / r) * (x A^T) B^T
 * with A [r, in] and B [out, r]. B starts at zero so a fresh adapter is the base model
 * (Hu et al., 2021; PEFT's default init).
 */
import type { Backend, Tensor } from './backend';
import { PROJECTIONS, projectionShape, type ModelConfig, type Projection } from '../models/config';
import { EngineError } from './errors';
import { mulberry32 } from './random';

export interface LoraConfig {
  rank: number;
  alpha: number;
  targets: Projection[];
}

export const DEFAULT_LORA: LoraConfig = { rank: 16, alpha: 32, targets: [...PROJECTIONS] };

export interface LoraPair {
  A: Tensor;
  B: Tensor;
}

export class LoraAdapter {
  /** Keyed `${layer}.${projection}`. */
  readonly pairs = new Map<string, LoraPair>();
  constructor(
    readonly config: LoraConfig,
    readonly modelConfig: ModelConfig,
  ) {
    if (!Number.isInteger(config.rank) || config.rank <= 0) throw new EngineError(`LoRA rank must be a positive integer, got ${config.rank}`);
    for (const t of config.targets) {
      if (!PROJECTIONS.includes(t)) throw new EngineError(`unknown LoRA target ${t}; choose from ${PROJECTIONS.join(', ')}`);
    }
  }

  get scale(): number {
    return this.config.alpha / this.config.rank;
  }

  static key(layer: number, p: Projection): string {
    return `${layer}.${p}`;
  }

  get(layer: number, p: Projection): LoraPair | undefined {
    return this.pairs.get(LoraAdapter.key(layer, p));
  }

  /** A ~ U(-1/sqrt(in), 1/sqrt(in)) like PEFT's kaiming-uniform(a=sqrt(5)); B = 0. */
  static init(backend: Backend, modelConfig: ModelConfig, config: LoraConfig, seed: number): LoraAdapter {
    const adapter = new LoraAdapter(config, modelConfig);
    const rand = mulberry32(seed);
    for (let layer = 0; layer < modelConfig.numLayers; layer++) {
      for (const p of config.targets) {
        const [out, inp] = projectionShape(modelConfig, p);
        const bound = 1 / Math.sqrt(inp);
        const a = new Float32Array(config.rank * inp);
        for (let i = 0; i < a.length; i++) a[i] = (rand() * 2 - 1) * bound;
        adapter.pairs.set(LoraAdapter.key(layer, p), {
          A: backend.tensor(a, [config.rank, inp]),
          B: backend.zeros([out, config.rank]),
        });
      }
    }
    return adapter;
  }

  /** Every trainable tensor with a stable name, in a fixed order (optimizer state follows it). */
  parameters(): { name: string; tensor: Tensor }[] {
    const out: { name: string; tensor: Tensor }[] = [];
    for (const [key, pair] of this.pairs) {
      out.push({ name: `${key}.A`, tensor: pair.A }, { name: `${key}.B`, tensor: pair.B });
    }
    return out;
  }

  /**
   * A copy on the device (x + 0 * x), without reading the tensors back: the serving snapshot
   * is taken every step, and a readback per tensor would wait behind all queued GPU work.
   */
  async clone(backend: Backend): Promise<LoraAdapter> {
    const copy = new LoraAdapter(this.config, this.modelConfig);
    for (const [key, pair] of this.pairs) {
      copy.pairs.set(key, { A: backend.add(pair.A, pair.A, 0), B: backend.add(pair.B, pair.B, 0) });
    }
    return copy;
  }

  dispose(backend: Backend): void {
    for (const { A, B } of this.pairs.values()) {
      backend.dispose(A);
      backend.dispose(B);
    }
    this.pairs.clear();
  }
}
