/**
 * The kernels' threads. Each helper thread instantiates the kernels over the shared memory and
 * waits on a control word (a short spin, then sleep); a job is written to memory, the helpers are
 * woken, the calling thread takes share 0 itself, and it waits until every helper has finished
 * its share. Which jobs are split is split-choice.ts's business. Ops stay
 * synchronous, as the backend interface is, and the work split is fixed by the thread count.
 */
import { EngineError } from '../errors';
import { SplitChoice } from './split-choice';

/** Byte addresses in the reserved bottom of the memory. */
export const CONTROL = 0;
export const JOB = 64;
/** Control words (i32 indices from CONTROL). */
const GEN = 0;
const PENDING = 1;
const FAILED = 2;
const STOP = 3;
const THREADS = 4;

/**
 * Loads of a control word a thread makes before it sleeps on it: some tens of microseconds.
 * Waking a sleeping thread costs 50 to 90 µs on an idle virtual machine (its core was halted),
 * more than a decode step's products take, while the next job of a step comes within
 * microseconds: a thread that looks for a while first catches it awake.
 */
const SPIN_LOADS = 1 << 15;

export interface ThreadInit {
  module: WebAssembly.Module;
  memory: WebAssembly.Memory;
  tid: number;
}

/** Starts a helper thread running HELPER_SOURCE; resolves once it is waiting for jobs. */
export type SpawnThread = (init: ThreadInit) => Promise<{ terminate(): void }>;

/**
 * What a helper runs, as source text (a Node eval worker and a browser Blob worker both take
 * text): `serve(instance, memory, tid)` loops forever, one share of each job. A trap in a share
 * is flagged and the share still counts as done, so the caller never waits forever.
 *
 * A share runs only when the generation has moved past the last one served: Atomics.wait can
 * return without a new job (V8 wakes a waiting thread to grow its view of the shared memory, and
 * a notify may come when nothing changed). Taking such a wake-up as a job ran a share twice and
 * counted it twice: the caller then read a job as finished while a helper was still writing it,
 * or waited forever on a count below zero (seen after some 46,000 jobs of a demo-model build).
 */
export const HELPER_SOURCE = `
function serve(instance, memory, tid) {
  const ctl = new Int32Array(memory.buffer, ${CONTROL}, 16);
  let seen = 0;
  for (;;) {
    let gen = Atomics.load(ctl, ${GEN});
    for (let spin = 0; gen === seen && spin < ${SPIN_LOADS}; spin++) gen = Atomics.load(ctl, ${GEN});
    while (gen === seen) {
      Atomics.wait(ctl, ${GEN}, seen);
      gen = Atomics.load(ctl, ${GEN});
    }
    seen = gen;
    if (Atomics.load(ctl, ${STOP})) return;
    try {
      instance.exports.runJob(${JOB}, tid, Atomics.load(ctl, ${THREADS}));
    } catch (e) {
      Atomics.store(ctl, ${FAILED}, 1);
    }
    if (Atomics.sub(ctl, ${PENDING}, 1) === 1) Atomics.notify(ctl, ${PENDING});
  }
}
`;

/** Multiply-adds from which a job is split over the threads; splitting never changes a result. */
export interface SplitWork {
  /** Always split: worth waking a sleeping helper for. */
  parallelWork: number;
  /** Split when that has paid lately (split-choice.ts). */
  smallWork: number;
}

export class KernelTrapError extends EngineError {
  constructor(detail: string) {
    super(`a fast CPU kernel failed (${detail}); this is a bug in the engine: rerun with --backend cpu-reference and report it`);
  }
}

export class ThreadPool {
  private readonly ctl: Int32Array;
  private closed = false;
  private readonly choice = new SplitChoice();

  private constructor(
    private readonly runJob: (job: number, tid: number, threads: number) => void,
    memory: WebAssembly.Memory,
    private readonly helpers: { terminate(): void }[],
    private readonly work: SplitWork,
  ) {
    this.ctl = new Int32Array(memory.buffer, CONTROL, 16);
    this.ctl[THREADS] = helpers.length + 1;
  }

  /**
   * A pool of `threads` (this one and threads - 1 helpers). One thread where the caller may not
   * block (a page's main thread: Atomics.wait throws there) or no spawner is given.
   */
  static async start(
    instance: WebAssembly.Instance,
    module: WebAssembly.Module,
    memory: WebAssembly.Memory,
    threads: number,
    spawn: SpawnThread | undefined,
    work: SplitWork,
  ): Promise<ThreadPool> {
    const runJob = instance.exports.runJob as (job: number, tid: number, threads: number) => void;
    const helpers: { terminate(): void }[] = [];
    if (spawn && threads > 1 && mayBlock(memory)) {
      const started = await Promise.allSettled(Array.from({ length: threads - 1 }, (_, i) => spawn({ module, memory, tid: i + 1 })));
      const failed = started.find((s) => s.status === 'rejected');
      for (const s of started) if (s.status === 'fulfilled') helpers.push(s.value);
      if (failed) {
        for (const h of helpers) h.terminate();
        throw new EngineError(`the fast CPU backend could not start its threads: ${(failed as PromiseRejectedResult).reason}`);
      }
    }
    return new ThreadPool(runJob, memory, helpers, work);
  }

  get threads(): number {
    return this.helpers.length + 1;
  }

  /**
   * Runs the job written at JOB, of `work` multiply-adds: on every thread when that is worth it,
   * else all of it here. Either way each item is computed by the same code in the same order.
   */
  run(work: number): void {
    if (this.closed) throw new EngineError('the fast CPU backend was closed; create a new backend');
    if (this.helpers.length === 0 || work < this.work.smallWork) return this.alone();
    if (work >= this.work.parallelWork) return this.split();
    const split = this.choice.split();
    const t0 = performance.now();
    if (split) this.split();
    else this.alone();
    this.choice.record(split, performance.now() - t0, work);
  }

  private alone(): void {
    this.call(0, 1);
  }

  private split(): void {
    const ctl = this.ctl;
    const threads = this.threads;
    Atomics.store(ctl, PENDING, threads - 1);
    Atomics.add(ctl, GEN, 1);
    Atomics.notify(ctl, GEN);
    // Every helper finishes its share before this returns or throws: the next job's memory must
    // not still be written by this one.
    let trap: unknown;
    try {
      this.call(0, threads);
    } catch (e) {
      trap = e;
    }
    for (let left = Atomics.load(ctl, PENDING), spin = 0; left !== 0; left = Atomics.load(ctl, PENDING), spin++) {
      if (left < 0) throw new KernelTrapError('a helper thread finished a share twice');
      if (spin >= SPIN_LOADS) Atomics.wait(ctl, PENDING, left);
    }
    const helperTrapped = Atomics.exchange(ctl, FAILED, 0);
    if (trap) throw trap;
    if (helperTrapped) throw new KernelTrapError('a helper thread trapped');
  }

  private call(tid: number, threads: number): void {
    try {
      this.runJob(JOB, tid, threads);
    } catch (e) {
      throw new KernelTrapError(e instanceof Error ? e.message : String(e));
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.ctl, STOP, 1);
    Atomics.add(this.ctl, GEN, 1);
    Atomics.notify(this.ctl, GEN);
    for (const h of this.helpers) h.terminate();
  }
}

/** Whether this thread may sleep on Atomics.wait (not a page's main thread). */
function mayBlock(memory: WebAssembly.Memory): boolean {
  try {
    Atomics.wait(new Int32Array(memory.buffer, CONTROL, 16), 15, 1, 0);
    return true;
  } catch {
    return false;
  }
}
