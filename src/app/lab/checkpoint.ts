/**
 * Saves the adapter of every policy version before the run loop logs the step that made it, so
 * that storage's resumePoint can always rebuild the last logged step after a reload.
 *
 * Why a wrapper: the policy serves version v while it trains v+1 and swaps between two
 * generations, so an export right after a step can still see the old serving adapter. Holding
 * new generation requests until those in flight are done makes the swap happen, and the export
 * then reads exactly the version the step produced. The hold lasts one export, not a step.
 */
import type { ChatMessage } from '../../rl/messages';
import type { TeacherSource } from '../../rl/presets';
import type { PeftFiles } from '../../gpu/peft';
import type { PolicyReply, PolicyRequest, PolicyService, ScoredTopK, TrainItem, TrainResult } from '../../runtime/policy-service';
import { needTopK } from './recovering';

export class CheckpointingPolicy implements PolicyService {
  private inFlight = 0;
  private drained: (() => void) | null = null;
  private hold: Promise<void> | null = null;

  constructor(
    private readonly inner: PolicyService,
    /** Stores the adapter of `version`; a rejection (a full disk) fails the step. */
    private readonly save: (version: number, files: PeftFiles) => Promise<void>,
  ) {}

  get label(): string {
    return this.inner.label;
  }

  servingVersion(): number {
    return this.inner.servingVersion();
  }

  async generate(requests: PolicyRequest[], signal?: AbortSignal): Promise<PolicyReply[]> {
    while (this.hold) {
      await this.hold;
      signal?.throwIfAborted();
    }
    this.inFlight++;
    try {
      return await this.inner.generate(requests, signal);
    } finally {
      this.inFlight--;
      if (this.inFlight === 0) this.drained?.();
    }
  }

  score(items: { messages: ChatMessage[]; tokenIds: number[] }[], teacher: TeacherSource): Promise<number[][]> {
    return this.inner.score(items, teacher);
  }

  scoreTopK(items: { messages: ChatMessage[]; tokenIds: number[] }[], policy: TeacherSource, k: number): Promise<ScoredTopK[]> {
    return needTopK(this.inner).scoreTopK!(items, policy, k);
  }

  async train(items: TrainItem[], onMicroBatch?: (i: number, n: number) => void): Promise<TrainResult> {
    const result = await this.inner.train(items, onMicroBatch);
    let release!: () => void;
    this.hold = new Promise<void>((r) => (release = r));
    try {
      if (this.inFlight > 0) await new Promise<void>((r) => (this.drained = r));
      this.drained = null;
      await this.save(result.version, await this.inner.exportAdapter());
    } finally {
      this.hold = null;
      release();
    }
    return result;
  }

  exportAdapter(): Promise<PeftFiles> {
    return this.inner.exportAdapter();
  }

  restore(files: PeftFiles, version: number): Promise<void> {
    return this.inner.restore(files, version);
  }

  memory(): Promise<{ allocated: number; peak: number }> {
    return this.inner.memory?.() ?? Promise.resolve({ allocated: 0, peak: 0 });
  }
}
