/**
 * Full fine-tuning's files. The trained model leaves as a complete Hugging Face folder:
 * config.json and the tokenizer files copied from the model it started from, and
 * model.safetensors under the checkpoint's own key names (a tied model stored only as
 * lm_head.weight stays so), so it loads unchanged in the engine and in transformers. The
 * optimizer's state travels beside it as optimizer.safetensors, for resuming.
 */
import type { Backend, Tensor } from './backend';
import { expectedTensors, parameterCount, type ModelConfig } from '../models/config';
import { EngineError, FullTrainingMemoryError, WeightsError } from './errors';
import { CausalLM } from './model';
import { finiteTensor, parseSafetensors, tensorToFloat32, writeSafetensors, type TensorEntry, type TensorToWrite } from '../models/safetensors';
import type { ModelSource } from '../models/source';
import type { OptimizerState } from './train-types';

export const MODEL_WEIGHTS = 'model.safetensors';
export const OPTIMIZER_FILE = 'optimizer.safetensors';

/**
 * What a model folder carries besides its weights and is copied as it is: the config, the
 * generation defaults, every tokenizer file transformers reads, and the licence.
 */
export const COPIED_FILES = [
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'tokenizer.model',
  'vocab.json',
  'merges.txt',
  'chat_template.jinja',
  'chat_template.json',
  'LICENSE',
  'LICENSE.md',
  'LICENSE.txt',
] as const;

/** The checkpoint's tensors and metadata as stored: one file, or the shards an index names. */
async function checkpointTensors(source: ModelSource): Promise<{ tensors: TensorEntry[]; metadata: Record<string, string> }> {
  let files = [MODEL_WEIGHTS];
  if (!(await source.has(MODEL_WEIGHTS))) {
    const index = JSON.parse(new TextDecoder().decode(await source.bytes('model.safetensors.index.json'))) as { weight_map?: Record<string, string> };
    files = [...new Set(Object.values(index.weight_map ?? {}))];
  }
  const tensors: TensorEntry[] = [];
  const metadata: Record<string, string> = {};
  for (const f of files) {
    const parsed = parseSafetensors(await source.bytes(f), f);
    tensors.push(...parsed.tensors.values());
    Object.assign(metadata, parsed.metadata);
  }
  return { tensors, metadata };
}

/**
 * The model's current weights under the checkpoint's key names, in the checkpoint's order. A key
 * the engine holds is written from the device; a tied LM head stored as lm_head.weight (or an
 * alias the metadata names) from the embedding; a tensor the engine does not use is kept as it
 * was. Every weight of the model is written under one key or another.
 */
export async function checkpointWeights(model: CausalLM, source: ModelSource): Promise<Uint8Array> {
  const { tensors, metadata } = await checkpointTensors(source);
  const engineName = (key: string): string | undefined => {
    if (model.weights.has(key)) return key;
    if (key === 'lm_head.weight' && model.config.tieWordEmbeddings) return 'model.embed_tokens.weight';
    return Object.entries(metadata).find(([alias, target]) => target === key && model.weights.has(alias))?.[0];
  };
  const names = tensors.map((t) => engineName(t.name));
  const covered = new Set(names);
  const missing = expectedTensors(model.config).filter((e) => !covered.has(e.name));
  const onDevice = [...names.filter((n): n is string => n !== undefined), ...missing.map((e) => e.name)];
  const data = await Promise.all(onDevice.map((n) => model.backend.read(model.w(n))));
  const read = new Map(onDevice.map((n, i) => [n, data[i]]));
  const out: TensorToWrite[] = tensors.map((t, i) => ({
    name: t.name,
    shape: t.shape,
    data: names[i] ? read.get(names[i]!)! : tensorToFloat32(t),
  }));
  for (const e of missing) out.push({ name: e.name, shape: e.shape, data: read.get(e.name)! });
  return writeSafetensors(out, { format: 'pt', ...metadata });
}

/**
 * The files of a complete Hugging Face folder for the trained model: file name -> bytes.
 * config.json says float32, the dtype the weights are written in.
 */
export async function fullModelFolder(model: CausalLM, source: ModelSource): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  for (const name of COPIED_FILES) {
    if (!(await source.has(name))) continue;
    let bytes = await source.bytes(name);
    if (name === 'config.json') {
      const config = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
      if ((config.torch_dtype !== undefined && config.torch_dtype !== 'float32') || (config.dtype !== undefined && config.dtype !== 'float32')) {
        if (config.torch_dtype !== undefined) config.torch_dtype = 'float32';
        if (config.dtype !== undefined) config.dtype = 'float32';
        bytes = new TextEncoder().encode(JSON.stringify(config, null, 2) + '\n');
      }
    }
    files.set(name, bytes);
  }
  if (!files.has('config.json')) throw new WeightsError(`${source.id} has no config.json to copy into the trained model's folder`);
  files.set(MODEL_WEIGHTS, await checkpointWeights(model, source));
  return files;
}

const STATE_FORMAT = 'nextstate-adamw';

/** The optimizer's state as safetensors: `${name}.exp_avg` and `${name}.exp_avg_sq` (torch's names), the step in metadata. */
export function optimizerToSafetensors(state: OptimizerState, shapes: (name: string) => readonly number[]): Uint8Array {
  const tensors: TensorToWrite[] = [];
  for (const [name, { m, v }] of state.moments) {
    const shape = [...shapes(name)];
    tensors.push({ name: `${name}.exp_avg`, shape, data: m }, { name: `${name}.exp_avg_sq`, shape, data: v });
  }
  return writeSafetensors(tensors, { format: STATE_FORMAT, step: String(state.step) });
}

/**
 * The most steps an optimizer state may have taken: far past any run, and a bound on what a
 * hostile file may claim (a step of 1e20 is an integer too).
 */
export const MAX_OPTIMIZER_STEP = 100_000_000;

/**
 * Reads optimizer.safetensors back: the format, a plausible step count, every exp_avg with its
 * exp_avg_sq of the same shape, and nothing else. The trainer checks every name, shape and value
 * against its parameters (Trainer.restoreOptimizer).
 *
 * @throws WeightsError naming what is wrong
 */
export function optimizerFromSafetensors(bytes: Uint8Array): OptimizerState {
  const { tensors, metadata } = parseSafetensors(bytes, OPTIMIZER_FILE);
  const step = /^\d{1,12}$/.test(String(metadata.step)) ? Number(metadata.step) : NaN;
  if (metadata.format !== STATE_FORMAT || !(step <= MAX_OPTIMIZER_STEP)) {
    throw new WeightsError(
      `${OPTIMIZER_FILE} is not an optimizer state written by nextstate train --full (format ${String(metadata.format)}, step ${String(metadata.step)}; ` +
        `the step must be a whole number up to ${MAX_OPTIMIZER_STEP.toLocaleString('en-US')})`,
    );
  }
  const moments: OptimizerState['moments'] = new Map();
  for (const [key, t] of tensors) {
    const name = /^(.*)\.exp_avg(_sq)?$/.exec(key);
    if (!name)
      throw new WeightsError(`${OPTIMIZER_FILE} holds ${key}, which is neither an exp_avg nor an exp_avg_sq; it was not written by nextstate train --full`);
    if (name[2]) continue;
    const sq = tensors.get(`${name[1]}.exp_avg_sq`);
    if (!sq) throw new WeightsError(`${OPTIMIZER_FILE} has ${key} but not ${name[1]}.exp_avg_sq`);
    if (sq.shape.join(',') !== t.shape.join(',')) {
      throw new WeightsError(`${OPTIMIZER_FILE}: ${name[1]}.exp_avg has shape [${t.shape}] but its exp_avg_sq [${sq.shape}]; the file is damaged`);
    }
    moments.set(name[1], { m: finiteTensor(t, OPTIMIZER_FILE), v: finiteTensor(sq, OPTIMIZER_FILE), shape: t.shape });
  }
  for (const key of tensors.keys()) {
    const base = key.replace(/\.exp_avg_sq$/, '');
    if (base !== key && !moments.has(base)) throw new WeightsError(`${OPTIMIZER_FILE} has ${key} but not ${base}.exp_avg`);
  }
  return { step, moments };
}

/** The shape of a named parameter of the model (optimizer files name them by checkpoint key). */
export function parameterShape(model: CausalLM): (name: string) => readonly number[] {
  return (name) => model.w(name).shape;
}

/** Bytes full fine-tuning holds for `parameters` f32 weights: weights, gradients and AdamW's two moments. */
export function fullTrainingBytes(parameters: number, copies = 0): number {
  return parameters * 4 * (4 + copies);
}

const GB = (n: number) => `${(n / 1e9).toFixed(n < 1e8 ? 3 : 1)} GB`;

/**
 * Says before anything is allocated whether full fine-tuning of this model fits: every weight
 * in one buffer (a kernel binds a parameter, its gradient and moments whole) and, when the
 * device's memory is known, weights + gradients + two moments (+ `copies` frozen or serving
 * copies of the weights) within it.
 *
 * @throws FullTrainingMemoryError, one line saying what is needed and what to do
 */
export function checkFullTrainingFits(config: ModelConfig, o: { memoryBytes?: number; maxBufferBytes?: number; copies?: number }): void {
  const need = fullTrainingBytes(parameterCount(config), o.copies ?? 0);
  if (o.memoryBytes !== undefined && need > o.memoryBytes) {
    throw new FullTrainingMemoryError(
      `full fine-tuning of this ${config.architecture} needs about ${GB(need)} (f32 weights, gradients and AdamW's two moments${o.copies ? `, ${o.copies} more weight cop${o.copies > 1 ? 'ies' : 'y'}` : ''}) but ${GB(o.memoryBytes)} is available; train LoRA instead`,
    );
  }
  if (o.maxBufferBytes !== undefined) {
    const big = expectedTensors(config).find((e) => e.shape.reduce((a, b) => a * b, 1) * 4 > o.maxBufferBytes!);
    if (big) {
      throw new FullTrainingMemoryError(
        `full fine-tuning: ${big.name} [${big.shape}] in f32 is larger than this device's ${GB(o.maxBufferBytes)} buffer limit; train LoRA instead`,
      );
    }
  }
}

/** A copy of the model's weights on the same backend, in f32: the frozen reference of the KL term. */
export function copyWeights(be: Backend, model: CausalLM): Map<string, Tensor> {
  const out = new Map<string, Tensor>();
  for (const [name, t] of model.weights) {
    if (t.dtype !== 'f32') throw new EngineError(`copyWeights: ${name} is ${t.dtype}; use copyModelF32`);
    // x + 0 * x on the device: no readback.
    out.set(name, be.add(t, t, 0));
  }
  return out;
}

/**
 * A model of its own with f32 copies of `model`'s weights: what full fine-tuning trains and
 * serves while the loaded model stays the frozen initial policy. f32 weights are copied on the
 * device; packed ones (f16, q8, q4) are read back decoded and stored as f32.
 */
export async function copyModelF32(model: CausalLM): Promise<CausalLM> {
  const be = model.backend;
  const out = new Map<string, Tensor>();
  for (const [name, t] of model.weights) {
    out.set(name, t.dtype !== 'f32' ? be.tensor(await be.read(t), t.shape) : be.add(t, t, 0));
  }
  return new CausalLM(be, model.config, out);
}

/** Frees a model's weights (a copy made by copyModelF32; never the loaded model while it serves). */
export function disposeModel(model: CausalLM): void {
  for (const t of model.weights.values()) model.backend.dispose(t);
}
