/**
 * Tiny llama-family configs for gradient checks, and the weights those checks use: random
 * (src/gpu/random-model.ts) and wide enough (norms away from 1) that every gradient is exercised.
 */
import type { Backend } from '../src/gpu/backend';
import { parseModelConfig, type ModelConfig } from '../src/models/config';
import type { CausalLM } from '../src/gpu/model';
import { randomModel } from '../src/gpu/random-model';

export function tinyConfig(family: 'llama' | 'qwen2' | 'qwen3' = 'llama', overrides: Record<string, unknown> = {}): ModelConfig {
  const arch = { llama: 'LlamaForCausalLM', qwen2: 'Qwen2ForCausalLM', qwen3: 'Qwen3ForCausalLM' }[family];
  return parseModelConfig({
    architectures: [arch],
    hidden_size: 16,
    intermediate_size: 24,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 4,
    vocab_size: 37,
    max_position_embeddings: 64,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: family === 'llama',
    ...overrides,
  });
}

/** f32 weights uniform in [-0.4, 0.4], norms in [0.8, 1.2]. */
export function checkModel(backend: Backend, config: ModelConfig, seed = 1): CausalLM {
  return randomModel(config, backend, { format: 'f32', seed, std: 0.4 / Math.sqrt(3), normJitter: 0.4 });
}
