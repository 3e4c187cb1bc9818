/**
 * Test worker for backend.browser.test.ts: the fast backend on every core (Blob helper threads,
 * as in the lab's policy worker) and on one, against the reference, on a product and attention
 * big enough to be split.
 */
import type { AttentionShape, Backend } from '../backend';
import { CpuBackend } from '../cpu/backend';
import { randn, relError } from '../../../test/support/gpu/cases';
import { FastCpuBackend } from './backend';
import { browserThreads } from './threads-browser';

export interface WorkerReport {
  threads?: number;
  sameBits?: boolean;
  relError?: number;
  error?: string;
}

async function outputs(be: Backend): Promise<Float32Array[]> {
  const s: AttentionShape = { B: 2, T: 64, start: 0, maxT: 64, numHeads: 4, numKvHeads: 2, headDim: 16, padLeft: Int32Array.of(0, 5) };
  const a = be.tensor(randn(1, 96 * 200), [96, 200]);
  const w = be.tensor(randn(2, 300 * 200, 0.1), [300, 200]);
  const q = be.tensor(randn(3, 128 * 64), [128, 64]);
  const k = be.tensor(randn(4, 2 * 2 * 64 * 16), [2, 2, 64, 16]);
  const v = be.tensor(randn(5, 2 * 2 * 64 * 16), [2, 2, 64, 16]);
  return Promise.all([be.linear(a, w), be.attention(q, k, v, s)].map((t) => be.read(t)));
}

async function run(): Promise<WorkerReport> {
  const all = await FastCpuBackend.create(browserThreads());
  const one = await FastCpuBackend.create({ threads: 1 });
  const [got, single, want] = [await outputs(all), await outputs(one), await outputs(new CpuBackend())];
  const report = {
    threads: all.threads,
    sameBits: got.every((g, i) => g.every((x, j) => Object.is(x, single[i][j]))),
    relError: Math.max(...got.map((g, i) => relError(g, want[i]))),
  };
  all.close();
  one.close();
  return report;
}

run().then(
  (r) => postMessage(r),
  (e) => postMessage({ error: String(e?.stack ?? e) }),
);
