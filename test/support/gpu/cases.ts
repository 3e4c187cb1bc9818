/**
 * The op-by-op conformance cases: each builds the same inputs (from a seeded PRNG) on a backend
 * and returns the outputs to compare, so one list drives the CPU reference and the WebGPU
 * backend alike, in the browser test and in the Node (Dawn) test. Shapes are deliberately not
 * multiples of any tile or workgroup size.
 */
import { arraySource, type AttentionShape, type Backend, type Tensor } from '../../../src/gpu/backend';
import { addColumnsGradient, readColumnLogprobs } from '../../../src/gpu/gather-columns';
import { writeCacheForward } from '../../../src/gpu/ops/attention';
import { mulberry32 } from '../../../src/gpu/random';
import type { WeightFormat } from '../../../src/gpu/quant';
import type { SamplingOptions } from '../../../src/gpu/sampler';

export type Output = Tensor | Int32Array | number;
export interface OpCase {
  name: string;
  /** Relative error allowed (max abs difference over max |reference|). */
  tol?: number;
  run(be: Backend): Output[] | Promise<Output[]>;
}

export function randn(seed: number, n: number, scale = 1): Float32Array {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => (r() - 0.5) * 2 * scale);
}

const ints = (...v: number[]) => Int32Array.from(v);

/**
 * The top-k OPD term's log-probs of k target columns and their gradient: one pass over each row
 * where the backend has logSoftmaxGatherMany, a gather per column on the CPU reference. Column 3
 * repeats column 1, so a target named twice in a row must get both gradient terms.
 */
function gatherColumnsCase(R: number, V: number): OpCase {
  return {
    name: `log-probs of 4 target columns (one repeated) and their gradient, ${R} x ${V}`,
    run: async (be) => {
      const logits = be.tensor(randn(40 + V, R * V, 8), [R, V]);
      const columns = [0, 1, 2, 1].map((j) => Int32Array.from({ length: R }, (_, r) => (r * 389 + j * 97) % V));
      const logp = columns.map(() => new Float32Array(R));
      await readColumnLogprobs(be, logits, columns, logp, 0);
      const d = be.zeros([R, V]);
      addColumnsGradient(
        be,
        d,
        logits,
        columns,
        columns.map((_, j) => randn(50 + j, R)),
      );
      return [...logp.map((l) => be.tensor(l, [R])), d];
    },
  };
}

function matmulCase(M: number, K: number, N: number, transA: boolean, transB: boolean): OpCase {
  return {
    name: `matmul ${M}x${K}x${N} ${transA ? 'T' : 'N'}${transB ? 'T' : 'N'}`,
    run: (be) => {
      const a = be.tensor(randn(M * 100 + K, M * K), transA ? [K, M] : [M, K]);
      const b = be.tensor(randn(N * 100 + K, K * N), transB ? [N, K] : [K, N]);
      return [be.matmul(a, b, transA, transB)];
    },
  };
}

/** Six rows of V logits, each picked with its own uniform (spread over [0, 1], 1 included). */
function sampleCase(name: string, o: SamplingOptions, edit?: (data: Float32Array) => void, V = 5000): OpCase {
  return {
    name: `sample: ${name}`,
    tol: 1e-5,
    run: async (be) => {
      const data = randn(29, 6 * V, 4);
      edit?.(data);
      const picks = await be.sample(be.tensor(data, [6, V]), o, Float32Array.from([0.01, 0.2, 0.45, 0.5, 0.77, 1]));
      return [picks.ids, be.tensor(picks.logp, [6])];
    },
  };
}

/** The reverse-KL term over the whole vocabulary and its backward, against a teacher's log-softmax rows. */
function reverseKlCase(R: number, V: number): OpCase {
  return {
    name: `reverseKl and backward, V = ${V}${V < 256 ? ' (fewer logits than threads)' : ''}`,
    run: (be) => {
      const logits = be.tensor(randn(41, R * V, 3), [R, V]);
      const teacher = randn(42, R * V, 3);
      for (let r = 0; r < R; r++) {
        const row = teacher.subarray(r * V, (r + 1) * V);
        const max = Math.max(...row);
        const lse = max + Math.log(row.reduce((a, x) => a + Math.exp(x - max), 0));
        row.forEach((x, i) => (row[i] = x - lse));
      }
      const q = be.tensor(teacher, [R, V]);
      return [be.reverseKl(logits, q), be.reverseKlBackward(logits, q, be.tensor(randn(43, R), [R]))];
    },
  };
}

function linearCase(M: number, K: number, N: number, bias: boolean, xShape?: number[], residual = false): OpCase {
  return {
    name: `linear ${M}x${K} -> ${N}${bias ? ' + bias' : ''}${residual ? ' + residual' : ''}`,
    run: (be) => {
      const x = be.tensor(randn(1, M * K), xShape ?? [M, K]);
      const w = be.tensor(randn(2, N * K, 0.3), [N, K]);
      return [be.linear(x, w, bias ? be.tensor(randn(3, N), [N]) : undefined, residual ? be.tensor(randn(4, M * N), [M, N]) : undefined)];
    },
  };
}

/** Token-major k/v written into [B, KVH, maxT, HD] caches the way the model fills them. */
function caches(be: Backend, s: AttentionShape, seed: number): { k: Tensor; v: Tensor } {
  const n = s.B * s.numKvHeads * s.maxT * s.headDim;
  const full: AttentionShape = { ...s, T: s.start + s.T, start: 0 };
  const fill = (sd: number) => {
    const c = new Float32Array(n);
    writeCacheForward(c, randn(sd, s.B * full.T * s.numKvHeads * s.headDim), full);
    return c;
  };
  return { k: be.tensor(fill(seed), [s.B, s.numKvHeads, s.maxT, s.headDim]), v: be.tensor(fill(seed + 1), [s.B, s.numKvHeads, s.maxT, s.headDim]) };
}

function attentionCase(name: string, s: AttentionShape): OpCase {
  return {
    name: `attention ${name}`,
    run: (be) => {
      const { k, v } = caches(be, s, 11);
      const q = be.tensor(randn(12, s.B * s.T * s.numHeads * s.headDim), [s.B * s.T, s.numHeads * s.headDim]);
      return [be.attention(q, k, v, s)];
    },
  };
}

const shape = (o: Partial<AttentionShape> & Pick<AttentionShape, 'B' | 'T' | 'padLeft'>): AttentionShape => ({
  start: 0,
  maxT: o.T,
  numHeads: 4,
  numKvHeads: 2,
  headDim: 8,
  ...o,
});

export const opCases: OpCase[] = [
  matmulCase(37, 29, 70, false, false),
  matmulCase(37, 29, 70, true, false),
  matmulCase(37, 29, 70, false, true),
  matmulCase(37, 29, 70, true, true),
  matmulCase(130, 17, 65, false, false),
  // Widths divisible by 4: vec4 reads of b's rows (and of a transposed's) in the blocked kernel.
  matmulCase(33, 20, 28, false, false),
  matmulCase(16, 40, 24, true, false),
  matmulCase(3, 29, 41, false, true),
  matmulCase(2, 32, 41, false, true),
  matmulCase(1, 40, 9, true, true),
  // At most 16 wide (a LoRA rank): the narrow 64 x 16 tile, every transpose.
  matmulCase(70, 33, 16, false, false),
  matmulCase(130, 20, 5, false, true),
  matmulCase(70, 50, 12, true, false),
  matmulCase(65, 17, 16, true, true),
  linearCase(5, 48, 67, true),
  linearCase(1, 64, 100, true),
  linearCase(3, 30, 19, false),
  linearCase(6, 20, 13, true, [2, 3, 20]),
  // Short rows (a small model's LM head): whole rows per invocation, batches of up to 16.
  linearCase(16, 32, 700, true),
  linearCase(11, 12, 300, false),
  linearCase(17, 32, 70, false),
  {
    name: 'matmulAddInPlace: scaled, tiled (both transposes) and matrix-vector',
    run: (be) => {
      const c1 = be.tensor(randn(70, 40 * 9), [40, 9]);
      be.matmulAddInPlace(c1, be.tensor(randn(71, 30 * 40), [30, 40]), be.tensor(randn(72, 30 * 9), [30, 9]), true, false, 0.5);
      const c2 = be.tensor(randn(73, 3 * 20), [3, 20]);
      be.matmulAddInPlace(c2, be.tensor(randn(74, 3 * 16), [3, 16]), be.tensor(randn(75, 20 * 16), [20, 16]), false, true, 2);
      const c3 = be.tensor(randn(76, 5 * 7), [5, 7]);
      be.matmulAddInPlace(c3, be.tensor(randn(77, 5 * 12), [5, 12]), be.tensor(randn(78, 12 * 7), [12, 7]), false, false);
      return [c1, c2, c3];
    },
  },
  // Matrix-vector lanes per weight row: 8 (43 vec4 units) and 32 (130 units).
  linearCase(3, 172, 40, true),
  linearCase(2, 520, 33, false),
  // The skip connection added in the store: matvec (8 lanes, whole rows) and tiled.
  linearCase(2, 172, 37, true, undefined, true),
  linearCase(4, 12, 50, false, undefined, true),
  linearCase(70, 24, 30, true, undefined, true),
  {
    name: 'embedding, gatherRows, scatterRows',
    run: (be) => {
      const table = be.tensor(randn(4, 23 * 10), [23, 10]);
      const rows = ints(3, 0, 22, 7, 3);
      const src = be.tensor(randn(5, 3 * 10), [3, 10]);
      return [be.embedding(table, rows), be.gatherRows(table, ints(5)), be.scatterRows(src, ints(9, 0, 4), 11)];
    },
  },
  // Elementwise ops read vec4s when the length is a multiple of 4 (7 x 144), else scalars.
  ...[143, 144].map((w): OpCase => ({
    name: `add, addInPlace, 7 x ${w}`,
    run: (be) => {
      const a = be.tensor(randn(6, 7 * w), [7, w]);
      const b = be.tensor(randn(7, 7 * w), [7, w]);
      const sum = be.add(a, b, -0.75);
      be.addInPlace(a, b, 2.5);
      return [sum, a, be.add(a, b)];
    },
  })),
  {
    name: 'rmsnorm and its backward (rows, and per head)',
    run: (be) => {
      const x = be.tensor(randn(8, 5 * 37, 3), [5, 37]);
      const w = be.tensor(randn(9, 37), [37]);
      const dy = be.tensor(randn(10, 5 * 37), [5, 37]);
      const xh = be.tensor(randn(11, 3 * 4 * 6), [3, 24]);
      const wh = be.tensor(randn(12, 6), [6]);
      return [be.rmsnorm(x, w, 1e-5), be.rmsnormBackward(x, w, 1e-6, dy), be.rmsnorm(xh, wh, 1e-6)];
    },
  },
  {
    name: 'rmsnorm weight gradient, added in place (rows, and per head)',
    run: (be) => {
      const x = be.tensor(randn(83, 5 * 37, 3), [5, 37]);
      const dy = be.tensor(randn(84, 5 * 37), [5, 37]);
      const dw = be.tensor(randn(85, 37), [37]);
      be.rmsnormWeightGradAddInPlace(dw, x, 1e-5, dy);
      const xh = be.tensor(randn(86, 3 * 4 * 6), [3, 24]);
      const dyh = be.tensor(randn(87, 3 * 4 * 6), [3, 24]);
      const dwh = be.zeros([6]);
      be.rmsnormWeightGradAddInPlace(dwh, xh, 1e-6, dyh);
      return [dw, dwh];
    },
  },
  {
    name: 'embedding backward, ids repeating, added in place',
    run: (be) => {
      const dTable = be.tensor(randn(88, 23 * 10), [23, 10]);
      const ids = ints(3, 0, 22, 3, 7, 3, 0);
      be.embeddingBackwardAddInPlace(dTable, ids, be.tensor(randn(89, ids.length * 10), [ids.length, 10]));
      return [dTable];
    },
  },
  {
    name: 'rmsnorm and its backward, rows of 300 (a workgroup per row)',
    run: (be) => {
      const x = be.tensor(randn(80, 4 * 300, 3), [4, 300]);
      const w = be.tensor(randn(81, 300), [300]);
      const dy = be.tensor(randn(82, 4 * 300), [4, 300]);
      return [be.rmsnorm(x, w, 1e-5), be.rmsnormBackward(x, w, 1e-6, dy)];
    },
  },
  {
    name: 'rope, inverse rope, large positions',
    run: (be) => {
      const pos = ints(0, 5, 17, 300, 2047);
      const x = be.tensor(randn(13, 5 * 3 * 10), [5, 30]);
      const y = be.rope(x, pos, 10, 10000);
      return [y, be.rope(x, pos, 10, 1e6, true), be.rope(y, pos, 10, 10000, true)];
    },
  },
  {
    name: 'ropeWriteCache at start > 0 with GQA and padding',
    run: (be) => {
      const s = shape({ B: 2, T: 3, start: 4, maxT: 9, padLeft: ints(0, 5) });
      const kCache = be.tensor(randn(14, s.B * 2 * 9 * 8), [s.B, 2, 9, 8]);
      const vCache = be.tensor(randn(16, s.B * 2 * 9 * 8), [s.B, 2, 9, 8]);
      const q = be.tensor(randn(17, 6 * 32), [6, 32]);
      const k = be.tensor(randn(15, 6 * 16), [6, 16]);
      const v = be.tensor(randn(18, 6 * 16), [6, 16]);
      const qr = be.ropeWriteCache({ q, k, v, kCache, vCache }, ints(4, 5, 6, 0, 0, 1), 10000, s);
      return [qr, kCache, vCache];
    },
  },
  attentionCase('prefill B=2 T=5 GQA 4/2, padLeft [0, 2]', shape({ B: 2, T: 5, padLeft: ints(0, 2) })),
  attentionCase('chunk at start=3 of maxT=12, padLeft [1, 3]', shape({ B: 2, T: 4, start: 3, maxT: 12, padLeft: ints(1, 3) })),
  attentionCase('decode start=140 of 150, headDim 72, 3 kv heads of 2', {
    B: 2,
    T: 1,
    start: 140,
    maxT: 150,
    numHeads: 6,
    numKvHeads: 3,
    headDim: 72,
    padLeft: ints(0, 67),
  }),
  attentionCase('MHA, query in padding', shape({ B: 1, T: 4, numKvHeads: 4, padLeft: ints(2) })),
  // Head registers are vec4s: a head size of 6 pads its last one.
  attentionCase('headDim 6, chunk at start=2 of maxT=9', shape({ B: 2, T: 5, start: 2, maxT: 9, headDim: 6, padLeft: ints(0, 3) })),
  {
    name: 'attentionBackward GQA with padding',
    run: (be) => {
      const s = shape({ B: 2, T: 6, padLeft: ints(0, 2) });
      const { k, v } = caches(be, s, 16);
      const N = s.B * s.T;
      const q = be.tensor(randn(17, N * 32), [N, 32]);
      const d = randn(18, N * 32);
      // Padding queries output zeros by definition; their upstream gradient is never used.
      d.fill(0, 1 * s.T * 32, (1 * s.T + 2) * 32);
      const g = be.attentionBackward(q, k, v, be.tensor(d, [N, 32]), s);
      return [g.dq, g.dk, g.dv];
    },
  },
  {
    name: 'attentionBackward MHA headDim 12, T=9',
    run: (be) => {
      const s = shape({ B: 1, T: 9, numHeads: 3, numKvHeads: 3, headDim: 12, padLeft: ints(0) });
      const { k, v } = caches(be, s, 19);
      const q = be.tensor(randn(20, 9 * 36), [9, 36]);
      const g = be.attentionBackward(q, k, v, be.tensor(randn(21, 9 * 36), [9, 36]), s);
      return [g.dq, g.dk, g.dv];
    },
  },
  {
    name: 'attentionBackward GQA headDim 6, T=7',
    run: (be) => {
      const s = shape({ B: 2, T: 7, headDim: 6, padLeft: ints(0, 1) });
      const { k, v } = caches(be, s, 22);
      const N = s.B * s.T;
      const width = s.numHeads * 6;
      const d = randn(24, N * width);
      d.fill(0, s.T * width, (s.T + 1) * width);
      const g = be.attentionBackward(be.tensor(randn(23, N * width), [N, width]), k, v, be.tensor(d, [N, width]), s);
      return [g.dq, g.dk, g.dv];
    },
  },
  ...[77, 76].map((w): OpCase => ({
    name: `siluMul and its backward, 3 x ${w}`,
    run: (be) => {
      const gate = be.tensor(randn(22, 3 * w, 6), [3, w]);
      const up = be.tensor(randn(23, 3 * w), [3, w]);
      const g = be.siluMulBackward(gate, up, be.tensor(randn(24, 3 * w), [3, w]));
      return [be.siluMul(gate, up), g.dGate, g.dUp];
    },
  })),
  {
    name: 'logSoftmaxGather and backward, V = 5000',
    run: (be) => {
      const logits = be.tensor(randn(25, 3 * 5000, 8), [3, 5000]);
      const targets = ints(4999, 0, 1234);
      const r = be.logSoftmaxGather(logits, targets);
      return [r.logp, r.entropy, be.logSoftmaxGatherBackward(logits, targets, be.tensor(randn(26, 3), [3]))];
    },
  },
  {
    name: 'logSoftmaxGather, V = 37 (fewer logits than threads)',
    run: (be) => {
      const logits = be.tensor(randn(27, 2 * 37, 3), [2, 37]);
      const r = be.logSoftmaxGather(logits, ints(36, 5));
      return [r.logp, r.entropy, be.logSoftmaxGatherBackward(logits, ints(1, 2), be.tensor(randn(28, 2), [2]))];
    },
  },
  gatherColumnsCase(3, 5000),
  gatherColumnsCase(2, 37),
  reverseKlCase(3, 512),
  reverseKlCase(2, 37),
  sampleCase('greedy over 5000 with a tie', { temperature: 0, topK: 0, topP: 1 }, (data) => {
    data[2 * 5000 + 10] = 5;
    data[2 * 5000 + 4000] = 5;
  }),
  sampleCase('temperature 0.7 over 5000', { temperature: 0.7, topK: 0, topP: 1 }),
  sampleCase('top-k 40 over 5000, with ties at the cut', { temperature: 1, topK: 40, topP: 1 }, (data) => {
    // Rows whose 40th and 41st largest logits are equal: both are kept.
    for (let r = 0; r < 6; r++) data.set([3, 3, 3], r * 5000 + 100 * r);
  }),
  sampleCase('top-p 0.9 over 5000 (the default of chat models)', { temperature: 0.6, topK: 0, topP: 0.9 }),
  sampleCase('top-k 50 then top-p 0.8 at temperature 1.3', { temperature: 1.3, topK: 50, topP: 0.8 }),
  sampleCase('top-k 20 then top-p 0.9 over 300 (a narrower workgroup)', { temperature: 0.8, topK: 20, topP: 0.9 }, undefined, 300),
  sampleCase('greedy over 37', { temperature: 0, topK: 0, topP: 1 }, undefined, 37),
  sampleCase('top-p 0.5 over a peaked row (one token holds the mass)', { temperature: 1, topK: 0, topP: 0.5 }, (data) => {
    for (let r = 0; r < 6; r++) data[r * 5000 + 77 * r + 1] = 12;
  }),
  {
    name: 'sumSquares of 100003 and 17 values at once',
    tol: 1e-5,
    run: async (be) => [await be.sumSquares([be.tensor(randn(30, 100003), [100003]), be.tensor(randn(31, 17, 3), [17])])],
  },
  ...[1001, 1004].map((n): OpCase => ({
    name: `adamwInPlace, two steps, ${n} values`,
    run: (be) => {
      const p = be.tensor(randn(31, n), [n]);
      const m = be.zeros([n]);
      const v = be.zeros([n]);
      const base = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, gradScale: 0.5 };
      be.adamwInPlace(p, be.tensor(randn(32, n), [n]), m, v, { ...base, step: 1 });
      be.adamwInPlace(p, be.tensor(randn(33, n), [n]), m, v, { ...base, step: 2 });
      return [p, m, v];
    },
  })),
];

/**
 * Cases for a backend built with a tiny split threshold (1 KiB): embeddings and weights are
 * split into several buffers by rows.
 */
export const splitCases: OpCase[] = [
  {
    name: 'split: embedding and read of a table in 4 chunks',
    run: (be) => {
      const table = be.tensor(randn(40, 50 * 16), [50, 16]);
      return [table, be.embedding(table, ints(49, 0, 16, 15, 31, 32, 7))];
    },
  },
  {
    name: 'split: linear with a row-split weight (matvec and tiled)',
    run: (be) => {
      const w = be.tensor(randn(41, 70 * 16), [70, 16]);
      const bias = be.tensor(randn(42, 70), [70]);
      const x1 = be.tensor(randn(43, 3 * 16), [3, 16]);
      const x2 = be.tensor(randn(44, 9 * 16), [9, 16]);
      // The residual stays under the 1 KiB split (outputs of ops never split below the binding limit).
      const r1 = be.tensor(randn(45, 3 * 70), [3, 70]);
      return [be.linear(x1, w, bias), be.linear(x2, w), be.linear(x1, w, bias, r1)];
    },
  },
  {
    name: 'split: matmul with b split along K (accumulated) and along N',
    run: (be) => {
      const b = be.tensor(randn(45, 50 * 8), [50, 8]);
      const a = be.tensor(randn(46, 5 * 50), [5, 50]);
      const aT = be.tensor(randn(47, 50 * 5), [50, 5]);
      // aT4's rows are 4 wide: the blocked kernel reads its transposed a as vec4s, across chunks.
      const aT4 = be.tensor(randn(49, 50 * 4), [50, 4]);
      return [
        be.matmul(a, b, false, false),
        be.matmul(aT, b, true, false),
        be.matmul(be.tensor(randn(48, 4 * 8), [4, 8]), b, false, true),
        be.matmul(aT4, b, true, false),
      ];
    },
  },
  {
    name: 'split: elementwise ops, sumSquares and scatterRows on split tensors',
    run: async (be) => {
      const a = be.tensor(randn(49, 40 * 12), [40, 12]);
      const b = be.tensor(randn(50, 40 * 12), [40, 12]);
      be.addInPlace(a, b, 0.5);
      const src = be.tensor(randn(51, 3 * 12), [3, 12]);
      return [a, be.siluMul(a, b), await be.sumSquares([a, b]), be.scatterRows(src, ints(39, 2, 21), 40)];
    },
  },
  {
    name: 'split: embedding backward into a split table',
    run: (be) => {
      const dTable = be.zeros([40, 12]);
      const ids = ints(39, 2, 21, 2, 0, 39);
      be.embeddingBackwardAddInPlace(dTable, ids, be.tensor(randn(52, ids.length * 12), [ids.length, 12]));
      return [dTable];
    },
  },
];

/** Reads every output of a case as plain numbers. */
export async function readOutputs(be: Backend, outs: Output[]): Promise<Float64Array[]> {
  const res: Float64Array[] = [];
  for (const o of outs) {
    if (typeof o === 'number') res.push(Float64Array.of(o));
    else if (o instanceof Int32Array) res.push(Float64Array.from(o));
    else res.push(Float64Array.from(await be.read(o)));
  }
  return res;
}

/** max |got - want| / max |want|: the relative error the tests bound. */
export function relError(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return Infinity;
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    diff = Number.isNaN(d) ? Infinity : Math.max(diff, d);
    scale = Math.max(scale, Math.abs(want[i]));
  }
  return diff / Math.max(scale, 1e-6);
}

/**
 * One weight format through every op that reads a weight: linear (matvec with vec4 and scalar
 * loads, tiled or blocked, bias, residual), the backward through a frozen projection (dy @ W, b
 * untransposed) and the other layouts, and the embedding. Rows 64 wide fill whole blocks, 40 and
 * 7 leave a padded last group; inputs stay under 2 KiB, so that a 2 KiB split cuts only the
 * weights. Both backends store the same packed values (quant.ts), so the
 * kernels' dequantize-on-load is held to the f32 tolerance.
 */
export function weightFormatCases(format: WeightFormat): OpCase[] {
  const w = (be: Backend, seed: number, rows: number, cols: number) => be.weight(arraySource(randn(seed, rows * cols, 0.5), [rows, cols]), format);
  const x = (be: Backend, seed: number, m: number, k: number) => be.tensor(randn(seed, m * k), [m, k]);
  return [
    { name: `${format} weights: the stored values read back`, run: (be) => [w(be, 1, 70, 64), w(be, 2, 9, 7), w(be, 3, 33, 40)] },
    {
      name: `${format} weights: linear by matvec and by tiles, vec4 and scalar rows, bias and residual`,
      run: (be) => {
        const [wide, odd, mid] = [w(be, 1, 70, 64), w(be, 2, 9, 7), w(be, 3, 33, 40)];
        return [
          be.linear(x(be, 7, 2, 64), wide, be.tensor(randn(8, 70), [70])),
          be.linear(x(be, 9, 7, 64), wide),
          be.linear(x(be, 10, 1, 7), odd),
          be.linear(x(be, 11, 3, 40), mid),
          be.linear(x(be, 12, 12, 40), mid, undefined, x(be, 13, 12, 33)),
        ];
      },
    },
    {
      name: `${format} weights: dy @ W (the backward through a frozen projection), x @ W^T, a^T @ W`,
      run: (be) => {
        const [wide, mid] = [w(be, 1, 70, 64), w(be, 3, 33, 40)];
        return [
          be.matmul(x(be, 14, 5, 70), wide, false, false),
          be.matmul(x(be, 15, 6, 33), mid, false, false),
          be.matmul(x(be, 16, 3, 64), wide, false, true),
          be.matmul(x(be, 17, 70, 6), wide, true, false),
        ];
      },
    },
    {
      name: `${format} weights: embedding rows`,
      run: (be) => [be.embedding(w(be, 1, 70, 64), ints(69, 0, 33, 33)), be.gatherRows(w(be, 3, 33, 40), ints(32, 1))],
    },
  ];
}
