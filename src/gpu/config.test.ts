import { describe, expect, it } from 'vitest';
import { expectedTensors, parameterCount, parseModelConfig } from './config';
import { ModelConfigError, UnsupportedArchitectureError } from './errors';

const base = { hidden_size: 64, intermediate_size: 172, num_hidden_layers: 5, num_attention_heads: 8, num_key_value_heads: 4, vocab_size: 512 };

describe('config.json', () => {
  it('reads stories260K-like Llama settings (tied, GQA, head_dim derived)', () => {
    const c = parseModelConfig({ ...base, architectures: ['LlamaForCausalLM'], tie_word_embeddings: true, rms_norm_eps: 1e-5 });
    expect(c).toMatchObject({ family: 'llama', headDim: 8, numKvHeads: 4, tieWordEmbeddings: true, qkvBias: false, qkNorm: false, rmsNormEps: 1e-5 });
    expect(parameterCount(c)).toBe(260032 - 0); // the documented parameter count of stories260K
  });

  it('gives Qwen2 q/k/v biases and Qwen3 per-head q/k norms, with an explicit head_dim', () => {
    const q2 = parseModelConfig({ ...base, architectures: ['Qwen2ForCausalLM'] });
    expect(expectedTensors(q2).map((t) => t.name)).toContain('model.layers.0.self_attn.q_proj.bias');
    expect(q2.tieWordEmbeddings).toBe(false);
    const q3 = parseModelConfig({ ...base, architectures: ['Qwen3ForCausalLM'], head_dim: 16 });
    expect(q3.headDim).toBe(16);
    expect(expectedTensors(q3).find((t) => t.name === 'model.layers.0.self_attn.q_norm.weight')?.shape).toEqual([16]);
    expect(expectedTensors(q3).find((t) => t.name === 'model.layers.0.self_attn.q_proj.weight')?.shape).toEqual([128, 64]);
    expect(expectedTensors(q3).map((t) => t.name)).toContain('lm_head.weight');
  });

  it('names an unsupported architecture and lists what is supported', () => {
    expect(() => parseModelConfig({ ...base, architectures: ['GPT2LMHeadModel'] })).toThrow(UnsupportedArchitectureError);
    expect(() => parseModelConfig({ ...base, architectures: ['GPT2LMHeadModel'] })).toThrow(/GPT2LMHeadModel.*LlamaForCausalLM.*Qwen3ForCausalLM/);
    expect(() => parseModelConfig({ ...base, architectures: ['LlamaForCausalLM'], rope_scaling: { rope_type: 'llama3' } })).toThrow(/rope_scaling "llama3"/);
  });

  it.each([
    [{ hidden_size: 0 }, /hidden_size/],
    [{ num_attention_heads: 6 }, /not a multiple/],
    [{ hidden_size: 60 }, /not divisible/],
    [{ vocab_size: 'many' }, /vocab_size/],
  ])('rejects a malformed config %j', (patch, msg) => {
    expect(() => parseModelConfig({ ...base, architectures: ['LlamaForCausalLM'], ...patch })).toThrow(ModelConfigError);
    expect(() => parseModelConfig({ ...base, architectures: ['LlamaForCausalLM'], ...patch })).toThrow(msg);
  });
});
