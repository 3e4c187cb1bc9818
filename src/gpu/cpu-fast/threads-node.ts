/** Helper threads for the fast CPU backend in Node: worker_threads running HELPER_SOURCE. */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { EngineError } from '../errors';
import { HELPER_SOURCE, type SpawnThread } from './threads';

const ENTRY = `
const { workerData, parentPort } = require('node:worker_threads');
${HELPER_SOURCE}
const { module, memory, tid } = workerData;
const instance = new WebAssembly.Instance(module, { env: { memory } });
parentPort.postMessage('ready');
serve(instance, memory, tid);
`;

export const spawnNodeThread: SpawnThread = (init) =>
  new Promise((resolve, reject) => {
    const worker = new Worker(ENTRY, { eval: true, workerData: init });
    // The process may exit while helpers sleep: they hold no state of their own.
    worker.unref();
    worker.once('message', () => resolve({ terminate: () => void worker.terminate() }));
    worker.once('error', reject);
  });

/** Sets the fast CPU backend's thread count, e.g. for processes that share the machine. */
export const CPU_THREADS_ENV = 'NEXTSTATE_CPU_THREADS';

/**
 * NEXTSTATE_CPU_THREADS threads, else all of this machine's cores (at most 16: beyond that a
 * job's split outweighs its share).
 */
export function nodeThreads(): { threads: number; spawn: SpawnThread } {
  const asked = process.env[CPU_THREADS_ENV];
  const n = asked === undefined ? Math.min(16, availableParallelism()) : Number(asked);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new EngineError(`${CPU_THREADS_ENV} must be a whole number of threads from 1 to 256, got ${JSON.stringify(asked)}`);
  return { threads: n, spawn: spawnNodeThread };
}

/** The threads each of `processes` processes running side by side should take: the cores, shared. */
export function threadsPerProcess(processes: number): number {
  return Math.max(1, Math.floor(Math.min(16, availableParallelism()) / processes));
}
