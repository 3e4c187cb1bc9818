import type { ChatMessage } from '../rl/messages';
import { renderChat, type TemplateTokenizer } from '../models/chat-template';
import { cappedResponse } from '../models/read-body';
import { modelFileLimit } from '../models/source';
import type { GenerateOptions, GeneratorSource, TextGenerator } from './generator';
import { cutAtStop, seededDraw, stopIndex } from './sampling';
import { BadModelConfigError, BadTokenizerError, NoOnnxWeightsError, TransformersLoadError, oneLine } from './transformers-errors';

// Types only: the library (and onnxruntime) loads when a model is first loaded, so importing
// this module costs nothing for runs that never use it.
import type { PreTrainedModel, PreTrainedTokenizer, ProgressInfo, Tensor } from '@huggingface/transformers';

export { BadModelConfigError, BadTokenizerError, NoOnnxWeightsError, TransformersLoadError } from './transformers-errors';

/** Where transformers.js runs a model, and the weight variants it loads: the one lists, which the run config's checker reads. */
export const TRANSFORMERS_DEVICES = ['webgpu', 'wasm'] as const;
export type TransformersDevice = (typeof TRANSFORMERS_DEVICES)[number];
export const TRANSFORMERS_DTYPES = ['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'bnb4', 'q4f16'] as const;
export type TransformersDtype = (typeof TRANSFORMERS_DTYPES)[number];

/** Byte progress of one model file, as the download reports it. */
export interface DownloadProgress {
  file: string;
  status: 'initiate' | 'download' | 'progress' | 'done';
  loaded: number;
  total: number;
  /** The file came from the browser's Cache Storage (an earlier load), not from the network. */
  fromCache: boolean;
}

/** One file of a picked model folder, by its path inside the folder ("onnx/model.onnx"). */
export interface PickedFile {
  path: string;
  file: Blob;
}

export interface TransformersConfig {
  /** A Hugging Face model id with ONNX weights (`onnx-community/Qwen3-0.6B-ONNX`), or a picked folder's name. */
  modelId: string;
  /** Default: WebGPU where an adapter is available, else WASM. */
  device?: TransformersDevice;
  /** ONNX weight variant. Default: for a picked folder the variant it holds, else the library's (q8 on WASM, fp32 on WebGPU). */
  dtype?: TransformersDtype;
  /** Serve models from this path on the page's origin (a path such as `/models/`, not a URL). */
  localModelPath?: string;
  /** A picked folder's files: the model loads from them and nothing is fetched or cached. */
  files?: PickedFile[];
  /** onnxruntime-web's WASM as served by the app, so that it does not come from a CDN. */
  wasmPaths?: string | { mjs: string; wasm: string };
  allowRemoteModels?: boolean;
  onProgress?: (progress: DownloadProgress) => void;
  label?: string;
}

/** WebGPU when this browser or worker offers an adapter, else WASM. */
export async function pickDevice(): Promise<TransformersDevice> {
  return (await adapterFeatures()) ? 'webgpu' : 'wasm';
}

async function adapterFeatures(): Promise<ReadonlySet<string> | null> {
  const gpu = (globalThis.navigator as Navigator | undefined)?.gpu;
  if (!gpu) return null;
  try {
    const adapter = await gpu.requestAdapter();
    return adapter ? new Set(adapter.features as unknown as Iterable<string>) : null;
  } catch {
    return null;
  }
}

/** The file name suffix transformers.js gives each variant under onnx/. */
const SUFFIX: Record<TransformersDtype, string> = {
  fp32: '',
  fp16: '_fp16',
  q8: '_quantized',
  int8: '_int8',
  uint8: '_uint8',
  q4: '_q4',
  bnb4: '_bnb4',
  q4f16: '_q4f16',
};

/** Smallest first that the device runs well; f16 variants only where the adapter has shader-f16. */
const PREFERENCE: Record<TransformersDevice, TransformersDtype[]> = {
  wasm: ['q8', 'q4', 'int8', 'uint8', 'bnb4', 'fp32', 'fp16', 'q4f16'],
  webgpu: ['q4f16', 'fp16', 'q4', 'fp32', 'q8', 'int8', 'uint8', 'bnb4'],
};

/** The ONNX variant a picked folder holds that suits `device`; null when it holds none. */
export function dtypeInFolder(paths: readonly string[], device: TransformersDevice, shaderF16 = true): TransformersDtype | null {
  const names = new Set(paths.filter((p) => p.startsWith('onnx/')).map((p) => p.slice('onnx/'.length)));
  const has = (d: TransformersDtype) => names.has(`model${SUFFIX[d]}.onnx`);
  const order = PREFERENCE[device].filter((d) => shaderF16 || device !== 'webgpu' || !d.includes('16'));
  return order.find(has) ?? PREFERENCE[device].find(has) ?? null;
}

/**
 * The variant transformers.js loads when asked for `dtype`: the one asked for, else the model's
 * config.json `transformers.js_config` (per device, then overall), else its default per device.
 */
export function effectiveDtype(dtype: TransformersDtype | undefined, modelConfig: unknown, device: TransformersDevice): TransformersDtype {
  if (dtype) return dtype;
  type JsConfig = { dtype?: unknown; device_config?: Record<string, { dtype?: unknown }> };
  const js = ((modelConfig as Record<string, unknown> | null)?.['transformers.js_config'] ?? {}) as JsConfig;
  const configured = js.device_config?.[device]?.dtype ?? js.dtype;
  const named = typeof configured === 'string' ? configured : (configured as Record<string, unknown> | undefined)?.model;
  if (typeof named === 'string' && Object.hasOwn(SUFFIX, named)) return named as TransformersDtype;
  return device === 'wasm' ? 'q8' : 'fp32';
}

/** Where picked files appear to the library: a path no server answers, served by our own fetch. */
const PICKED_ROOT = '/__picked-model__/';

type Library = typeof import('@huggingface/transformers');
type LogitsTensor = { data: Float32Array; dims: number[] };

/**
 * A frozen model served by transformers.js, for judges and simulated users. Chat models are
 * prompted through their chat template; models without one (TinyStories) get the messages' text
 * joined, which they continue. Sampling runs transformers.js's own logits processors and then the
 * project's seeded draw (sampling.ts), so a call with a seed repeats, even beside other calls.
 */
export class TransformersGenerator implements TextGenerator {
  readonly kind = 'transformers' as const;
  readonly source: GeneratorSource;

  private constructor(
    readonly label: string,
    readonly device: TransformersDevice,
    readonly dtype: TransformersDtype,
    private readonly tokenizer: PreTrainedTokenizer,
    private readonly model: PreTrainedModel,
    private readonly library: Library,
    modelName: string,
  ) {
    this.source = { kind: 'transformers', library: `@huggingface/transformers ${library.env.version}`, device, model: modelName, dtype };
  }

  static async load(config: TransformersConfig): Promise<TransformersGenerator> {
    const library = await import('@huggingface/transformers');
    const { env, AutoConfig, AutoTokenizer, AutoModelForCausalLM } = library;
    const model = config.modelId;
    const files = config.files && new Map(config.files.map((f) => [f.path.replace(/^\/+/, ''), f.file]));
    // The cache's blob: factory would need a CSP that lets workers run blob: scripts.
    env.useWasmCache = false;
    const wasm = env.backends.onnx.wasm;
    if (config.wasmPaths !== undefined && wasm) wasm.wasmPaths = config.wasmPaths;
    libraryFetch ??= env.fetch as typeof fetch;
    env.fetch = missingAsNotFound(libraryFetch) as typeof env.fetch;
    let modelId = model;
    if (files) {
      modelId = 'picked';
      env.localModelPath = PICKED_ROOT;
      env.allowLocalModels = true;
      env.allowRemoteModels = false;
      // The files are on this machine already: a copy in Cache Storage would only double them.
      env.useBrowserCache = false;
      env.fetch = pickedFetch(files, `${PICKED_ROOT}${modelId}/`, env.fetch as typeof fetch) as typeof env.fetch;
      if (!files.has('config.json')) throw new BadModelConfigError(model, 'is missing');
    } else {
      if (config.localModelPath !== undefined) {
        env.localModelPath = config.localModelPath;
        // Off by default in browsers: a served folder is a local model.
        env.allowLocalModels = true;
      }
      if (config.allowRemoteModels !== undefined) env.allowRemoteModels = config.allowRemoteModels;
    }
    const features = await adapterFeatures();
    const device = config.device ?? (features ? 'webgpu' : 'wasm');
    let dtype = config.dtype;
    if (files && !dtype) {
      dtype = dtypeInFolder([...files.keys()], device, features?.has('shader-f16') ?? false) ?? undefined;
      if (!dtype) throw new NoOnnxWeightsError(model, 'onnx/model*.onnx');
    }
    const cached = files ? new Set<string>() : await cachedUrls(env.cacheKey, env.useBrowserCache);
    const progress_callback = config.onProgress && forwardProgress(config.onProgress, (file) => isCached(cached, modelId, file));

    let modelConfig: Awaited<ReturnType<typeof AutoConfig.from_pretrained>>;
    try {
      modelConfig = await AutoConfig.from_pretrained(modelId, { progress_callback });
    } catch (error) {
      throw configError(model, error);
    }
    if (!(modelConfig as { model_type?: unknown }).model_type) throw new BadModelConfigError(model, 'names no model_type');
    let tokenizer: PreTrainedTokenizer;
    try {
      tokenizer = await AutoTokenizer.from_pretrained(modelId, { progress_callback });
    } catch (error) {
      throw new BadTokenizerError(model, oneLine(error));
    }
    let loaded: PreTrainedModel;
    try {
      loaded = await AutoModelForCausalLM.from_pretrained(modelId, { device, dtype, config: modelConfig, progress_callback });
    } catch (error) {
      const text = oneLine(error);
      const wanted = `onnx/model${SUFFIX[effectiveDtype(dtype, modelConfig, device)]}.onnx`;
      if (/\.onnx/.test(text) && /not found|could not locate|404|missing/i.test(text)) throw new NoOnnxWeightsError(model, wanted);
      throw new TransformersLoadError(
        `Could not load ${model} on ${device}${dtype ? ` (${dtype})` : ''}: ${text}. Check that it has ONNX weights for transformers.js, or try the other device or dtype.`,
      );
    }
    yieldBeforeEachForward(loaded);
    const ran = effectiveDtype(dtype, modelConfig, device);
    const label = config.label ?? `transformers.js: ${model} (${device}, ${ran})`;
    return new TransformersGenerator(label, device, ran, tokenizer, loaded, library, model);
  }

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    opts.signal?.throwIfAborted();
    const { InterruptableStoppingCriteria, TemperatureLogitsWarper } = this.library;
    const prompt = this.tokenizer.chat_template
      ? renderChat(this.tokenizer as unknown as TemplateTokenizer, messages, { addGenerationPrompt: true })
      : messages
          .filter((m) => m.role !== 'system')
          .map((m) => m.content)
          .join('\n');
    const inputs = this.tokenizer(prompt, { add_special_tokens: !this.tokenizer.chat_template });
    const promptLength = (inputs.input_ids as Tensor).dims.at(-1)!;
    const interrupt = new InterruptableStoppingCriteria();
    const onAbort = () => interrupt.interrupt();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const stops = opts.stop?.filter((s) => s.length > 0) ?? [];
    // Decodes only the newest tokens: a stop string is shorter than what they decode to.
    const tail = Math.max(8, ...stops.map((s) => s.length + 4));
    const stopOnString = (ids: bigint[][]) =>
      ids.map(
        (row) =>
          stops.length > 0 &&
          row.length > promptLength &&
          stopIndex(this.tokenizer.decode(row.slice(Math.max(promptLength, row.length - tail)), { skip_special_tokens: true }), stops) >= 0,
      );
    const temperature = opts.temperature ?? 1;
    const draw = temperature > 0 ? seededDraw(opts.seed ?? randomSeed(), opts.topP ?? 1) : null;
    const logits_processor = draw
      ? [
          new TemperatureLogitsWarper(temperature),
          (_ids: bigint[][], logits: LogitsTensor) => {
            draw(logits.data, logits.dims.at(-1)!);
            return logits;
          },
        ]
      : null;
    try {
      const output = (await this.model.generate({
        ...inputs,
        max_new_tokens: opts.maxNewTokens ?? 512,
        // Greedy after the seeded draw, which leaves one finite logit: the sampler picks the draw.
        do_sample: false,
        logits_processor,
        stopping_criteria: [interrupt, stopOnString],
      } as unknown as Parameters<PreTrainedModel['generate']>[0])) as Tensor;
      opts.signal?.throwIfAborted();
      const ids = (output.tolist() as bigint[][])[0].slice(promptLength);
      return cutAtStop(this.tokenizer.decode(ids, { skip_special_tokens: true }), stops);
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  async dispose(): Promise<void> {
    await this.model.dispose();
  }
}

/**
 * generate() awaits only microtasks between its steps, so a worker running it would read no
 * message (an abort among them) until the whole answer is done. One macrotask turn before each
 * forward lets the abort in, and InterruptableStoppingCriteria ends the answer at that step.
 */
function yieldBeforeEachForward(model: PreTrainedModel): void {
  const forward = model.forward.bind(model);
  (model as { forward: typeof forward }).forward = async (inputs) => {
    await nextMacrotask();
    return forward(inputs);
  };
}

function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => {
    // A message port is not clamped to 4 ms the way nested timers are.
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
}

/** A call without a seed still samples; it just does not repeat. */
function randomSeed(): number {
  return (Math.random() * 2 ** 32) >>> 0;
}

function configError(model: string, error: unknown): TransformersLoadError {
  const text = oneLine(error);
  if (error instanceof SyntaxError || /JSON/i.test(text)) return new BadModelConfigError(model, `is not valid JSON (${text})`);
  if (/not found|could not locate|404/i.test(text)) return new BadModelConfigError(model, `could not be found (${text})`);
  return new BadModelConfigError(model, `did not load (${text})`);
}

/** transformers.js's own fetch, before this module wrapped it. */
let libraryFetch: typeof fetch | undefined;

/**
 * A fetch that turns an HTML page served for a model file into a 404 (dev servers and single-page
 * hosts answer a missing path with their index page, which would reach onnxruntime as a model),
 * and holds a model file's body to its kind's cap, as the engine's own downloads are.
 */
function missingAsNotFound(next: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await next(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const modelFile = /\.(onnx|onnx_data|json|txt|model)(\?|$)/.test(url);
    if (modelFile && response.ok && /text\/html/i.test(response.headers.get('content-type') ?? '')) {
      return new Response(null, { status: 404, statusText: 'the server answered with a web page' });
    }
    return modelFile && response.ok ? cappedResponse(response, modelFileLimit(url.split('?')[0].split('/').pop() ?? '')) : response;
  };
}

/** A fetch that answers the picked folder's paths from its files and passes the rest on. */
function pickedFetch(files: Map<string, Blob>, prefix: string, next: typeof fetch): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.pathname : input.url;
    const path = url.startsWith(prefix) ? url.slice(prefix.length) : null;
    if (path === null) return next(input, init);
    const file = files.get(decodeURIComponent(path));
    if (!file) return new Response(null, { status: 404, statusText: 'not among the picked files' });
    return new Response(file, { status: 200, headers: { 'content-length': String(file.size) } });
  };
}

/** The URLs in transformers.js's Cache Storage before this load, to tell cached files from fetched ones. */
async function cachedUrls(cacheKey: string, useBrowserCache: boolean): Promise<Set<string>> {
  if (!useBrowserCache || typeof caches === 'undefined') return new Set();
  try {
    const cache = await caches.open(cacheKey);
    return new Set((await cache.keys()).map((r) => r.url));
  } catch {
    return new Set();
  }
}

function isCached(urls: Set<string>, modelId: string, file: string): boolean {
  for (const url of urls) if (url.endsWith(`/${modelId}/${file}`) || url.endsWith(`/${modelId}/resolve/main/${file}`)) return true;
  return false;
}

function forwardProgress(onProgress: (progress: DownloadProgress) => void, fromCache: (file: string) => boolean) {
  // 'done' carries no byte counts; repeat the file's last ones so that a bar ends full.
  const sizes = new Map<string, { loaded: number; total: number }>();
  return (info: ProgressInfo) => {
    switch (info.status) {
      case 'progress':
        sizes.set(info.file, { loaded: info.loaded, total: info.total });
        onProgress({ file: info.file, status: 'progress', loaded: info.loaded, total: info.total, fromCache: fromCache(info.file) });
        return;
      case 'initiate':
      case 'download':
      case 'done': {
        const { total } = sizes.get(info.file) ?? { total: 0 };
        onProgress({ file: info.file, status: info.status, loaded: info.status === 'done' ? total : 0, total, fromCache: fromCache(info.file) });
        return;
      }
      default:
        // 'progress_total' repeats the per-file numbers; 'ready' has no file.
        return;
    }
  };
}
