/**
 * The model shapes the device bench measures, from the config.json files in data/model-configs
 * (compiled into the bundle, so nothing but the bundle travels). Weights are random: the figures
 * are speed and memory, which depend on the shape alone.
 */
import { parameterCount, parseModelConfig, type ModelConfig } from '../../src/models/config';
import qwen25 from '../../data/model-configs/Qwen2.5-0.5B.json';
import qwen3 from '../../data/model-configs/Qwen3-4B.json';
import type { ShapeName } from './args';

export interface Shape {
  name: ShapeName;
  /** The config.json it copies, or shrinks in --quick. */
  from: string;
  config: ModelConfig;
}

const SOURCES: Record<ShapeName, { from: string; json: Record<string, unknown> }> = {
  '0.5b': { from: 'data/model-configs/Qwen2.5-0.5B.json', json: qwen25 },
  '4b': { from: 'data/model-configs/Qwen3-4B.json', json: qwen3 },
};

/**
 * --quick keeps each config's family and flags (Qwen2's q/k/v biases, Qwen3's q/k norms, tied
 * embeddings), so the same kernels run, at sizes a CPU emulator gets through in seconds: a
 * 152k-token vocabulary alone makes one SwiftShader decode step take seconds.
 */
const QUICK: Record<ShapeName, Record<string, number>> = {
  '0.5b': { hidden_size: 64, intermediate_size: 192, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, vocab_size: 512 },
  '4b': { hidden_size: 128, intermediate_size: 256, num_hidden_layers: 2, num_attention_heads: 8, num_key_value_heads: 2, head_dim: 16, vocab_size: 512 },
};

export function deviceShape(name: ShapeName, quick: boolean): Shape {
  const { from, json } = SOURCES[name];
  return {
    name,
    from: quick ? `${from}, shrunk by --quick` : from,
    config: parseModelConfig(quick ? { ...json, ...QUICK[name] } : json),
  };
}

export function shapeSummary(s: Shape) {
  const c = s.config;
  return {
    from: s.from,
    architecture: c.architecture,
    parameters: parameterCount(c),
    hiddenSize: c.hiddenSize,
    intermediateSize: c.intermediateSize,
    layers: c.numLayers,
    heads: c.numHeads,
    kvHeads: c.numKvHeads,
    headDim: c.headDim,
    vocabSize: c.vocabSize,
    tiedEmbeddings: c.tieWordEmbeddings,
  };
}
