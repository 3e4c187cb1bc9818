/**
 * Model configuration from a Hugging Face config.json, and the tensors it implies.
 * Every llama-family variant the engine runs differs from Llama in a few flags, so one
 * normalized config drives one forward pass.
 */
import { ModelConfigError, UnsupportedArchitectureError } from './errors';

export type Family = 'llama' | 'qwen2' | 'qwen3';

export interface ModelConfig {
  family: Family;
  /** The architecture string of config.json, kept for messages and exported adapters. */
  architecture: string;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  vocabSize: number;
  maxPositions: number;
  rmsNormEps: number;
  ropeTheta: number;
  tieWordEmbeddings: boolean;
  /** Qwen2 puts biases on q, k and v. */
  qkvBias: boolean;
  /** Qwen3 applies a per-head RMSNorm to q and k before RoPE. */
  qkNorm: boolean;
  bosTokenId: number | null;
  eosTokenIds: number[];
}

const ARCHITECTURES: Record<string, Family> = {
  LlamaForCausalLM: 'llama',
  MistralForCausalLM: 'llama',
  Qwen2ForCausalLM: 'qwen2',
  Qwen3ForCausalLM: 'qwen3',
};
export const SUPPORTED_ARCHITECTURES = Object.keys(ARCHITECTURES);

/**
 * Upper bounds on config.json's dimensions: each several times the largest open model of the
 * families the engine runs, and small enough that a hostile config.json (num_hidden_layers:
 * 1e9) is refused before anything is listed or allocated from it.
 */
export const MAX_DIMENSIONS: Readonly<Record<string, number>> = {
  hidden_size: 65_536,
  intermediate_size: 262_144,
  num_hidden_layers: 1_024,
  num_attention_heads: 1_024,
  num_key_value_heads: 1_024,
  head_dim: 4_096,
  vocab_size: 4_194_304,
  max_position_embeddings: 16_777_216,
};

/**
 * The ranges of config.json's real numbers: every released model is far inside them, and outside
 * them the arithmetic fails in f32 without a word (an epsilon of 1e300 makes every norm 0; a RoPE
 * base of 1e-300 makes every angle infinite).
 */
export const NUMBER_RANGES = {
  rms_norm_eps: [1e-12, 0.1],
  rope_theta: [1, 1e10],
} as const;

/**
 * A config value as the file wrote it; a number JSON cannot write back (1e999 parses to Infinity)
 * is shown as the number it became, not as JSON.stringify's "null".
 */
function found(v: unknown): string {
  return typeof v === 'number' ? String(v) : JSON.stringify(v);
}

export function parseModelConfig(json: unknown): ModelConfig {
  if (typeof json !== 'object' || json === null) throw new ModelConfigError('config.json is not a JSON object.');
  const c = json as Record<string, unknown>;
  const arch = Array.isArray(c.architectures) ? String(c.architectures[0]) : undefined;
  // Own keys only: "constructor" or "__proto__" is a property of every object, not an architecture.
  const family = arch && Object.hasOwn(ARCHITECTURES, arch) ? ARCHITECTURES[arch] : undefined;
  if (!arch || !family) {
    throw new UnsupportedArchitectureError(
      `config.json names architecture ${arch ?? '(none)'}; the engine runs ${SUPPORTED_ARCHITECTURES.join(', ')} ` +
        '(Llama, SmolLM, Qwen2, Qwen3). Pick a model of one of these families.',
    );
  }
  const int = (key: string, fallback?: number): number => {
    const v = c[key] ?? fallback;
    const max = MAX_DIMENSIONS[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0 || v > max) {
      throw new ModelConfigError(`config.json: "${key}" must be a positive integer of at most ${max.toLocaleString('en-US')}, found ${found(c[key])}.`);
    }
    return v;
  };
  const num = (key: keyof typeof NUMBER_RANGES, fallback: number): number => {
    const v = c[key] ?? fallback;
    const [min, max] = NUMBER_RANGES[key];
    if (typeof v !== 'number' || !(v >= min && v <= max)) {
      throw new ModelConfigError(`config.json: "${key}" must be a number from ${min} to ${max}, found ${found(c[key])}.`);
    }
    return v;
  };
  const scaling = c.rope_scaling as { rope_type?: string; type?: string } | null | undefined;
  const ropeType = scaling ? (scaling.rope_type ?? scaling.type) : undefined;
  if (scaling && ropeType !== 'default') {
    throw new UnsupportedArchitectureError(
      `config.json uses rope_scaling "${ropeType}", which the engine does not implement yet; ` +
        'use a model without rope_scaling (e.g. SmolLM2, Qwen2.5-0.5B, Qwen3-0.6B).',
    );
  }
  if (c.mlp_bias === true) {
    throw new UnsupportedArchitectureError('config.json sets mlp_bias; the engine supports bias-free MLPs only.');
  }
  const hiddenSize = int('hidden_size');
  const numHeads = int('num_attention_heads');
  const numKvHeads = int('num_key_value_heads', numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw new ModelConfigError(`config.json: num_attention_heads (${numHeads}) is not a multiple of num_key_value_heads (${numKvHeads}).`);
  }
  const headDim = c.head_dim == null ? hiddenSize / numHeads : int('head_dim');
  if (!Number.isInteger(headDim)) {
    throw new ModelConfigError(`config.json: hidden_size ${hiddenSize} is not divisible by num_attention_heads ${numHeads}.`);
  }
  if (headDim % 2 !== 0) throw new ModelConfigError(`config.json: head_dim ${headDim} must be even for RoPE.`);
  const eos = c.eos_token_id;
  const eosTokenIds = Array.isArray(eos) ? eos.filter((x): x is number => typeof x === 'number') : typeof eos === 'number' ? [eos] : [];
  return {
    family,
    architecture: arch,
    hiddenSize,
    intermediateSize: int('intermediate_size'),
    numLayers: int('num_hidden_layers'),
    numHeads,
    numKvHeads,
    headDim,
    vocabSize: int('vocab_size'),
    maxPositions: int('max_position_embeddings', 2048),
    rmsNormEps: num('rms_norm_eps', 1e-6),
    ropeTheta: num('rope_theta', 10000),
    // LlamaConfig, Qwen2Config and Qwen3Config all default tie_word_embeddings to false.
    tieWordEmbeddings: c.tie_word_embeddings === true,
    qkvBias: family === 'qwen2' || c.attention_bias === true,
    qkNorm: family === 'qwen3',
    bosTokenId: typeof c.bos_token_id === 'number' ? c.bos_token_id : null,
    eosTokenIds,
  };
}

export interface ExpectedTensor {
  name: string;
  shape: number[];
}

/** The projections LoRA can target, by their HF module names. */
export const PROJECTIONS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type Projection = (typeof PROJECTIONS)[number];

/** [out, in] of a projection's weight, as nn.Linear stores it. */
export function projectionShape(c: ModelConfig, p: Projection): [number, number] {
  const D = c.hiddenSize;
  switch (p) {
    case 'q_proj':
      return [c.numHeads * c.headDim, D];
    case 'k_proj':
    case 'v_proj':
      return [c.numKvHeads * c.headDim, D];
    case 'o_proj':
      return [D, c.numHeads * c.headDim];
    case 'gate_proj':
    case 'up_proj':
      return [c.intermediateSize, D];
    case 'down_proj':
      return [D, c.intermediateSize];
  }
}

export function projectionModule(p: Projection): 'self_attn' | 'mlp' {
  return p === 'gate_proj' || p === 'up_proj' || p === 'down_proj' ? 'mlp' : 'self_attn';
}

/** Every tensor the forward pass reads, with the checkpoint key as its name (nanoGPT's habit). */
export function expectedTensors(c: ModelConfig): ExpectedTensor[] {
  const D = c.hiddenSize;
  const out: ExpectedTensor[] = [{ name: 'model.embed_tokens.weight', shape: [c.vocabSize, D] }];
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    out.push({ name: `${p}.input_layernorm.weight`, shape: [D] });
    for (const proj of PROJECTIONS) {
      out.push({ name: `${p}.${projectionModule(proj)}.${proj}.weight`, shape: projectionShape(c, proj) });
    }
    if (c.qkvBias) {
      for (const proj of ['q_proj', 'k_proj', 'v_proj'] as const) {
        out.push({ name: `${p}.self_attn.${proj}.bias`, shape: [projectionShape(c, proj)[0]] });
      }
    }
    if (c.qkNorm) {
      out.push({ name: `${p}.self_attn.q_norm.weight`, shape: [c.headDim] });
      out.push({ name: `${p}.self_attn.k_norm.weight`, shape: [c.headDim] });
    }
    out.push({ name: `${p}.post_attention_layernorm.weight`, shape: [D] });
  }
  out.push({ name: 'model.norm.weight', shape: [D] });
  if (!c.tieWordEmbeddings) out.push({ name: 'lm_head.weight', shape: [c.vocabSize, D] });
  return out;
}

/** expectedTensors(c).length, without listing them. */
export function expectedTensorCount(c: ModelConfig): number {
  const perLayer = 2 + PROJECTIONS.length + (c.qkvBias ? 3 : 0) + (c.qkNorm ? 2 : 0);
  return 2 + c.numLayers * perLayer + (c.tieWordEmbeddings ? 0 : 1);
}

export function parameterCount(c: ModelConfig): number {
  return expectedTensors(c).reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
}
