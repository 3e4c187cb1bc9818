/**
 * What runs inside serve's trainer thread: the run's policy on an engine of its own, which keeps
 * the training adapter and the optimizer, and hands back each step's adapter. A plain class, so
 * it can be tested without a worker; trainer.worker.ts connects it to the thread's port.
 */
import { nodeBackend } from '../../gpu/backend-node';
import type { EnginePolicyService } from '../../runtime/policy-service';
import { loadEnginePolicy } from '../../runtime/services-node';
import type { TrainerInit, TrainerReply, TrainerRequest } from './trainer-protocol';

/** A failure as a message: an Error's class name and message cross the thread, its prototype does not. */
export function failure(id: number | null, e: unknown): TrainerReply {
  const error = e instanceof Error ? e : new Error(String(e));
  return { type: 'failed', id, name: error.name, message: error.message };
}

export class TrainerHost {
  /** Requests run one after another, in the order they came. */
  private queue: Promise<void> = Promise.resolve();

  private constructor(
    private readonly service: EnginePolicyService,
    private readonly hold: Int32Array | undefined,
  ) {}

  static async load(init: TrainerInit): Promise<TrainerHost> {
    const service = await loadEnginePolicy(init.config, await nodeBackend(init.backend));
    if (init.start) await service.restore(init.start.files, init.start.version);
    return new TrainerHost(service, init.hold);
  }

  /** Runs `request` after those before it; its replies go to `post`. */
  handle(request: TrainerRequest, post: (reply: TrainerReply) => void): Promise<void> {
    this.queue = this.queue.then(() => this.run(request, post)).catch((e) => post(failure(request.id, e)));
    return this.queue;
  }

  private async run(request: TrainerRequest, post: (reply: TrainerReply) => void): Promise<void> {
    switch (request.type) {
      case 'train': {
        this.waitWhileHeld();
        const result = await this.service.train(request.items, (done, total) => post({ type: 'progress', id: request.id, done, total }));
        post({ type: 'trained', id: request.id, version: result.version, stats: result.stats, adapter: await this.service.exportAdapter() });
        return;
      }
      case 'restore':
        await this.service.restore(request.files, request.version);
        post({ type: 'restored', id: request.id });
        return;
    }
  }

  /** TrainerInit.hold: the thread sleeps, as a long step keeps it busy, until the test lets go. */
  private waitWhileHeld(): void {
    const hold = this.hold;
    if (!hold) return;
    Atomics.store(hold, 1, 1);
    while (Atomics.load(hold, 0) === 1) Atomics.wait(hold, 0, 1);
    Atomics.store(hold, 1, 0);
  }
}
