/**
 * Every CPU reference backward against central finite differences of its forward, in f64.
 * These are the gradients the WebGPU kernels are then checked against.
 */
import { describe, expect, it } from 'vitest';
import type { AttentionShape } from '../backend';
import { mulberry32 } from '../random';
import { attentionBackward, attentionForward, writeCacheForward } from './attention';
import { linearForward, matmulForward } from './matmul';
import { embeddingBackwardAdd } from './embedding';
import { rmsnormBackward, rmsnormForward, rmsnormWeightGradAdd } from './rmsnorm';
import { ropeForward } from './rope';
import { reverseKlBackward, reverseKlForward } from './reverse-kl';
import { logSoftmaxGatherBackward, logSoftmaxGatherForward } from './softmax';
import { siluMulBackward, siluMulForward } from './swiglu';

const rand = mulberry32(7);
const randn = (n: number, scale = 1) => Float64Array.from({ length: n }, () => (rand() - 0.5) * 2 * scale);
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((s, x, i) => s + x * b[i], 0);

/** d/dx of sum(f(x) * w), numerically, for every element of x. */
function numericGrad(f: (x: Float64Array) => ArrayLike<number>, x: Float64Array, w: ArrayLike<number>, h = 1e-6): Float64Array {
  const g = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    const keep = x[i];
    x[i] = keep + h;
    const up = dot(f(x), w);
    x[i] = keep - h;
    const down = dot(f(x), w);
    x[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

function expectClose(a: ArrayLike<number>, b: ArrayLike<number>, tol = 1e-6) {
  expect(a.length).toBe(b.length);
  const scale = Math.max(1e-3, ...Array.from(b, Math.abs));
  for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i]) / scale).toBeLessThan(tol);
}

describe('CPU reference gradients vs finite differences (f64)', () => {
  it('rmsnorm', () => {
    const x = randn(3 * 8);
    const w = randn(8);
    const dy = randn(24);
    expectClose(
      rmsnormBackward(x, w, 1e-5, dy),
      numericGrad((v) => rmsnormForward(v, w, 1e-5), x, dy),
    );
  });

  it('rmsnorm: the weight gradient (full fine-tuning)', () => {
    const x = randn(5 * 8);
    const w = randn(8);
    const dy = randn(40);
    const dw = new Float64Array(8).fill(0.25);
    rmsnormWeightGradAdd(dw, x, 1e-5, dy);
    expectClose(
      dw.map((g) => g - 0.25),
      numericGrad((v) => rmsnormForward(x, v, 1e-5), w, dy),
    );
  });

  it('embedding: the table gradient, with a repeated id', () => {
    const D = 3;
    const table = randn(6 * D);
    const ids = Int32Array.from([4, 1, 4, 0]);
    const gather = (t: Float64Array) => Float64Array.from({ length: ids.length * D }, (_, i) => t[ids[Math.floor(i / D)] * D + (i % D)]);
    const dOut = randn(ids.length * D);
    const dTable = new Float64Array(table.length);
    embeddingBackwardAdd(dTable, ids, dOut, D);
    expectClose(dTable, numericGrad(gather, table, dOut));
  });

  it('rope: the inverse rotation is the backward pass', () => {
    const pos = Int32Array.from([0, 3, 17]);
    const x = randn(3 * 2 * 8);
    const dy = randn(x.length);
    expectClose(
      ropeForward(dy, pos, 8, 10000, true),
      numericGrad((v) => ropeForward(v, pos, 8, 10000), x, dy),
    );
  });

  it('silu * up', () => {
    const gate = randn(20, 3);
    const up = randn(20);
    const dh = randn(20);
    const g = siluMulBackward(gate, up, dh);
    expectClose(
      g.dGate,
      numericGrad((v) => siluMulForward(v, up), gate, dh),
    );
    expectClose(
      g.dUp,
      numericGrad((v) => siluMulForward(gate, v), up, dh),
    );
  });

  it('log-softmax gather', () => {
    const logits = randn(3 * 11, 2);
    const targets = Int32Array.from([4, 0, 10]);
    const dlogp = randn(3);
    const fwd = (v: Float64Array) => logSoftmaxGatherForward(v, targets).logp;
    expectClose(logSoftmaxGatherBackward(logits, targets, dlogp), numericGrad(fwd, logits, dlogp));
  });

  it('reverse KL over the whole vocabulary, against the teacher log-probs of each row', () => {
    const logits = randn(3 * 11, 2);
    const teacher = new Float64Array(3 * 11);
    for (let r = 0; r < 3; r++) {
      const row = randn(11, 3);
      const lse = Math.log(row.reduce((a, x) => a + Math.exp(x), 0));
      row.forEach((x, i) => (teacher[r * 11 + i] = x - lse));
    }
    const dkl = randn(3);
    expectClose(
      reverseKlBackward(logits, teacher, dkl),
      numericGrad((v) => reverseKlForward(v, teacher, 3), logits, dkl),
    );
    // The teacher's own distribution: zero.
    const same = Float64Array.from(teacher);
    reverseKlForward(same, teacher, 3).forEach((x) => expect(Math.abs(x)).toBeLessThan(1e-12));
  });

  it('matmul with every transpose combination is consistent with the plain product', () => {
    const a = randn(3 * 5);
    const b = randn(5 * 4);
    const plain = matmulForward(a, b, 3, 5, 4, false, false);
    const aT = new Float64Array(15);
    const bT = new Float64Array(20);
    for (let i = 0; i < 3; i++) for (let k = 0; k < 5; k++) aT[k * 3 + i] = a[i * 5 + k];
    for (let k = 0; k < 5; k++) for (let j = 0; j < 4; j++) bT[j * 5 + k] = b[k * 4 + j];
    expectClose(matmulForward(aT, b, 3, 5, 4, true, false), plain);
    expectClose(matmulForward(a, bT, 3, 5, 4, false, true), plain);
    expectClose(matmulForward(aT, bT, 3, 5, 4, true, true), plain);
  });

  it('causal GQA attention with left padding: dq, dk, dv', () => {
    const s: AttentionShape = { B: 2, T: 5, start: 0, maxT: 5, numHeads: 4, numKvHeads: 2, headDim: 4, padLeft: Int32Array.from([0, 2]) };
    const N = s.B * s.T;
    const q = randn(N * 16);
    const kTok = randn(N * 8);
    const vTok = randn(N * 8);
    const toCache = (x: Float64Array) => {
      const c = new Float64Array(s.B * s.numKvHeads * s.maxT * s.headDim);
      writeCacheForward(c, x, s);
      return c;
    };
    const dOut = randn(N * 16);
    // Padding queries produce zeros by definition; their upstream gradient is irrelevant.
    for (let t = 0; t < 2; t++) dOut.fill(0, (1 * s.T + t) * 16, (1 * s.T + t + 1) * 16);
    const g = attentionBackward(q, toCache(kTok), toCache(vTok), dOut, s);
    expectClose(
      g.dq,
      numericGrad((v) => attentionForward(v, toCache(kTok), toCache(vTok), s), q, dOut),
    );
    expectClose(
      g.dk,
      numericGrad((v) => attentionForward(q, toCache(v), toCache(vTok), s), kTok, dOut),
    );
    expectClose(
      g.dv,
      numericGrad((v) => attentionForward(q, toCache(kTok), toCache(v), s), vTok, dOut),
    );
  });
});

describe('CPU matmul kernel', () => {
  it('matmul with every transpose layout, and linear, give the plain one-sum-at-a-time loop bit for bit, in f32 and f64, for widths that are and are not a multiple of four', () => {
    // The definition: each output's sum starts at its bias and runs over k in order, in f64.
    const plain = (
      a: Float32Array | Float64Array,
      b: Float32Array | Float64Array,
      bias: ArrayLike<number> | undefined,
      M: number,
      K: number,
      N: number,
      transA: boolean,
      transB: boolean,
    ) => {
      const out = a instanceof Float32Array ? new Float32Array(M * N) : new Float64Array(M * N);
      for (let i = 0; i < M; i++)
        for (let j = 0; j < N; j++) {
          let s = bias ? bias[j] : 0;
          for (let k = 0; k < K; k++) s += (transA ? a[k * M + i] : a[i * K + k]) * (transB ? b[j * K + k] : b[k * N + j]);
          out[i * N + j] = s;
        }
      return out;
    };
    for (const [M, K, N] of [
      [3, 29, 70],
      [1, 64, 512],
      [5, 7, 3],
      [2, 1, 9],
    ]) {
      for (const f32 of [true, false]) {
        const make = (n: number) => (f32 ? Float32Array.from(randn(n)) : randn(n));
        const a = make(M * K);
        const b = make(K * N);
        for (const transA of [false, true]) {
          for (const transB of [false, true]) expect(matmulForward(a, b, M, K, N, transA, transB)).toEqual(plain(a, b, undefined, M, K, N, transA, transB));
        }
        const bias = make(N);
        expect(linearForward(a, b, bias, M, K, N)).toEqual(plain(a, b, bias, M, K, N, false, true));
      }
    }
  });
});
