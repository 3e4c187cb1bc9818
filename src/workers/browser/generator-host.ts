/**
 * What runs inside a judge / user-simulator worker: one frozen text generator, either an ONNX
 * model through transformers.js or a safetensors model on the project's engine. The judge and
 * the simulated user share one worker when they use the same model.
 */
import type { ChatMessage } from '../../rl/messages';
import { createWebGPUBackend } from '../../gpu/webgpu/backend';
import type { BackendName } from '../../gpu/backend';
import { browserCpuBackend } from '../../gpu/cpu-fast/browser';
import { Policy } from '../../gpu/policy';
import { HubSource, type FileProgress } from '../../models/source';
import { EngineGenerator } from '../../generators/engine';
import type { GenerateOptions, GeneratorSource, TextGenerator } from '../../generators/generator';
import { TransformersGenerator, type DownloadProgress, type PickedFile, type TransformersDevice, type TransformersDtype } from '../../generators/transformers';
// onnxruntime-web's WASM build that transformers.js uses for both devices, served by the app itself:
// the library's default fetches it from a CDN, which an offline page (and the CSP) cannot reach.
import ortMjs from 'onnxruntime-web/ort-wasm-simd-threaded.asyncify.mjs?url';
import ortWasm from 'onnxruntime-web/ort-wasm-simd-threaded.asyncify.wasm?url';

export type GeneratorLoadRequest =
  | {
      kind: 'transformers';
      /** Hub id, or the picked folder's name when `files` are given. */
      model: string;
      device?: TransformersDevice;
      dtype?: TransformersDtype;
      /** Serve hub ids from this path on the page's origin instead of the hub. */
      localModelPath?: string;
      allowRemoteModels?: boolean;
      files?: PickedFile[];
      wasmPaths?: string | { mjs: string; wasm: string };
    }
  | { kind: 'engine'; model: string; backend: BackendName };

/** What a loaded worker reports about its generator. */
export interface GeneratorInfo {
  label: string;
  kind: TextGenerator['kind'];
  source?: GeneratorSource;
}

export type GeneratorProgress = { file: string; loaded: number; total: number | null; fromCache?: boolean };

export class GeneratorHost {
  private generator: TextGenerator | null = null;
  private readonly aborts = new Map<string, AbortController>();

  async load(request: GeneratorLoadRequest, onProgress?: (p: GeneratorProgress) => void): Promise<GeneratorInfo> {
    if (request.kind === 'transformers') {
      this.generator = await TransformersGenerator.load({
        modelId: request.model,
        device: request.device,
        dtype: request.dtype,
        localModelPath: request.localModelPath,
        allowRemoteModels: request.allowRemoteModels,
        files: request.files,
        wasmPaths: request.wasmPaths ?? { mjs: absolute(ortMjs), wasm: absolute(ortWasm) },
        onProgress: (p: DownloadProgress) => onProgress?.({ file: p.file, loaded: p.loaded, total: p.total || null, fromCache: p.fromCache }),
      });
    } else {
      const backend = request.backend === 'webgpu' ? await createWebGPUBackend() : await browserCpuBackend(request.backend);
      const policy = await Policy.load(new HubSource(request.model), backend, {
        onProgress: (p: FileProgress) => onProgress?.({ file: p.file, loaded: p.loaded, total: p.total, fromCache: p.fromCache }),
      });
      this.generator = new EngineGenerator(policy);
    }
    return { label: this.generator.label, kind: this.generator.kind, source: this.generator.source };
  }

  async generate(messages: ChatMessage[], opts: Omit<GenerateOptions, 'signal'>, requestId?: string): Promise<string> {
    if (!this.generator) throw new Error('no model is loaded in this worker: call load() first');
    const controller = new AbortController();
    if (requestId) this.aborts.set(requestId, controller);
    try {
      return await this.generator.generate(messages, { ...opts, signal: controller.signal });
    } finally {
      if (requestId) this.aborts.delete(requestId);
    }
  }

  abort(requestId: string): void {
    this.aborts.get(requestId)?.abort(new DOMException('aborted', 'AbortError'));
  }
}

/** onnxruntime imports its factory by URL: make the app's relative asset URL absolute. */
function absolute(url: string): string {
  return new URL(url, self.location.href).href;
}
