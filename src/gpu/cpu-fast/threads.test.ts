/**
 * The thread pool's protocol: a helper serves each job once, whatever wakes it. Atomics.wait may
 * return without a new job (V8 wakes waiting threads when the shared memory grows); a helper that
 * took such a wake-up for a job ran a share twice and left the pool's count below zero, and the
 * caller then waited forever. Here the test wakes the helper itself, between jobs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL, ThreadPool } from './threads';
import { Kernel, writeJob } from './jobs';
import { KERNELS_WASM } from './kernels-wasm';
import { spawnNodeThread } from './threads-node';

const GEN = 0;
const PENDING = 1;
const N = 64 * 48;
const SRC = 65536;
const DST = SRC + N * 4;

let pool: ThreadPool;
let memory: WebAssembly.Memory;

beforeAll(async () => {
  const module = await WebAssembly.compile(Uint8Array.from(atob(KERNELS_WASM), (c) => c.charCodeAt(0)));
  memory = new WebAssembly.Memory({ initial: 4, maximum: 64, shared: true });
  const instance = await WebAssembly.instantiate(module, { env: { memory } });
  pool = await ThreadPool.start(instance, module, memory, 2, spawnNodeThread, { parallelWork: 1, smallWork: 1 });
});

afterAll(() => pool.close());

describe('the fast CPU backend thread pool', () => {
  it('runs each share once when a helper wakes with no new job', async () => {
    expect(pool.threads).toBe(2);
    const ctl = new Int32Array(memory.buffer, CONTROL, 16);
    for (let round = 0; round < 20; round++) {
      const src = new Float32Array(memory.buffer, SRC, N);
      for (let i = 0; i < N; i++) src[i] = round * 10_000 + i;
      new Float32Array(memory.buffer, DST, N).fill(-1);
      // dst += src in place: a share served twice would add twice.
      writeJob(memory, Kernel.addScaled, N / 4, [DST, SRC, DST, N, { f32: 1 }]);
      pool.run(N);
      const dst = new Float32Array(memory.buffer, DST, N);
      for (let i = 0; i < N; i++) expect(dst[i]).toBe(src[i] - 1);
      // A wake-up with nothing new: the helper must go back to sleep, not serve the job again.
      Atomics.notify(ctl, GEN);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(Atomics.load(ctl, PENDING)).toBe(0);
    }
  });
});
