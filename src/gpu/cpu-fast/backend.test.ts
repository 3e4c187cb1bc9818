/**
 * The fast CPU backend against the CPU reference: every conformance case (the WebGPU kernels'
 * list and tolerance), shapes that cut the SIMD tiles and quads at every edge, sizes large enough
 * to be split over threads, one and two threads, and the same bits whatever the thread count.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AttentionShape, Backend } from '../backend';
import { CpuBackend } from '../cpu/backend';
import { opCases, randn, readOutputs, relError, weightFormatCases, type OpCase } from '../../../test/support/gpu/cases';
import { addColumnsGradient, readColumnLogprobs } from '../gather-columns';
import { WEIGHT_FORMATS } from '../quant';
import { FastCpuBackend } from './backend';
import { nodeThreads } from './threads-node';

const TOL = 1e-4;
/**
 * Multiply-adds from which the two-thread backends here split a job: the backend's default is set
 * by what waking a thread costs, far above the "threaded sizes" below, which are kept small.
 */
const SPLIT_WORK = 1 << 18;

async function expectSame(c: OpCase, fast: Backend): Promise<void> {
  const want = await readOutputs(new CpuBackend(), await c.run(new CpuBackend()));
  const got = await readOutputs(fast, await c.run(fast));
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => {
    const err = relError(g, want[i]);
    expect(err, `${c.name}: output ${i} (${want[i].length} values) relative error ${err}`).toBeLessThan(c.tol ?? TOL);
  });
}

/**
 * Every layout, with M and N on and off the 2 x 4 tile, M past a packed block of 32 rows, and K
 * odd (lane sums, then a scalar tail) or whole quads (the four sums of a tile added as one vector).
 */
const productLayouts: [boolean, boolean, number][] = [
  [false, false, 27],
  [true, false, 27],
  [false, true, 27],
  [true, true, 27],
  [false, true, 36],
  [true, false, 36],
];
const productCases: OpCase[] = [1, 3, 4, 8, 9, 33].flatMap((M) =>
  productLayouts.map(([ta, tb, K]) => ({
    name: `matmul ${M}x${K}x${M === 33 ? 70 : 13} ${ta ? 'T' : 'N'}${tb ? 'T' : 'N'}, then added in place scaled`,
    run: (be: Backend) => {
      const N = M === 33 ? 70 : 13;
      const a = be.tensor(randn(M, M * K), ta ? [K, M] : [M, K]);
      const b = be.tensor(randn(N, K * N), tb ? [N, K] : [K, N]);
      const c = be.matmul(a, b, ta, tb);
      const d = be.tensor(randn(5, M * N), [M, N]);
      be.matmulAddInPlace(d, a, b, ta, tb, -0.5);
      return [c, d];
    },
  })),
);

const bigCases: OpCase[] = [
  {
    name: 'matmul 70x130x45 in every layout, added in place (threaded sizes; a transposed x over two packed blocks)',
    run: (be) => {
      const [M, K, N] = [70, 130, 45];
      return [false, true].flatMap((ta) =>
        [false, true].map((tb) => {
          const a = be.tensor(randn(13, M * K), ta ? [K, M] : [M, K]);
          const b = be.tensor(randn(14, K * N), tb ? [N, K] : [K, N]);
          const c = be.tensor(randn(15, M * N), [M, N]);
          be.matmulAddInPlace(c, a, b, ta, tb, 0.75);
          return c;
        }),
      );
    },
  },
  {
    name: 'matmul 37x4099x9 in every layout, added in place (threaded sizes; K in chunks, the last cut)',
    run: (be) => {
      const [M, K, N] = [37, 4099, 9];
      return [false, true].flatMap((ta) =>
        [false, true].map((tb) => {
          const a = be.tensor(randn(16, M * K), ta ? [K, M] : [M, K]);
          const b = be.tensor(randn(17, K * N), tb ? [N, K] : [K, N]);
          const c = be.tensor(randn(18, M * N), [M, N]);
          be.matmulAddInPlace(c, a, b, ta, tb, 0.75);
          return c;
        }),
      );
    },
  },
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
  {
    name: 'logSoftmaxGather and backward, 203 x 1031 (threaded sizes)',
    run: (be) => {
      const logits = be.tensor(randn(11, 203 * 1031, 8), [203, 1031]);
      const targets = Int32Array.from({ length: 203 }, (_, r) => (r * 389) % 1031);
      const g = be.logSoftmaxGather(logits, targets);
      return [g.logp, g.entropy, be.logSoftmaxGatherBackward(logits, targets, be.tensor(randn(12, 203), [203]))];
    },
  },
  {
    // The fast backend in one pass over each row (logSoftmaxGatherMany), the reference a gather per column.
    name: 'log-probs of 3 target columns and their gradient, 203 x 1031 (threaded sizes)',
    run: async (be) => {
      const logits = be.tensor(randn(19, 203 * 1031, 8), [203, 1031]);
      const columns = [0, 1, 2].map((j) => Int32Array.from({ length: 203 }, (_, r) => (r * 389 + j * 97) % 1031));
      const logp = columns.map(() => new Float32Array(203));
      await readColumnLogprobs(be, logits, columns, logp, 0);
      const d = be.zeros([203, 1031]);
      addColumnsGradient(
        be,
        d,
        logits,
        columns,
        [20, 21, 22].map((seed) => randn(seed, 203)),
      );
      return [...logp.map((l) => be.tensor(l, [203])), d];
    },
  },
  {
    name: 'reverseKl and backward, 67 x 517, a teacher -Infinity where p underflows (threaded sizes)',
    run: (be) => {
      const [R, V] = [67, 517];
      const x = randn(13, R * V, 3);
      const teacher = randn(14, R * V, 3).map((v) => v - 8);
      for (let r = 0; r < R; r++) {
        x[r * V + ((r * 7) % V)] = -1000;
        teacher[r * V + ((r * 7) % V)] = -Infinity;
      }
      const logits = be.tensor(x, [R, V]);
      const q = be.tensor(teacher, [R, V]);
      return [be.reverseKl(logits, q), be.reverseKlBackward(logits, q, be.tensor(randn(15, R), [R]))];
    },
  },
  {
    name: 'siluMul and its backward on 70001 values, gates out to +-100 (threaded sizes)',
    run: (be) => {
      const n = 70001;
      const gate = be.tensor(randn(16, n, 100), [n]);
      const up = be.tensor(randn(17, n), [n]);
      const g = be.siluMulBackward(gate, up, be.tensor(randn(18, n), [n]));
      return [be.siluMul(gate, up), g.dGate, g.dUp];
    },
  },
  {
    name: 'add and addInPlace on 300001 values (threaded sizes)',
    run: (be) => {
      const a = be.tensor(randn(19, 300001), [300001]);
      const b = be.tensor(randn(20, 300001), [300001]);
      const sum = be.add(a, b, 0.3);
      be.addInPlace(a, b, -1.7);
      return [sum, a];
    },
  },
  {
    name: 'rmsnorm, its backward and weight gradient, 4099 x 67 rows (threaded sizes)',
    run: (be) => {
      const x = be.tensor(randn(21, 4099 * 67, 3), [4099, 67]);
      const w = be.tensor(randn(22, 67), [67]);
      const dy = be.tensor(randn(23, 4099 * 67), [4099, 67]);
      const dw = be.tensor(randn(24, 67), [67]);
      be.rmsnormWeightGradAddInPlace(dw, x, 1e-5, dy);
      return [be.rmsnorm(x, w, 1e-5), be.rmsnormBackward(x, w, 1e-6, dy), dw];
    },
  },
  {
    name: 'adamwInPlace on 300007 values, two steps, and sumSquares (threaded sizes)',
    tol: 1e-5,
    run: async (be) => {
      const n = 300007;
      const p = be.tensor(randn(25, n), [n]);
      const [m, v] = [be.zeros([n]), be.zeros([n])];
      const base = { lr: 1e-3, beta1: 0.9, beta2: 0.98, eps: 1e-8, weightDecay: 0.1, gradScale: 0.7 };
      be.adamwInPlace(p, be.tensor(randn(26, n), [n]), m, v, { ...base, step: 1 });
      be.adamwInPlace(p, be.tensor(randn(27, n), [n]), m, v, { ...base, step: 2 });
      return [p, m, v, await be.sumSquares([p, be.tensor(randn(28, 9), [9])])];
    },
  },
  ...[
    { temperature: 0, topK: 0, topP: 1 },
    { temperature: 1, topK: 0, topP: 1 },
    { temperature: 0.8, topK: 40, topP: 0.9 },
  ].map((o): OpCase => ({
    name: `sample 33 rows of 1031, temperature ${o.temperature}, top-k ${o.topK}, top-p ${o.topP} (threaded sizes)`,
    tol: 1e-5,
    run: async (be) => {
      const picks = await be.sample(
        be.tensor(randn(29, 33 * 1031, 4), [33, 1031]),
        o,
        Float32Array.from({ length: 33 }, (_, r) => r / 32),
      );
      return [picks.ids, be.tensor(picks.logp, [33])];
    },
  })),
];

function attnGrads(be: Backend, q: ReturnType<Backend['tensor']>, k: ReturnType<Backend['tensor']>, v: ReturnType<Backend['tensor']>, s: AttentionShape) {
  return be.attentionBackward(q, k, v, be.tensor(randn(10, q.size), q.shape), s);
}

describe.each([1, 2])('fast CPU backend, %i thread(s), against the reference', (threads) => {
  let fast: FastCpuBackend;
  beforeAll(async () => {
    fast = await FastCpuBackend.create({ ...nodeThreads(), threads, parallelWork: SPLIT_WORK });
  });
  afterAll(() => fast.close());

  it('runs on as many threads as asked', () => expect(fast.threads).toBe(threads));
  for (const c of [...opCases, ...productCases, ...bigCases]) it(c.name, () => expectSame(c, fast));
  for (const format of WEIGHT_FORMATS) for (const c of weightFormatCases(format)) it(c.name, () => expectSame(c, fast));
});

/** The [cols, rows] transpose of `v` [rows, cols]. */
function transpose(v: Float32Array, rows: number, cols: number): Float32Array {
  return Float32Array.from({ length: v.length }, (_, i) => v[(i % rows) * cols + Math.floor(i / rows)]);
}

describe('fast CPU backend: repeatable', () => {
  it('gives the same bits on one thread and on two', async () => {
    const [one, two] = [await FastCpuBackend.create({ threads: 1 }), await FastCpuBackend.create({ ...nodeThreads(), threads: 2, parallelWork: SPLIT_WORK })];
    for (const c of bigCases) {
      const [a, b] = [await readOutputs(one, await c.run(one)), await readOutputs(two, await c.run(two))];
      a.forEach((x, i) => expect(Array.from(b[i]), c.name).toEqual(Array.from(x)));
    }
    one.close();
    two.close();
  });

  // K = 4099 runs in chunks of k, its lane sums kept between them.
  it.each([131, 4099])(
    'gives a row the same bits whatever else is in its batch and however the operands are stored, K = %i (runs must not depend on batching)',
    async (K) => {
      const be = await FastCpuBackend.create({ ...nodeThreads(), threads: 2, parallelWork: SPLIT_WORK });
      const rows = randn(1, 37 * K);
      const w = be.tensor(randn(2, 70 * K), [70, K]);
      const batch = await be.read(be.linear(be.tensor(rows, [37, K]), w));
      for (const r of [0, 17, 36]) {
        const alone = await be.read(be.linear(be.tensor(rows.subarray(r * K, (r + 1) * K), [1, K]), w));
        expect(Array.from(alone), `row ${r}`).toEqual(Array.from(batch.subarray(r * 70, (r + 1) * 70)));
        const viaT = await be.read(be.matmul(be.tensor(rows.subarray(r * K, (r + 1) * K), [K, 1]), w, true, true));
        expect(Array.from(viaT), `row ${r}, transposed operands`).toEqual(Array.from(alone));
      }
      // The backward's layouts (w stored [K, N], x stored [K, M]) sum in the same order as the forward's.
      const wT = be.tensor(transpose(await be.read(w), 70, K), [K, 70]);
      const xT = be.tensor(transpose(rows, 37, K), [K, 37]);
      for (const [x, ta, v, tb] of [
        [be.tensor(rows, [37, K]), false, wT, false],
        [xT, true, w, true],
        [xT, true, wT, false],
      ] as const) {
        const got = await be.read(be.matmul(x, v, ta, tb));
        expect(Array.from(got), `${ta ? 'T' : 'N'}${tb ? 'T' : 'N'}`).toEqual(Array.from(batch));
      }
      // A weight gradient's layout with fewer columns than rows, which runs as its transpose.
      const swapped = await be.read(be.matmul(wT, xT, true, false));
      expect(Array.from(swapped), 'TN as its transpose').toEqual(Array.from(transpose(batch, 37, 70)));
      be.close();
    },
  );

  it('gives each target column the bits logSoftmaxGather gives it alone', async () => {
    const be = await FastCpuBackend.create({ ...nodeThreads(), threads: 2, parallelWork: SPLIT_WORK });
    const logits = be.tensor(randn(23, 37 * 1031, 8), [37, 1031]);
    const columns = [0, 1].map((j) => Int32Array.from({ length: 37 }, (_, r) => (r * 389 + j * 97) % 1031));
    const many = columns.map(() => new Float32Array(37));
    await readColumnLogprobs(be, logits, columns, many, 0);
    for (const [j, column] of columns.entries()) expect(Array.from(many[j])).toEqual(Array.from(await be.read(be.logSoftmaxGather(logits, column).logp)));
    be.close();
  });

  it('frees what it disposes, scratch included', async () => {
    const be = await FastCpuBackend.create({ ...nodeThreads(), threads: 2, parallelWork: SPLIT_WORK });
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
