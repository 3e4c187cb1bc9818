/**
 * The models a run measures: the tiny fixture, stories260K from data/models and a wider random
 * model on its tokenizer, and any --model folders. transformers.js needs an ONNX graph beside the weights; a folder without one gets a
 * copy under the temp dir with onnx/model.onnx built from its safetensors (buildDecoderOnnx,
 * the same builder the tests' onnxruntime oracle uses), so the peer runs on the same weights.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { expectedTensors, parseModelConfig, type ModelConfig } from '../../src/models/config';
import { validateTensors } from '../../src/gpu/load';
import { mulberry32 } from '../../src/gpu/random';
import { parseSafetensors, tensorToFloat32, writeSafetensors } from '../../src/models/safetensors';
import { buildDecoderOnnx } from '../../test/fixtures/onnx-decoder';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { resolveDataPath } from '../../test/data-dir';
import type { Maybe, Skipped } from '../lib/types';
import { log, loud } from './log';

export interface BenchModel {
  name: string;
  /** URL-safe name the bench page reaches the folders under. */
  key: string;
  dir: string;
  /** A folder in transformers.js's layout (config.json, onnx/model.onnx) with the same weights. */
  peerDir: Maybe<string>;
  summary: ModelSummary;
}

export interface ModelSummary {
  architecture: string;
  parameters: number;
  hiddenSize: number;
  layers: number;
  vocabSize: number;
}

const PEER_CACHE = join(tmpdir(), 'next-state-lab-bench');
const ONNX_BUILDER = new URL('../../test/fixtures/onnx-decoder.ts', import.meta.url);
/** protobuf's 2 GiB message limit; buildDecoderOnnx stores weights inline. */
const ONNX_INLINE_LIMIT = 1.8e9;
const PEER_FILES = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json'];

async function readConfig(dir: string): Promise<{ raw: Buffer; config: ModelConfig }> {
  const raw = await readFile(join(dir, 'config.json'));
  return { raw, config: parseModelConfig(JSON.parse(raw.toString('utf8'))) };
}

function summarize(config: ModelConfig, raw: Buffer): ModelSummary {
  const parameters = expectedTensors(config).reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
  const arch = (JSON.parse(raw.toString('utf8')) as { architectures?: string[] }).architectures?.[0] ?? 'unknown';
  return { architecture: arch, parameters, hiddenSize: config.hiddenSize, layers: config.numLayers, vocabSize: config.vocabSize };
}

/** The ONNX copy for `dir`, built once per content (config, weights, graph builder). */
async function peerCopy(name: string, dir: string, config: ModelConfig, rawConfig: Buffer): Promise<Maybe<string>> {
  if (existsSync(join(dir, 'onnx', 'model.onnx'))) return dir;
  const weightsPath = join(dir, 'model.safetensors');
  if (!existsSync(weightsPath)) return { skipped: `${dir} has no onnx/model.onnx and no single model.safetensors to build one from` };
  if (4 * expectedTensors(config).reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0) > ONNX_INLINE_LIMIT) {
    return { skipped: 'its f32 weights exceed the 2 GB an inline ONNX file can hold; give a folder with onnx/model.onnx' };
  }
  const weights = await readFile(weightsPath);
  const hash = createHash('sha256')
    .update(rawConfig)
    .update(weights)
    .update(await readFile(ONNX_BUILDER))
    .digest('hex')
    .slice(0, 10);
  const out = join(PEER_CACHE, `${name}-${hash}`);
  return folderOnce(out, `${name}: building an ONNX copy for transformers.js in ${out}`, async (scratch) => {
    const tensors = parseSafetensors(new Uint8Array(weights.buffer, weights.byteOffset, weights.byteLength)).tensors;
    validateTensors(config, tensors, dir);
    await mkdir(join(scratch, 'onnx'), { recursive: true });
    for (const f of PEER_FILES) if (existsSync(join(dir, f))) await copyFile(join(dir, f), join(scratch, f));
    await writeFile(
      join(scratch, 'onnx', 'model.onnx'),
      buildDecoderOnnx(config, (n) => ({ shape: tensors.get(n)!.shape, data: tensorToFloat32(tensors.get(n)!) })),
    );
  });
}

/** The folder `out`, filled by `fill` in a scratch folder and renamed into place unless it exists. */
async function folderOnce(out: string, message: string, fill: (scratch: string) => Promise<void>): Promise<string> {
  if (existsSync(out)) return out;
  log(message);
  const scratch = `${out}.tmp-${process.pid}`;
  await mkdir(scratch, { recursive: true });
  await fill(scratch);
  await rename(scratch, out).catch(async (e) => {
    // Another run built the same folder first; theirs is identical.
    await rm(scratch, { recursive: true, force: true });
    if (!existsSync(out)) throw e;
  });
  return out;
}

/**
 * stories260K's tokenizer with random weights four times as wide (256, 4 layers, MLP 688): a
 * rank-16 adapter on every projection adds 10% to its forward work instead of stories260K's 41%
 * (Qwen2.5-0.5B: 2.5%), so its training/prefill ratio shows the engine where the 0.33 mark's
 * premise (a step costs about three forwards) holds. Speed only: the weights mean nothing.
 */
const WIDE_CONFIG = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 256,
  intermediate_size: 688,
  num_hidden_layers: 4,
  num_attention_heads: 8,
  num_key_value_heads: 4,
  head_dim: 32,
  vocab_size: 512,
  max_position_embeddings: 512,
  rms_norm_eps: 1e-5,
  rope_theta: 10000,
  tie_word_embeddings: true,
  bos_token_id: 1,
  eos_token_id: 2,
  hidden_act: 'silu',
  torch_dtype: 'float32',
};

async function wideModel(stories: string): Promise<string> {
  const out = join(PEER_CACHE, 'stories-wide-random-1');
  return folderOnce(out, `stories-wide-random: writing random weights in ${out}`, async (scratch) => {
    const config = parseModelConfig(WIDE_CONFIG);
    const rand = mulberry32(1);
    const tensors = expectedTensors(config).map((e) => {
      const n = e.shape.reduce((a, b) => a * b, 1);
      const norm = e.shape.length === 1;
      return { name: e.name, shape: e.shape, data: Float32Array.from({ length: n }, () => (norm ? 1 : (rand() - 0.5) * 0.1)) };
    });
    await writeFile(join(scratch, 'config.json'), JSON.stringify(WIDE_CONFIG, null, 2));
    await writeFile(join(scratch, 'model.safetensors'), writeSafetensors(tensors));
    for (const f of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) await copyFile(join(stories, f), join(scratch, f));
  });
}

async function benchModel(name: string, dir: string): Promise<BenchModel> {
  const { raw, config } = await readConfig(dir);
  const key = name.replace(/[^\w.-]/g, '_');
  return { name, key, dir, peerDir: await peerCopy(key, dir, config, raw), summary: summarize(config, raw) };
}

export type ModelEntry = BenchModel | (Skipped & { name: string });

export async function benchModels(extra: string[]): Promise<ModelEntry[]> {
  const tiny = await tinyModel({ family: 'qwen3', onnx: true });
  const out: ModelEntry[] = [await benchModel('tiny-qwen3-fixture', tiny.dir)];
  const stories = resolveDataPath('models/stories260K');
  if (existsSync(join(stories, 'config.json'))) {
    out.push(await benchModel('stories260K', stories));
    out.push(await benchModel('stories-wide-random', await wideModel(stories)));
  } else {
    loud(
      `stories260K not found: ${stories} does not exist, so stories260K is NOT measured. It belongs to the repository's data/models/ (or the folder NEXTSTATE_SHARED names).`,
    );
    out.push({ name: 'stories260K', skipped: `${stories} does not exist` });
  }
  for (const dir of extra) {
    const abs = resolve(dir);
    const ok = await stat(join(abs, 'config.json')).then(
      (s) => s.isFile(),
      () => false,
    );
    if (!ok) {
      loud(`--model ${dir}: no config.json there; not measured`);
      out.push({ name: basename(abs), skipped: `${abs} has no config.json` });
    } else out.push(await benchModel(basename(abs), abs));
  }
  return out;
}
