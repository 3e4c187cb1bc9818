/**
 * The page's handle on the policy worker, shaped as the run loop's PolicyService. Abort
 * signals become request ids, since a signal cannot be sent to a worker.
 */
import * as Comlink from 'comlink';
import type { TeacherSource } from '../../rl/presets';
import type { PeftFiles } from '../../gpu/peft';
import type { PolicyReply, PolicyRequest, PolicyService, ScoredTopK, ScoreItem, TrainItem, TrainResult } from '../../runtime/policy-service';
import type { PolicyEvent, PolicyHost, PolicyInfo, PolicyLoadRequest } from './policy-host';

let nextId = 0;

export class PolicyClient implements PolicyService {
  private version = 0;
  label = 'policy worker';

  private constructor(
    private readonly worker: Worker,
    private readonly remote: Comlink.Remote<PolicyHost>,
  ) {}

  static create(onEvent: (e: PolicyEvent) => void): PolicyClient {
    const worker = new Worker(new URL('./policy.worker.ts', import.meta.url), { type: 'module', name: 'policy' });
    const remote = Comlink.wrap<PolicyHost>(worker);
    void remote.onEvent(Comlink.proxy(onEvent));
    return new PolicyClient(worker, remote);
  }

  async load(request: PolicyLoadRequest): Promise<PolicyInfo> {
    const info = await this.remote.load(request);
    this.label = info.label;
    return info;
  }

  servingVersion(): number {
    return this.version;
  }

  keepVersionsFrom(version: number): void {
    // Comlink delivers calls in order, so every later request finds the versions it pins.
    void this.remote.keepVersionsFrom(version);
  }

  async generate(requests: PolicyRequest[], signal?: AbortSignal): Promise<PolicyReply[]> {
    const id = `g${nextId++}`;
    const onAbort = () => void this.remote.abort(id);
    signal?.addEventListener('abort', onAbort);
    try {
      const replies = await this.remote.generate(requests, id);
      for (const r of replies) this.version = Math.max(this.version, r.version);
      return replies;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  score(items: ScoreItem[], teacher: TeacherSource): Promise<number[][]> {
    return this.remote.score(items, teacher);
  }

  scoreTopK(items: ScoreItem[], policy: TeacherSource, k: number): Promise<ScoredTopK[]> {
    return this.remote.scoreTopK(items, policy, k);
  }

  train(items: TrainItem[], onMicroBatch?: (i: number, n: number) => void): Promise<TrainResult> {
    return this.remote.train(items, onMicroBatch && Comlink.proxy(onMicroBatch));
  }

  exportAdapter(): Promise<PeftFiles> {
    return this.remote.exportAdapter();
  }

  async restore(files: PeftFiles, version: number): Promise<void> {
    await this.remote.restore(files, version);
    this.version = version;
  }

  memory(): Promise<{ allocated: number; peak: number }> {
    return this.remote.memory();
  }

  simulateDeviceLoss(): Promise<void> {
    return this.remote.simulateDeviceLoss();
  }

  terminate(): void {
    this.remote[Comlink.releaseProxy]();
    this.worker.terminate();
  }
}
