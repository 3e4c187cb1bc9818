/** Helper threads for the fast CPU backend in a browser: Blob workers running HELPER_SOURCE. */
import { HELPER_SOURCE, type SpawnThread } from './threads';

const ENTRY = `
${HELPER_SOURCE}
self.onmessage = (e) => {
  const { module, memory, tid } = e.data;
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  self.postMessage('ready');
  serve(instance, memory, tid);
};
`;

export const spawnBrowserThread: SpawnThread = (init) =>
  new Promise((resolve, reject) => {
    const url = URL.createObjectURL(new Blob([ENTRY], { type: 'text/javascript' }));
    const worker = new Worker(url);
    worker.onmessage = () => {
      URL.revokeObjectURL(url);
      resolve({ terminate: () => worker.terminate() });
    };
    worker.onerror = (e) => {
      URL.revokeObjectURL(url);
      reject(new Error(e.message || 'the helper worker failed to start'));
    };
    worker.postMessage(init);
  });

/** All of this machine's cores (at most 16: beyond that a job's split outweighs its share). */
export function browserThreads(): { threads: number; spawn: SpawnThread } {
  // One where there is no navigator (the policy host's tests run it in Node).
  const cores = typeof navigator === 'undefined' ? 1 : navigator.hardwareConcurrency || 1;
  return { threads: Math.min(16, Math.max(1, cores)), spawn: spawnBrowserThread };
}
