import { describe, expect, it } from 'vitest';
import { expectedTensorCount, expectedTensors, MAX_DIMENSIONS, parameterCount, parseModelConfig } from './config';
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

  it('takes an architecture only by its own name: "constructor" and "__proto__" are properties of every object', () => {
    for (const arch of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(() => parseModelConfig({ ...base, architectures: [arch] })).toThrow(UnsupportedArchitectureError);
      expect(() => parseModelConfig({ ...base, architectures: [arch] })).toThrow(`config.json names architecture ${arch}; the engine runs`);
    }
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
    // A hostile config.json: 1e9 layers ran 75 s and 4.6 GB, then crashed with a native stack.
    [{ num_hidden_layers: 1e9 }, /"num_hidden_layers" must be a positive integer of at most 1,024, found 1000000000\./],
    [{ hidden_size: 2 ** 40, num_attention_heads: 8 }, /"hidden_size" must be a positive integer of at most 65,536/],
    [{ intermediate_size: 1e12 }, /intermediate_size/],
    [{ vocab_size: 1e10 }, /vocab_size/],
    [{ num_attention_heads: 2 ** 20 }, /num_attention_heads/],
    [{ num_key_value_heads: 2 ** 20 }, /num_key_value_heads/],
    [{ head_dim: 1e8 }, /head_dim/],
    [{ max_position_embeddings: 1e15 }, /max_position_embeddings/],
    // Finite but outside what f32 arithmetic survives: every norm 0, every RoPE angle infinite.
    [{ rms_norm_eps: 1e300 }, /"rms_norm_eps" must be a number from 1e-12 to 0\.1, found 1e\+300\./],
    [{ rope_theta: 1e-300 }, /"rope_theta" must be a number from 1 to 10000000000, found 1e-300\./],
    // JSON.parse reads 1e999 as Infinity, which JSON.stringify writes as "null".
    [{ rms_norm_eps: JSON.parse('1e999') }, /"rms_norm_eps" must be a number from 1e-12 to 0\.1, found Infinity\./],
    [{ num_hidden_layers: JSON.parse('-1e999') }, /found -Infinity\./],
  ])('rejects a malformed config %j', (patch, msg) => {
    expect(() => parseModelConfig({ ...base, architectures: ['LlamaForCausalLM'], ...patch })).toThrow(ModelConfigError);
    expect(() => parseModelConfig({ ...base, architectures: ['LlamaForCausalLM'], ...patch })).toThrow(msg);
  });
});

describe('dimension bounds', () => {
  it('accept every dimension at its bound and count the implied tensors without listing them', () => {
    const c = parseModelConfig({
      architectures: ['Qwen2ForCausalLM'],
      hidden_size: MAX_DIMENSIONS.hidden_size,
      intermediate_size: MAX_DIMENSIONS.intermediate_size,
      num_hidden_layers: MAX_DIMENSIONS.num_hidden_layers,
      num_attention_heads: 64,
      head_dim: MAX_DIMENSIONS.head_dim,
      vocab_size: MAX_DIMENSIONS.vocab_size,
      max_position_embeddings: MAX_DIMENSIONS.max_position_embeddings,
    });
    expect(expectedTensorCount(c)).toBe(expectedTensors(c).length);
    for (const extra of [{}, { tie_word_embeddings: true }]) {
      for (const arch of ['LlamaForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM']) {
        const small = parseModelConfig({ ...base, ...extra, architectures: [arch] });
        expect(expectedTensorCount(small)).toBe(expectedTensors(small).length);
      }
    }
  });
});
