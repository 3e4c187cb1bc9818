/**
 * The serving thread's handle on serve's trainer thread (a Node worker_threads worker): the run
 * loop's SeparateTrainer. The worker starts at the first step, loads its own copy of the model,
 * trains there, and answers each step with the new adapter, which the serving thread swaps in
 * between two generation calls (EnginePolicyService.trainBeside), so serving never waits for a
 * step. A worker that cannot start, or that stops, makes the steps run on the serving thread.
 */
import { Worker } from 'node:worker_threads';
import type { BackendName } from '../../gpu/backend';
import { EngineError } from '../../gpu/errors';
import type { PeftFiles } from '../../gpu/peft';
import { TrainerUnavailableError, type SeparateStep, type SeparateTrainer, type TrainItem } from '../../runtime/policy-service';
import type { RunConfig } from '../../runtime/run-config';
import type { TrainerInit, TrainerReply, TrainerRequest } from './trainer-protocol';

/** The trainer thread did not start: steps run on the serving thread instead. */
export class TrainerStartError extends TrainerUnavailableError {
  constructor(reason: string) {
    super(
      `the trainer thread could not start (${reason}); steps train on the serving thread instead, and chat requests get 503 with Retry-After during each. ` +
        'It needs memory for a second copy of the model: free some, or use a smaller --quantize',
    );
  }
}

/** The trainer thread stopped during a step (it crashed, or ran out of memory): steps run on the serving thread from then on. */
export class TrainerExitedError extends TrainerUnavailableError {
  constructor(reason: string) {
    super(
      `the trainer thread stopped (${reason}); the step trains again on the serving thread, from the newest version with a fresh optimizer, and chat requests get 503 during each step. Restart with --resume to train beside serving again`,
    );
  }
}

/** A step failed inside the trainer thread: the engine's own message, which says what to do. */
export class TrainerStepError extends EngineError {
  constructor(name: string, message: string) {
    super(`the trainer thread's step failed: ${name}: ${message}`);
  }
}

export interface TrainerThreadOptions {
  /** The served run's config, its policy pinned to the commit the serving thread loaded. */
  config: RunConfig;
  backend: BackendName;
  /** TrainerInit.hold: tests hold each step in flight. */
  hold?: Int32Array;
  /** Starts the worker (default spawnTrainer; tests give one that fails). */
  spawn?: (init: TrainerInit) => Worker;
}

interface Call {
  resolve: (reply: TrainerReply) => void;
  reject: (e: unknown) => void;
  progress?: (done: number, total: number) => void;
}

/**
 * The trainer worker. The repository runs the TypeScript sources through tsx, which a worker has
 * to register for itself; an installed package runs dist-cli/, where the worker is
 * trainer.worker.mjs beside the command (scripts/build-cli.mjs).
 */
export function spawnTrainer(init: TrainerInit): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./trainer.worker.mjs', import.meta.url), { workerData: init });
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(new URL('./trainer.worker.ts', import.meta.url).href);
  return new Worker(`import(${tsx}).then(({ register }) => { register(); return import(${entry}); });`, { eval: true, workerData: init });
}

const closedError = () => new DOMException('the trainer thread was closed', 'AbortError');

/** How long the trainer thread may take to load its model before steps train on the serving thread. */
export const TRAINER_START_LIMIT_MS = 30_000;

export class TrainerThread implements SeparateTrainer {
  /** Resolves once the worker has loaded its model. */
  private worker: Promise<Worker> | null = null;
  /** The same worker from the moment it is started, so that close ends one still loading. */
  private thread: Worker | null = null;
  /** Where the worker starts from, until it has started (restore before the first step). */
  private start: TrainerInit['start'];
  private readonly calls = new Map<number, Call>();
  private nextId = 0;
  private closed = false;

  constructor(private readonly options: TrainerThreadOptions) {}

  async train(items: TrainItem[], onMicroBatch?: (i: number, n: number) => void): Promise<SeparateStep> {
    const reply = await this.call({ type: 'train', id: this.nextId++, items }, onMicroBatch);
    if (reply.type !== 'trained') throw new EngineError(`the trainer thread answered a step with "${reply.type}"; this is a bug to report`);
    return { version: reply.version, stats: reply.stats, adapter: reply.adapter };
  }

  async restore(files: PeftFiles, version: number): Promise<void> {
    if (!this.worker) this.start = { files, version };
    else await this.call({ type: 'restore', id: this.nextId++, files, version });
  }

  /**
   * Ends the worker, one still loading its model included; a step in flight rejects with an
   * AbortError (its batch is retrained on --resume).
   */
  async close(): Promise<void> {
    this.closed = true;
    this.rejectAll(closedError());
    const thread = this.thread;
    this.worker = null;
    this.thread = null;
    await thread?.terminate();
  }

  private async call(request: TrainerRequest, progress?: (done: number, total: number) => void): Promise<TrainerReply> {
    if (this.closed) throw closedError();
    const worker = await (this.worker ??= this.spawn());
    // Closed while the worker loaded: nothing would ever answer a request sent to it now.
    if (this.closed) throw closedError();
    return new Promise((resolve, reject) => {
      this.calls.set(request.id, { resolve, reject, ...(progress ? { progress } : {}) });
      worker.postMessage(request);
    });
  }

  private spawn(): Promise<Worker> {
    const { config, backend, hold } = this.options;
    const init: TrainerInit = { config, backend, ...(this.start ? { start: this.start } : {}), ...(hold ? { hold } : {}) };
    return new Promise((resolve, reject) => {
      let worker: Worker;
      try {
        worker = (this.options.spawn ?? spawnTrainer)(init);
      } catch (e) {
        return reject(new TrainerStartError((e as Error).message ?? String(e)));
      }
      this.thread = worker;
      // The serving thread's HTTP server keeps the process alive; a forgotten worker must not.
      worker.unref();
      let ready = false;
      const stopped = (reason: string) => {
        clearTimeout(startLimit);
        if (!ready) reject(this.closed ? closedError() : new TrainerStartError(reason));
        else if (!this.closed) this.rejectAll(new TrainerExitedError(reason));
      };
      // A thread that never says it is ready must not hold the step forever: it is given up, and
      // the step trains on the serving thread.
      const startLimit = setTimeout(() => {
        if (ready) return;
        stopped(`it did not start within ${TRAINER_START_LIMIT_MS / 1000} s`);
        void worker.terminate();
      }, TRAINER_START_LIMIT_MS);
      startLimit.unref();
      worker.on('message', (reply: TrainerReply) => {
        if (reply.type === 'ready') {
          ready = true;
          clearTimeout(startLimit);
          resolve(worker);
        } else if (reply.type === 'failed' && reply.id === null) {
          stopped(`${reply.name}: ${reply.message}`);
          void worker.terminate();
        } else this.settle(reply);
      });
      worker.on('error', (e) => stopped(e.message));
      worker.on('exit', (code) => stopped(`it exited with code ${code}`));
    });
  }

  private settle(reply: Exclude<TrainerReply, { type: 'ready' }>): void {
    const call = reply.id === null ? undefined : this.calls.get(reply.id);
    if (!call) return;
    switch (reply.type) {
      case 'progress':
        call.progress?.(reply.done, reply.total);
        return;
      case 'failed':
        this.calls.delete(reply.id!);
        call.reject(new TrainerStepError(reply.name, reply.message));
        return;
      case 'trained':
      case 'restored':
        this.calls.delete(reply.id);
        call.resolve(reply);
        return;
    }
  }

  private rejectAll(e: unknown): void {
    for (const call of this.calls.values()) call.reject(e);
    this.calls.clear();
  }
}
