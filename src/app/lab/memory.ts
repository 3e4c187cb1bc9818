/**
 * Size and memory of a policy model before it is downloaded: config.json and HEAD requests for
 * hub models, the files' own sizes for picked folders. The estimate is deliberately rough (it
 * says "about"): weights x bytes per weight, plus LoRA training state, KV cache and training
 * activations, so a person can tell a 100 MB model from a 4 GB one before waiting for it.
 */
import { parameterCount, parseModelConfig, projectionShape, PROJECTIONS, type ModelConfig, type Projection } from '../../gpu/config';
import { hubBaseUrl } from '../../gpu/source';

export interface EstimateInput {
  backend: 'webgpu' | 'cpu';
  /** WebGPU with shader-f16 stores weight matrices in f16; everything else is f32. */
  f16?: boolean;
  loraRank: number;
  loraTargets: readonly string[];
  /** Sequences generated at once (the run loop batches up to 32). */
  batch: number;
  /** Prompt plus answer tokens per sequence. */
  contextTokens: number;
}

export interface MemoryEstimate {
  architecture: string;
  parameters: number;
  /** Weights on the device. */
  weightBytes: number;
  /** LoRA weights, gradients, Adam moments and the serving snapshot. */
  loraBytes: number;
  /** KV cache for one generation batch. */
  kvBytes: number;
  /** Activations and logits of one training micro-batch (2048 tokens). */
  trainBytes: number;
  totalBytes: number;
}

/** The engine trains in micro-batches of this many tokens (policy-service.ts). */
const MICRO_BATCH_TOKENS = 2048;
const F32 = 4;

export function estimateMemory(configJson: unknown, input: EstimateInput): MemoryEstimate {
  const c: ModelConfig = parseModelConfig(configJson);
  const parameters = parameterCount(c);
  const f16 = input.backend === 'webgpu' && input.f16 === true;
  const weightBytes = parameters * (f16 ? 2 : F32);
  const targets = input.loraTargets.filter((t): t is Projection => (PROJECTIONS as readonly string[]).includes(t));
  const loraParams = c.numLayers * targets.reduce((n, p) => n + input.loraRank * projectionShape(c, p).reduce((a, b) => a + b, 0), 0);
  // Training copy, serving snapshot, pending swap, gradient, Adam m and v.
  const loraBytes = loraParams * F32 * 6;
  const kvBytes = 2 * c.numLayers * c.numKvHeads * c.headDim * input.contextTokens * input.batch * F32;
  // Per token: a dozen hidden-sized activations per layer kept for backward, plus the logits.
  const trainBytes = MICRO_BATCH_TOKENS * (c.hiddenSize * c.numLayers * 12 + c.intermediateSize * c.numLayers * 3 + c.vocabSize * 2) * F32;
  return {
    architecture: c.architecture,
    parameters,
    weightBytes,
    loraBytes,
    kvBytes,
    trainBytes,
    totalBytes: weightBytes + loraBytes + kvBytes + trainBytes,
  };
}

export interface ModelFiles {
  /** File name -> bytes; null where the size could not be read. */
  files: Record<string, number | null>;
  /** Sum of the known sizes. */
  totalBytes: number;
  /** Files the engine needs that are missing. */
  missing: string[];
  config: unknown | null;
}

const NEEDED = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];

/** What a picked folder holds: sizes from the File objects, config.json read locally. */
export async function pickedModelFiles(files: readonly File[]): Promise<ModelFiles> {
  const byName = new Map(files.map((f) => [f.name.split('/').pop()!, f]));
  const sizes: Record<string, number | null> = {};
  for (const [name, f] of byName) sizes[name] = f.size;
  const missing = NEEDED.filter((n) => !byName.has(n));
  if (!byName.has('model.safetensors') && !byName.has('model.safetensors.index.json')) missing.push('model.safetensors');
  let config: unknown = null;
  const cf = byName.get('config.json');
  if (cf) {
    try {
      config = JSON.parse(await cf.text());
    } catch {
      config = null;
    }
  }
  return { files: sizes, totalBytes: files.reduce((n, f) => n + f.size, 0), missing, config };
}

/** Size of a hub file from a HEAD request: the LFS size header, else Content-Length. */
function sizeOf(res: Response): number | null {
  const n = Number(res.headers.get('x-linked-size') ?? res.headers.get('content-length'));
  return Number.isFinite(n) && n > 0 ? n : null;
}

function isHtml(res: Response): boolean {
  return (res.headers.get('content-type') ?? '').startsWith('text/html');
}

/**
 * config.json and the sizes of the files the engine will download, without downloading them.
 *
 * @throws Error with a message for the person when the model cannot be reached or has no config
 */
export async function hubModelFiles(idOrUrl: string, fetchFn: typeof fetch = (i, init) => fetch(i, init), signal?: AbortSignal): Promise<ModelFiles> {
  const base = hubBaseUrl(idOrUrl.trim());
  const get = (name: string, init: RequestInit = {}) => fetchFn(`${base}/${name}`, { ...init, signal });
  let configRes: Response;
  try {
    configRes = await get('config.json');
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new Error(`Could not reach ${base} (${(e as Error).message}). Check the network, or load the model from a folder.`, { cause: e });
  }
  if (!configRes.ok || isHtml(configRes)) {
    const gated = configRes.status === 401 || configRes.status === 403 ? ' The model may be gated: load it from a folder instead.' : '';
    throw new Error(`${idOrUrl} has no config.json (HTTP ${configRes.status}).${gated}`);
  }
  const config: unknown = await configRes.json();
  const files: Record<string, number | null> = { 'config.json': Number(configRes.headers.get('content-length')) || null };
  const head = async (name: string): Promise<Response | null> => {
    try {
      const res = await get(name, { method: 'HEAD' });
      return res.ok && !isHtml(res) ? res : null;
    } catch (e) {
      if ((e as Error).name === 'AbortError') throw e;
      return null;
    }
  };
  const missing: string[] = [];
  const weights = await head('model.safetensors');
  if (weights) {
    files['model.safetensors'] = sizeOf(weights);
  } else {
    const index = await get('model.safetensors.index.json').catch(() => null);
    if (index?.ok && !isHtml(index)) {
      const map = ((await index.json()) as { weight_map?: Record<string, string> }).weight_map ?? {};
      for (const shard of new Set(Object.values(map))) {
        const res = await head(shard);
        files[shard] = res && sizeOf(res);
      }
    } else {
      missing.push('model.safetensors');
    }
  }
  for (const name of ['tokenizer.json', 'tokenizer_config.json']) {
    const res = await head(name);
    if (res) files[name] = sizeOf(res);
    else missing.push(name);
  }
  const totalBytes = Object.values(files).reduce<number>((n, b) => n + (b ?? 0), 0);
  return { files, totalBytes, missing, config };
}
