/**
 * Retries a policy call that failed because the GPU device was lost under it.
 *
 * The policy worker recovers from a lost device on its next call (policy-host.ts), but a call
 * that was already waiting on the GPU can fail with a plain WebGPU error (e.g. "Buffer was
 * unmapped before mapping was resolved", an AbortError) before the worker has heard of the loss, and that
 * error would end the run. The page does hear of the loss (the worker's device-lost event), so
 * a call that fails within a moment of such an event is tried once more, on the new device.
 */
import type { ChatMessage } from '../../rl/messages';
import type { TeacherSource } from '../../rl/presets';
import type { PeftFiles } from '../../gpu/peft';
import type { PolicyReply, PolicyRequest, PolicyService, ScoredTopK, TrainItem, TrainResult } from '../../runtime/policy-service';

export class RecoveringPolicy implements PolicyService {
  private lostAt = -Infinity;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly inner: PolicyService,
    /** How long after a failure a device-lost event still explains it. */
    private readonly graceMs = 2000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Call when the worker reports a lost device. */
  deviceLost(): void {
    this.lostAt = this.now();
    for (const w of this.waiters.splice(0)) w();
  }

  get label(): string {
    return this.inner.label;
  }

  servingVersion(): number {
    return this.inner.servingVersion();
  }

  generate(requests: PolicyRequest[], signal?: AbortSignal): Promise<PolicyReply[]> {
    return this.retry(() => this.inner.generate(requests, signal), signal);
  }

  score(items: { messages: ChatMessage[]; tokenIds: number[] }[], teacher: TeacherSource): Promise<number[][]> {
    return this.retry(() => this.inner.score(items, teacher));
  }

  scoreTopK(items: { messages: ChatMessage[]; tokenIds: number[] }[], policy: TeacherSource, k: number): Promise<ScoredTopK[]> {
    return this.retry(() => needTopK(this.inner).scoreTopK!(items, policy, k));
  }

  train(items: TrainItem[], onMicroBatch?: (i: number, n: number) => void): Promise<TrainResult> {
    return this.retry(() => this.inner.train(items, onMicroBatch));
  }

  exportAdapter(): Promise<PeftFiles> {
    return this.retry(() => this.inner.exportAdapter());
  }

  restore(files: PeftFiles, version: number): Promise<void> {
    return this.inner.restore(files, version);
  }

  memory(): Promise<{ allocated: number; peak: number }> {
    return this.inner.memory?.() ?? Promise.resolve({ allocated: 0, peak: 0 });
  }

  private async retry<T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const started = this.now();
    try {
      return await call();
    } catch (e) {
      // A stop aborts through the signal. An AbortError without one is the GPU's: mapAsync
      // rejects that way when the device is destroyed under it.
      if (signal?.aborted) throw e;
      if (!(await this.lostSince(started))) throw e;
      return call();
    }
  }

  /** Whether a loss was reported after `t`, waiting up to graceMs for a report still on its way. */
  private lostSince(t: number): Promise<boolean> {
    if (this.lostAt >= t) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(false);
      }, this.graceMs);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.waiters.push(wake);
    });
  }
}

/** The wrapped service, when it can give top-k sets (every engine-backed one can). */
export function needTopK(service: PolicyService): PolicyService {
  if (!service.scoreTopK)
    throw new Error(`${service.label} cannot score top-k next-token sets, which top-k hint selection needs; run with the longest-hint rule`);
  return service;
}
