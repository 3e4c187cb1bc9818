/** An in-memory random llama-family model for gradient checks (no files, any backend). */
import type { Backend } from '../src/gpu/backend';
import { expectedTensors, parseModelConfig, type ModelConfig } from '../src/gpu/config';
import { CausalLM } from '../src/gpu/model';
import { mulberry32 } from '../src/gpu/random';

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

export function randomModel(backend: Backend, config: ModelConfig, seed = 1): CausalLM {
  const rand = mulberry32(seed);
  const weights = new Map();
  for (const e of expectedTensors(config)) {
    const n = e.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    const isNorm = e.shape.length === 1 && !e.name.endsWith('.bias');
    for (let i = 0; i < n; i++) data[i] = isNorm ? 1 + (rand() - 0.5) * 0.4 : (rand() - 0.5) * 0.8;
    weights.set(e.name, backend.tensor(data, e.shape));
  }
  return new CausalLM(backend, config, weights);
}
