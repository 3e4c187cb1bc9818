/**
 * The fast CPU backend against the CPU reference: every conformance case (the WebGPU kernels'
 * list and tolerance), shapes that cut the SIMD tiles at every edge, one and two threads, and the
 * same bits whatever the thread count.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttentionShape, Backend } from '../backend';
import { CpuBackend } from '../cpu/backend';
import { opCases, randn, readOutputs, relError, weightFormatCases, type OpCase } from '../../../test/support/gpu/cases';
import { WEIGHT_FORMATS } from '../quant';
import { FastCpuBackend } from './backend';
import { nodeThreads } from './threads-node';

const TOL = 1e-4;

async function expectSame(c: OpCase, fast: Backend): Promise<void> {
  const want = await readOutputs(new CpuBackend(), await c.run(new CpuBackend()));
  const got = await readOutputs(fast, await c.run(fast));
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => {
    const err = relError(g, want[i]);
    expect(err, `${c.name}: output ${i} (${want[i].length} values) relative error ${err}`).toBeLessThan(c.tol ?? TOL);
  });
}

/** Every transpose, with M and N on and off the 4 x 8 tile and K odd; M small and large. */
const productCases: OpCase[] = [1, 3, 4, 8, 9, 33].flatMap((M) =>
  [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ].map(([ta, tb]) => ({
    name: `matmul ${M}x27x${M === 33 ? 70 : 13} ${ta ? 'T' : 'N'}${tb ? 'T' : 'N'}, then added in place scaled`,
    run: (be: Backend) => {
      const N = M === 33 ? 70 : 13;
      const a = be.tensor(randn(M, M * 27), ta ? [27, M] : [M, 27]);
      const b = be.tensor(randn(N, 27 * N), tb ? [N, 27] : [27, N]);
      const c = be.matmul(a, b, ta, tb);
      const d = be.tensor(randn(5, M * N), [M, N]);
      be.matmulAddInPlace(d, a, b, ta, tb, -0.5);
      return [c, d];
    },
  })),
);

const bigCases: OpCase[] = [
  {
    name: 'matmul 200x256x300, linear 5x256 -> 1000 with bias and residual (threaded sizes)',
    run: (be) => {
      const a = be.tensor(randn(1, 200 * 256), [200, 256]);
      const w = be.tensor(randn(2, 300 * 256, 0.1), [300, 256]);
      const x = be.tensor(randn(3, 5 * 256), [5, 256]);
      const w2 = be.tensor(randn(4, 1000 * 256, 0.1), [1000, 256]);
      return [be.matmul(a, w, false, true), be.linear(x, w2, be.tensor(randn(5, 1000), [1000]), be.tensor(randn(6, 5000), [5, 1000]))];
    },
  },
  {
    name: 'attention and its backward, 2 x 96 tokens, 8 heads over 2 kv heads, headDim 32 (threaded sizes)',
    run: (be) => {
      const s: AttentionShape = { B: 2, T: 96, start: 0, maxT: 96, numHeads: 8, numKvHeads: 2, headDim: 32, padLeft: Int32Array.of(0, 17) };
      const q = be.tensor(randn(7, 2 * 96 * 256), [192, 256]);
      const k = be.tensor(randn(8, 2 * 2 * 96 * 32), [2, 2, 96, 32]);
      const v = be.tensor(randn(9, 2 * 2 * 96 * 32), [2, 2, 96, 32]);
      const g = attnGrads(be, q, k, v, s);
      return [be.attention(q, k, v, s), g.dq, g.dk, g.dv];
    },
  },
];

function attnGrads(be: Backend, q: ReturnType<Backend['tensor']>, k: ReturnType<Backend['tensor']>, v: ReturnType<Backend['tensor']>, s: AttentionShape) {
  return be.attentionBackward(q, k, v, be.tensor(randn(10, q.size), q.shape), s);
}

describe.each([1, 2])('fast CPU backend, %i thread(s), against the reference', (threads) => {
  let fast: FastCpuBackend;
  beforeAll(async () => {
    fast = await FastCpuBackend.create({ ...nodeThreads(), threads });
  });
  afterAll(() => fast.close());

  it('runs on as many threads as asked', () => expect(fast.threads).toBe(threads));
  for (const c of [...opCases, ...productCases, ...bigCases]) it(c.name, () => expectSame(c, fast));
  for (const format of WEIGHT_FORMATS) for (const c of weightFormatCases(format)) it(c.name, () => expectSame(c, fast));
});

describe('fast CPU backend: repeatable', () => {
  it('gives the same bits on one thread and on two', async () => {
    const [one, two] = [await FastCpuBackend.create({ threads: 1 }), await FastCpuBackend.create({ ...nodeThreads(), threads: 2 })];
    for (const c of bigCases) {
      const [a, b] = [await readOutputs(one, await c.run(one)), await readOutputs(two, await c.run(two))];
      a.forEach((x, i) => expect(Array.from(b[i]), c.name).toEqual(Array.from(x)));
    }
    one.close();
    two.close();
  });

  it('gives a row the same bits whatever else is in its batch, as the reference does (runs must not depend on batching)', async () => {
    const be = await FastCpuBackend.create({ ...nodeThreads(), threads: 2 });
    const K = 131;
    const rows = randn(1, 37 * K);
    const w = be.tensor(randn(2, 70 * K), [70, K]);
    const batch = await be.read(be.linear(be.tensor(rows, [37, K]), w));
    for (const r of [0, 17, 36]) {
      const alone = await be.read(be.linear(be.tensor(rows.subarray(r * K, (r + 1) * K), [1, K]), w));
      expect(Array.from(alone), `row ${r}`).toEqual(Array.from(batch.subarray(r * 70, (r + 1) * 70)));
      const viaT = await be.read(be.matmul(be.tensor(rows.subarray(r * K, (r + 1) * K), [K, 1]), w, true, true));
      expect(Array.from(viaT), `row ${r}, transposed operands`).toEqual(Array.from(alone));
    }
    be.close();
  });

  it('frees what it disposes, scratch included', async () => {
    const be = await FastCpuBackend.create({ ...nodeThreads(), threads: 2 });
    const before = be.heldBytes();
    for (let round = 0; round < 2; round++) {
      const a = be.tensor(randn(1, 200 * 256), [200, 256]);
      const w = be.tensor(randn(2, 300 * 256), [300, 256]);
      const ts = [a, w, be.matmul(a, w, false, true), be.linear(a, w), be.matmul(w, a, false, true)];
      for (const t of ts) be.dispose(t);
      expect(be.heldBytes(), `after round ${round}`).toBe(before);
    }
    be.close();
  });
});

describe('fast CPU kernels binary', () => {
  it('is what scripts/build-wasm.mjs builds from the AssemblyScript sources', () => {
    expect(() => execFileSync('node', ['scripts/build-wasm.mjs', '--check'], { stdio: 'pipe' })).not.toThrow();
  });
});
