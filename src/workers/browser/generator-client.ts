/**
 * A TextGenerator on the page whose model runs in a worker, so judging and simulating users
 * never block the page or the policy worker. Aborts travel as request ids.
 */
import * as Comlink from 'comlink';
import type { ChatMessage } from '../../rl/messages';
import type { GenerateOptions, GeneratorSource, TextGenerator } from '../../generators/generator';
import type { GeneratorHost, GeneratorLoadRequest, GeneratorProgress } from './generator-host';

let nextId = 0;

export class WorkerGenerator implements TextGenerator {
  private constructor(
    private readonly worker: Worker,
    private readonly remote: Comlink.Remote<GeneratorHost>,
    readonly label: string,
    readonly kind: TextGenerator['kind'],
    readonly source: GeneratorSource | undefined,
  ) {}

  static async load(request: GeneratorLoadRequest, onProgress?: (p: GeneratorProgress) => void, name = 'generator'): Promise<WorkerGenerator> {
    const worker = new Worker(new URL('./generator.worker.ts', import.meta.url), { type: 'module', name });
    const remote = Comlink.wrap<GeneratorHost>(worker);
    try {
      const info = await remote.load(request, onProgress && Comlink.proxy(onProgress));
      return new WorkerGenerator(worker, remote, info.label, info.kind, info.source);
    } catch (e) {
      worker.terminate();
      throw e;
    }
  }

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    const { signal, ...rest } = opts;
    signal?.throwIfAborted();
    const id = `t${nextId++}`;
    const onAbort = () => void this.remote.abort(id);
    signal?.addEventListener('abort', onAbort);
    try {
      return await this.remote.generate(messages, rest, id);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  terminate(): void {
    this.remote[Comlink.releaseProxy]();
    this.worker.terminate();
  }
}
