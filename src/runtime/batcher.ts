/**
 * Merges generation requests that arrive together into one batched generate call: sessions
 * run concurrently, and a batch of B sequences costs far less than B single calls. Requests
 * that arrive while a batch is running wait for the next one; requests with different
 * sampling settings, or pinned to different policy versions, go to different batches. Within a batch each request keeps its own token
 * stream and its own cancellation.
 */
import { isEngineLimit } from '../gpu/errors';
import { yieldToEventLoop } from '../gpu/yield';
import type { GenerationHooks, PolicyReply, PolicyRequest, PolicyService } from './policy-service';

/** One request's tokens as they are drawn, whatever batch it lands in. */
export type RequestTokenListener = (id: number, logprob: number) => void;

interface Waiting {
  request: PolicyRequest;
  resolve: (r: PolicyReply) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onToken?: RequestTokenListener;
  /** Generated in a batch of its own (its batch failed on an engine limit). */
  alone?: boolean;
}

/** Requests that may share one generate call: the same sampling settings and the same pinned version. */
function batchKey(request: PolicyRequest): string {
  return JSON.stringify([request.sampling, request.version ?? null]);
}

export class GenerationBatcher {
  private queue: Waiting[] = [];
  private running = false;
  private scheduled = false;
  private current = 0;

  constructor(
    private readonly policy: PolicyService,
    private readonly maxBatch = 16,
    private readonly onBatch?: (size: number) => void,
  ) {}

  get queued(): number {
    return this.queue.length;
  }

  /** Requests in the batch being generated now. */
  get generating(): number {
    return this.current;
  }

  request(request: PolicyRequest, signal?: AbortSignal, onToken?: RequestTokenListener): Promise<PolicyReply> {
    if (signal?.aborted) return Promise.reject(signal.reason ?? new DOMException('aborted', 'AbortError'));
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject, signal, ...(onToken ? { onToken } : {}) });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    // One turn of the event loop lets every session that is ready in this turn join the batch.
    // Not setTimeout: its 1 ms clamp lets wall-clock time decide how many other turns run first,
    // and so which sessions share a batch; a run must repeat exactly for its seed.
    void yieldToEventLoop().then(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length) {
        this.queue = this.queue.filter((w) => {
          if (!w.signal?.aborted) return true;
          w.reject(w.signal.reason ?? new DOMException('aborted', 'AbortError'));
          return false;
        });
        if (!this.queue.length) break;
        const key = batchKey(this.queue[0].request);
        const batch = this.queue[0].alone ? [this.queue[0]] : this.queue.filter((w) => !w.alone && batchKey(w.request) === key).slice(0, this.maxBatch);
        this.queue = this.queue.filter((w) => !batch.includes(w));
        this.onBatch?.(batch.length);
        // A batch is aborted only when every request in it is.
        const controller = new AbortController();
        const onAbort = () => batch.every((w) => w.signal?.aborted) && controller.abort();
        for (const w of batch) w.signal?.addEventListener('abort', onAbort);
        this.current = batch.length;
        // Each request hears its own tokens, and one whose caller went away stops drawing them
        // while the rest of its batch goes on.
        const hooks: GenerationHooks = {
          dropped: (i) => batch[i].signal?.aborted === true,
          ...(batch.some((w) => w.onToken)
            ? {
                onToken: (i: number, id: number, logprob: number) => {
                  const w = batch[i];
                  if (!w.signal?.aborted) w.onToken?.(id, logprob);
                },
              }
            : {}),
        };
        try {
          const replies = await this.policy.generate(
            batch.map((w) => w.request),
            controller.signal,
            hooks,
          );
          batch.forEach((w, i) => (w.signal?.aborted ? w.reject(w.signal.reason) : w.resolve(replies[i])));
        } catch (e) {
          // A request too long for the model fails alone, not every session that shared its batch.
          if (isEngineLimit(e) && batch.length > 1) this.queue.unshift(...batch.map((w) => ({ ...w, alone: true })));
          else for (const w of batch) w.reject(e);
        } finally {
          this.current = 0;
          for (const w of batch) w.signal?.removeEventListener('abort', onAbort);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
