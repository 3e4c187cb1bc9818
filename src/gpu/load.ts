/**
 * Loading a checkpoint: config.json, then model.safetensors or a sharded index, every tensor
 * checked against what the config implies before anything is allocated on the device.
 */
import { sizeOf, type Backend } from './backend';
import { expectedTensorCount, expectedTensors, parseModelConfig, type ModelConfig } from '../models/config';
import { WeightsError } from './errors';
import { CausalLM, type Weights } from './model';
import { matrixFormat, type WeightFormat } from './quant';
import { parseSafetensors, tensorSource, type TensorEntry } from '../models/safetensors';
import { sha256Hex } from './sha256';
import { parseJsonFile, readJson, type FileProgress, type ModelSource } from '../models/source';

/** How far storing the weights on the backend has come, in parameters (every tensor's elements). */
export interface ConvertProgress {
  done: number;
  total: number;
  format: WeightFormat;
}

/** What a load reports as it goes: each file's bytes as they arrive, then the weights as they are stored. */
export interface LoadProgress {
  onProgress?: (p: FileProgress) => void;
  onConvert?: (p: ConvertProgress) => void;
}

export interface LoadOptions extends LoadProgress {
  /**
   * How weight matrices are stored (quant.ts); norms and biases stay f32. 'auto' (the default)
   * is f16 on WebGPU (native halves with shader-f16, unpacked from u32 words without) and f32 on
   * the CPU backend, whose ops decode packed weights on every call.
   */
  weightFormat?: 'auto' | WeightFormat;
}

/** The format 'auto' resolves to on a backend. */
export function resolveWeightFormat(want: LoadOptions['weightFormat'], backend: Backend): WeightFormat {
  return !want || want === 'auto' ? (backend.kind === 'webgpu' ? 'f16' : 'f32') : want;
}

export async function loadConfig(source: ModelSource): Promise<ModelConfig> {
  return parseModelConfig(await readJson(source, 'config.json'));
}

/** File name -> SHA-256 hex of what was read, for run files to name the checkpoint by content. */
export type ModelFileHashes = Record<string, string>;

/** Reads a file and records its hash: the hash is of exactly the bytes the model is built from. */
async function readHashed(source: ModelSource, name: string, hashes: ModelFileHashes, onProgress?: (p: FileProgress) => void): Promise<Uint8Array> {
  const bytes = await source.bytes(name, onProgress);
  hashes[name] = await sha256Hex(bytes);
  return bytes;
}

/** Reads every tensor of the checkpoint, from one file or from the shards an index names. */
async function readTensors(source: ModelSource, hashes: ModelFileHashes, onProgress?: (p: FileProgress) => void): Promise<Map<string, TensorEntry>> {
  const files: string[] = [];
  if (await source.has('model.safetensors')) {
    files.push('model.safetensors');
  } else if (await source.has('model.safetensors.index.json')) {
    const name = 'model.safetensors.index.json';
    const index = parseJsonFile(source, name, await readHashed(source, name, hashes, onProgress)) as { weight_map?: Record<string, string> };
    if (!index?.weight_map || typeof index.weight_map !== 'object') {
      throw new WeightsError('model.safetensors.index.json has no weight_map; the download may be incomplete.');
    }
    files.push(...new Set(Object.values(index.weight_map)));
  } else {
    throw new WeightsError(
      `${source.id} has neither model.safetensors nor model.safetensors.index.json; the engine loads safetensors checkpoints (not .bin or .gguf).`,
    );
  }
  const all = new Map<string, TensorEntry>();
  for (const file of files) {
    if (!/^[\w.-]+\.safetensors$/.test(file)) throw new WeightsError(`the index names an unexpected file "${file}"`);
    const parsed = parseSafetensors(await readHashed(source, file, hashes, onProgress), file);
    for (const [name, t] of parsed.tensors) all.set(name, t);
    // Real exports of tied models may store the embedding once under lm_head.weight and name
    // the alias only in metadata (TinyStories-656K does).
    for (const [alias, target] of Object.entries(parsed.metadata)) {
      const t = parsed.tensors.get(target);
      if (t && alias.endsWith('.weight') && !all.has(alias)) all.set(alias, { ...t, name: alias });
    }
  }
  return all;
}

/** Checks names and shapes against the config; one message lists every problem. */
export function validateTensors(config: ModelConfig, tensors: Map<string, TensorEntry>, sourceId: string): void {
  if (config.tieWordEmbeddings && !tensors.has('model.embed_tokens.weight') && tensors.has('lm_head.weight')) {
    tensors.set('model.embed_tokens.weight', { ...tensors.get('lm_head.weight')!, name: 'model.embed_tokens.weight' });
  }
  const mismatch = `Check that config.json and the safetensors come from the same model.`;
  // A count first: a config that implies far more tensors than the file holds is told so in
  // one line, without listing (and naming as missing) every tensor it implies.
  const expected = expectedTensorCount(config);
  if (tensors.size < expected) {
    throw new WeightsError(`${sourceId}: the weights hold ${tensors.size} tensors but config.json implies ${expected}. ${mismatch}`);
  }
  const problems: string[] = [];
  for (const e of expectedTensors(config)) {
    const t = tensors.get(e.name);
    if (!t) problems.push(`missing ${e.name}`);
    else if (t.shape.join(',') !== e.shape.join(',')) {
      problems.push(`${e.name} has shape [${t.shape}] but config.json implies [${e.shape}]`);
    }
  }
  if (problems.length) {
    const shown = problems.slice(0, 8).join('; ') + (problems.length > 8 ? `; and ${problems.length - 8} more` : '');
    throw new WeightsError(`${sourceId}: the weights do not match config.json: ${shown}. ${mismatch}`);
  }
}

export interface LoadedModel {
  model: CausalLM;
  config: ModelConfig;
  weightFormat: WeightFormat;
  /** Bytes of weights as stored on the device (the backend's count of what loading allocated). */
  weightBytes: number;
  /** config.json and every weights file read (the shard index too), by content. */
  files: ModelFileHashes;
}

export async function loadModel(source: ModelSource, backend: Backend, options: LoadOptions = {}): Promise<LoadedModel> {
  const files: ModelFileHashes = {};
  const config = parseModelConfig(parseJsonFile(source, 'config.json', await readHashed(source, 'config.json', files, options.onProgress)));
  const tensors = await readTensors(source, files, options.onProgress);
  validateTensors(config, tensors, source.id);
  const format = resolveWeightFormat(options.weightFormat, backend);
  const weights: Weights = new Map();
  const before = backend.memory().allocated;
  const expected = expectedTensors(config);
  const total = expected.reduce((n, e) => n + sizeOf(e.shape), 0);
  let done = 0;
  options.onConvert?.({ done, total, format });
  try {
    for (const e of expected) {
      // Each tensor is converted a block of rows at a time, straight from the file's bytes.
      const src = tensorSource(tensors.get(e.name)!, source.id);
      // Norm weights and biases are tiny and precision-sensitive; only matrices take the format.
      weights.set(e.name, e.shape.length === 2 ? backend.weight(src, matrixFormat(e.name, format)) : backend.tensor(src.rows(0, e.shape[0]), e.shape));
      done += sizeOf(e.shape);
      options.onConvert?.({ done, total, format });
    }
  } catch (e) {
    for (const w of weights.values()) backend.dispose(w);
    throw e;
  }
  const weightBytes = backend.memory().allocated - before;
  return { model: new CausalLM(backend, config, weights), config, weightFormat: format, weightBytes, files };
}
