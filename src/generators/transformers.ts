import type { ChatMessage } from '../rl/messages';
import type { GenerateOptions, TextGenerator } from './generator';

// Types only: the library (and onnxruntime) loads when a model is first loaded, so importing
// this module costs nothing for runs that never use it.
import type { PreTrainedModel, PreTrainedTokenizer, ProgressInfo, Tensor } from '@huggingface/transformers';

export type TransformersDevice = 'webgpu' | 'wasm';

/** Byte progress of one model file, as the download reports it. */
export interface DownloadProgress {
  file: string;
  status: 'initiate' | 'download' | 'progress' | 'done';
  loaded: number;
  total: number;
}

export interface TransformersConfig {
  /** A Hugging Face model id with ONNX weights, e.g. `onnx-community/Qwen3-0.6B-ONNX`. */
  modelId: string;
  /** Default: WebGPU where an adapter is available, else WASM. */
  device?: TransformersDevice;
  /** ONNX weight variant, e.g. `q4f16`, `q4`, `fp32`. */
  dtype?: 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'bnb4' | 'q4f16';
  /** Serve models from this path on the page's origin (a path such as `/models/`, not a URL). */
  localModelPath?: string;
  /** onnxruntime-web's `dist/` as served by the app, so that its WASM does not come from a CDN. */
  wasmPaths?: string;
  allowRemoteModels?: boolean;
  onProgress?: (progress: DownloadProgress) => void;
  label?: string;
}

export class TransformersLoadError extends Error {
  override name = 'TransformersLoadError';
}

/** WebGPU when this browser or worker offers an adapter, else WASM. */
export async function pickDevice(): Promise<TransformersDevice> {
  const gpu = (globalThis.navigator as Navigator | undefined)?.gpu;
  if (!gpu) return 'wasm';
  try {
    return (await gpu.requestAdapter()) ? 'webgpu' : 'wasm';
  } catch {
    return 'wasm';
  }
}

/**
 * A frozen model served by transformers.js, for judges and simulated users. Chat models are
 * prompted through their chat template; models without one (TinyStories) get the messages' text
 * joined, which they continue. transformers.js cannot seed its sampler, so `seed` is ignored.
 */
export class TransformersGenerator implements TextGenerator {
  readonly kind = 'transformers' as const;

  private constructor(
    readonly label: string,
    readonly device: TransformersDevice,
    private readonly tokenizer: PreTrainedTokenizer,
    private readonly model: PreTrainedModel,
    private readonly library: typeof import('@huggingface/transformers'),
  ) {}

  static async load(config: TransformersConfig): Promise<TransformersGenerator> {
    const library = await import('@huggingface/transformers');
    const { env, AutoTokenizer, AutoModelForCausalLM } = library;
    if (config.localModelPath !== undefined) env.localModelPath = config.localModelPath;
    if (config.allowRemoteModels !== undefined) env.allowRemoteModels = config.allowRemoteModels;
    const wasm = env.backends.onnx.wasm;
    if (config.wasmPaths !== undefined && wasm) wasm.wasmPaths = config.wasmPaths;
    const device = config.device ?? (await pickDevice());
    const progress_callback = config.onProgress && forwardProgress(config.onProgress);
    try {
      const tokenizer = await AutoTokenizer.from_pretrained(config.modelId, { progress_callback });
      const model = await AutoModelForCausalLM.from_pretrained(config.modelId, {
        device,
        dtype: config.dtype,
        progress_callback,
      });
      return new TransformersGenerator(config.label ?? `${config.modelId} (${device})`, device, tokenizer, model, library);
    } catch (error) {
      throw new TransformersLoadError(
        `Could not load ${config.modelId} on ${device}: ${(error as Error).message}. Check the model id (it needs ONNX ` +
          'weights and tokenizer.json plus tokenizer_config.json), the network, or try the other device.',
      );
    }
  }

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    opts.signal?.throwIfAborted();
    const prompt = this.tokenizer.chat_template
      ? (this.tokenizer.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true }) as string)
      : messages.filter((m) => m.role !== 'system').map((m) => m.content).join('\n');
    const inputs = this.tokenizer(prompt, { add_special_tokens: !this.tokenizer.chat_template });
    const promptLength = (inputs.input_ids as Tensor).dims.at(-1)!;
    const stop = new this.library.InterruptableStoppingCriteria();
    const onAbort = () => stop.interrupt();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const temperature = opts.temperature ?? 1;
      const output = (await this.model.generate({
        ...inputs,
        max_new_tokens: opts.maxNewTokens ?? 512,
        do_sample: temperature > 0,
        ...(temperature > 0 && { temperature }),
        ...(opts.topP !== undefined && { top_p: opts.topP }),
        stopping_criteria: stop,
      })) as Tensor;
      opts.signal?.throwIfAborted();
      const ids = (output.tolist() as bigint[][])[0].slice(promptLength);
      return this.tokenizer.decode(ids, { skip_special_tokens: true });
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  async dispose(): Promise<void> {
    await this.model.dispose();
  }
}

function forwardProgress(onProgress: (progress: DownloadProgress) => void) {
  // 'done' carries no byte counts; repeat the file's last ones so that a bar ends full.
  const sizes = new Map<string, { loaded: number; total: number }>();
  return (info: ProgressInfo) => {
    switch (info.status) {
      case 'progress':
        sizes.set(info.file, { loaded: info.loaded, total: info.total });
        onProgress({ file: info.file, status: 'progress', loaded: info.loaded, total: info.total });
        return;
      case 'initiate':
      case 'download':
      case 'done': {
        const { total } = sizes.get(info.file) ?? { total: 0 };
        onProgress({ file: info.file, status: info.status, loaded: info.status === 'done' ? total : 0, total });
        return;
      }
      default:
        // 'progress_total' repeats the per-file numbers; 'ready' has no file.
        return;
    }
  };
}
