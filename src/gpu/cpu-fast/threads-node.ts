/** Helper threads for the fast CPU backend in Node: worker_threads running HELPER_SOURCE. */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
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

/** All of this machine's cores (at most 16: beyond that a job's split outweighs its share). */
export function nodeThreads(): { threads: number; spawn: SpawnThread } {
  return { threads: Math.min(16, availableParallelism()), spawn: spawnNodeThread };
}
