/**
 * Size and memory of a policy model before it is downloaded: config.json and HEAD requests for
 * hub models, the files' own sizes for picked folders, and for the models whose config.json the
 * app ships (data/model-configs) nothing at all. The memory figures are the planner's
 * (src/gpu/plan.ts, the same function as `nextstate plan`), fed with the Setup's choices.
 */
import { planMemoryFromJson, type MemoryPlan, type Quantize } from '../../gpu/plan';
import { hubBaseUrl } from '../../models/source';
import type { Recompute } from '../../gpu/model';
import type { BackendKind } from '../../gpu/backend';
import type { FinetuneMode } from '../../rl/presets';

export interface EstimateInput {
  backend: BackendKind;
  /** WebGPU with shader-f16 stores weight matrices in f16; everything else is f32. */
  f16?: boolean;
  loraRank: number;
  loraTargets: readonly string[];
  /** Sequences generated at once (the run loop batches up to 32). */
  batch: number;
  /** Prompt plus answer tokens per sequence. */
  contextTokens: number;
  /** Samples per training step (the preset's batch size); 0 plans serving only. */
  trainSequences: number;
  /** Weight format to plan; default 'f16', what the engine loads ('auto': f16 where the device can). */
  quantize?: Quantize;
  /** Plan per-layer recomputation of activations (TrainSettings.recompute; `nextstate train --recompute layer`). */
  recompute?: Recompute;
  /** The preset's fine-tuning mode: a LoRA adapter (default) or every weight. */
  finetune?: FinetuneMode;
}

/** The policy service trains in micro-batches of this many padded tokens (runtime/policy-service.ts). */
export const LAB_MICRO_BATCH_TOKENS = 2048;
/** A lab run holds three adapters at once: the one being trained, the serving snapshot, and the next one waiting to swap in. */
export const LAB_ADAPTER_COPIES = 3;

/**
 * The memory plan of a lab run: one training step of `trainSequences` x `contextTokens` while a
 * generation batch of `batch` x `contextTokens` is served.
 *
 * @throws Error with the reason when config.json names a model the engine does not run
 */
export function estimateMemory(configJson: unknown, input: EstimateInput): MemoryPlan {
  const full = input.finetune === 'full';
  return planMemoryFromJson(configJson, {
    // Full fine-tuning keeps f32 weights (FullTrainer refuses f16 ones).
    quantize: input.quantize ?? (full ? 'none' : 'f16'),
    backend: input.backend,
    shaderF16: input.f16 === true,
    lora: !full && input.loraRank > 0 && input.loraTargets.length ? { rank: input.loraRank, targets: input.loraTargets } : null,
    full: full ? {} : null,
    adapterCopies: LAB_ADAPTER_COPIES,
    train: input.trainSequences > 0 ? { sequences: input.trainSequences, tokens: Math.max(2, input.contextTokens) } : null,
    microBatchTokens: LAB_MICRO_BATCH_TOKENS,
    recompute: input.recompute ?? 'none',
    generate: { batch: input.batch, tokens: input.contextTokens },
  });
}

/**
 * How a step's sequences fall into micro-batches of at most `per`, in words that add up:
 * 8 in batches of 6 is "2 micro-batches (6 + 2 sequences)", 8 in batches of 8 "1 micro-batch of 8 sequences".
 */
export function microBatchText(sequences: number, per: number): string {
  const full = Math.floor(sequences / per);
  const rest = sequences - full * per;
  const sizes = [...Array<number>(full).fill(per), ...(rest ? [rest] : [])];
  if (sizes.length === 1) return `1 micro-batch of ${sizes[0]} sequence${sizes[0] === 1 ? '' : 's'}`;
  const listed = rest ? `${full > 1 ? `${full} × ${per}` : per} + ${rest}` : `${full} × ${per}`;
  return `${sizes.length} micro-batches (${listed} sequences, one after another)`;
}

const SHIPPED = import.meta.glob('../../../data/model-configs/*.json', { eager: true, import: 'default' }) as Record<string, unknown>;
/** The organisations whose models the shipped configs describe. */
const SHIPPED_ORGS = ['Qwen', 'HuggingFaceTB'];

/**
 * The shipped config.json of a hub model (e.g. Qwen/Qwen3-4B), so its plan shows before any
 * request; null for models the app has no config of.
 */
export function shippedConfig(hubId: string): unknown | null {
  const m = /^([\w-]+)\/([\w.-]+)$/.exec(hubId.trim());
  if (!m || !SHIPPED_ORGS.includes(m[1])) return null;
  const hit = Object.entries(SHIPPED).find(([path]) => path.endsWith(`/${m[2]}.json`));
  return hit ? hit[1] : null;
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
