/**
 * What runs inside a judge / user-simulator worker: one frozen text generator, either an ONNX
 * model through transformers.js or a safetensors model on the project's engine. The judge and
 * the simulated user share one worker when they use the same model.
 */
import type { ChatMessage } from '../../rl/messages';
import { createWebGPUBackend } from '../../gpu/webgpu/backend';
import { CpuBackend } from '../../gpu/cpu/backend';
import { Policy } from '../../gpu/policy';
import { HubSource, type FileProgress } from '../../gpu/source';
import { EngineGenerator } from '../../generators/engine';
import type { GenerateOptions, TextGenerator } from '../../generators/generator';
import { TransformersGenerator, type DownloadProgress } from '../../generators/transformers';

export type GeneratorLoadRequest =
  | { kind: 'transformers'; model: string; wasmPaths?: string }
  | { kind: 'engine'; model: string; backend: 'webgpu' | 'cpu' };

export type GeneratorProgress = { file: string; loaded: number; total: number | null; fromCache?: boolean };

export class GeneratorHost {
  private generator: TextGenerator | null = null;
  private readonly aborts = new Map<string, AbortController>();

  async load(request: GeneratorLoadRequest, onProgress?: (p: GeneratorProgress) => void): Promise<{ label: string; kind: TextGenerator['kind'] }> {
    if (request.kind === 'transformers') {
      this.generator = await TransformersGenerator.load({
        modelId: request.model,
        wasmPaths: request.wasmPaths,
        onProgress: (p: DownloadProgress) => onProgress?.({ file: p.file, loaded: p.loaded, total: p.total }),
      });
    } else {
      const backend = request.backend === 'webgpu' ? await createWebGPUBackend() : new CpuBackend();
      const policy = await Policy.load(new HubSource(request.model), backend, {
        onProgress: (p: FileProgress) => onProgress?.({ file: p.file, loaded: p.loaded, total: p.total, fromCache: p.fromCache }),
      });
      this.generator = new EngineGenerator(policy);
    }
    return { label: this.generator.label, kind: this.generator.kind };
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
