/**
 * Depth up-scaling that keeps the model's function: after each chosen layer, a copy of it whose
 * output projections (`self_attn.o_proj`, `mlp.down_proj`) are zero. The copy reads the residual
 * stream as the layer it copies does but adds nothing to it, so the deepened model's log-probs are
 * the base's exactly; a fine-tune then has more layers to compose, without first unlearning what
 * the base knows. The storyteller's demo model uses it to copy multi-token names from a hint more
 * surely than five layers do.
 */
import { ModelConfigError, ModelSourceError, WeightsError } from './errors';
import { parseSafetensors, tensorToFloat32, writeSafetensors, type TensorToWrite } from './safetensors';
import type { FileProgress, ModelSource } from './source';

/** The layer keys a copy writes nothing through: its attention's and its MLP's output projections. */
const SILENT = ['self_attn.o_proj.weight', 'mlp.down_proj.weight'];
const LAYER_KEY = /^model\.layers\.(\d+)\.(.+)$/;

/** `after` checked against a model of `layers` layers: distinct layer indices, sorted. */
export function deepenAfter(after: readonly number[], layers: number): number[] {
  const bad = after.find((i) => !Number.isInteger(i) || i < 0 || i >= layers);
  if (bad !== undefined) throw new ModelConfigError(`--deepen names layer ${bad}, but the base has layers 0 to ${layers - 1}; name layers of the base.`);
  if (new Set(after).size !== after.length) throw new ModelConfigError(`--deepen names a layer twice (${after.join(',')}); name each layer once.`);
  return [...after].sort((a, b) => a - b);
}

/** The base's config.json with the added layers counted. */
export function deepenConfig(config: Record<string, unknown>, after: readonly number[]): Record<string, unknown> {
  const layers = config.num_hidden_layers;
  if (typeof layers !== 'number') {
    throw new ModelConfigError('config.json has no num_hidden_layers, so it cannot be deepened; --deepen takes a Llama- or Qwen-style checkpoint.');
  }
  return { ...config, num_hidden_layers: layers + deepenAfter(after, layers).length };
}

/** The base's tensors with a silent copy of each layer in `after` inserted after it, renumbered. */
export function deepenWeights(file: Uint8Array, layers: number, after: readonly number[]): TensorToWrite[] {
  const copied = new Set(deepenAfter(after, layers));
  const tensors = parseSafetensors(file).tensors;
  const byLayer: { key: string; name: string }[][] = Array.from({ length: layers }, () => []);
  const out: TensorToWrite[] = [];
  for (const [name, t] of tensors) {
    const m = LAYER_KEY.exec(name);
    if (!m) out.push({ name, shape: t.shape, data: tensorToFloat32(t) });
    else if (Number(m[1]) < layers) byLayer[Number(m[1])].push({ key: m[2], name });
    else throw new WeightsError(`${name} belongs to no layer of the ${layers} config.json declares; the checkpoint and its config disagree.`);
  }
  let at = 0;
  byLayer.forEach((keys, i) => {
    const missing = SILENT.filter((k) => !keys.some((x) => x.key === k));
    if (missing.length > 0) {
      throw new WeightsError(
        `layer ${i} has no ${missing.join(' or ')}, so a copy of it cannot be made silent; --deepen takes a Llama- or Qwen-style checkpoint.`,
      );
    }
    for (const silent of copied.has(i) ? [false, true] : [false]) {
      for (const { key, name } of keys) {
        const t = tensors.get(name)!;
        const data = silent && SILENT.includes(key) ? new Float32Array(t.shape.reduce((a, b) => a * b, 1)) : tensorToFloat32(t);
        out.push({ name: `model.layers.${at}.${key}`, shape: t.shape, data });
      }
      at++;
    }
  });
  return out;
}

/** A model source that reads as the deepened base: its config and weights rewritten, every other file as it is. */
export class DeepenedSource implements ModelSource {
  readonly id: string;
  constructor(
    private readonly base: ModelSource,
    private readonly after: readonly number[],
  ) {
    this.id = base.id;
  }

  has(name: string): Promise<boolean> {
    return this.base.has(name);
  }

  async bytes(name: string, onProgress?: (p: FileProgress) => void): Promise<Uint8Array> {
    if (name === 'model.safetensors.index.json') {
      throw new ModelSourceError(`${this.id} is sharded; --deepen rewrites a single model.safetensors, so merge the shards first.`);
    }
    if (name !== 'config.json' && name !== 'model.safetensors') return this.base.bytes(name, onProgress);
    // Only the two files the added layers change read the base's config.
    const config = JSON.parse(new TextDecoder().decode(await this.base.bytes('config.json'))) as Record<string, unknown>;
    if (name === 'config.json') return new TextEncoder().encode(JSON.stringify(deepenConfig(config, this.after), null, 2));
    return writeSafetensors(deepenWeights(await this.base.bytes(name, onProgress), config.num_hidden_layers as number, this.after));
  }
}
