/**
 * The ops of a training step besides the products, each timed on the reference backend and on
 * the fast one (one thread, all threads) in the same run, on the same inputs: the loss's
 * log-softmax gather, a top-k set's log-probs and reverse KL, SiLU-mul, RMSNorm, add, sampling, the gradient norm and
 * AdamW. `speedup` is the reference's median over the fast backend's: what running the op as a
 * SIMD kernel buys, where the step's tokens/s mixes it with everything else.
 *
 * Shapes are a stories260K-sized model's (width 64, MLP 172, vocabulary 512) over the workload's
 * training batch, and a full fine-tune of its 260k parameters for the optimizer.
 */
import type { Backend, Tensor } from '../../src/gpu/backend';
import { addColumnsGradient, readColumnLogprobs } from '../../src/gpu/gather-columns';
import { randn } from '../../test/support/gpu/cases';
import { rate, repsFor, round, timeMs, warmUp } from './stats';
import { isSkipped, type Maybe, type Rate } from './types';
import type { Workload } from './workload';

export interface OpCell {
  shape: string;
  ms: { reference: Rate; oneThread: Rate; allThreads: Rate };
  /** Reference median over each fast median. */
  speedup: { oneThread: number; allThreads: number };
}

interface OpBench {
  name: string;
  shape: number[];
  /** The op's inputs on a backend, made once and disposed after its timings. */
  inputs(be: Backend): Tensor[];
  /** One call; tensors it returns are disposed after it. */
  run(be: Backend, xs: Tensor[]): Tensor[] | Promise<unknown>;
}

const WIDTH = 64;
const MLP = 172;
const VOCAB = 512;
const PARAMS = 262_144;
/** Members of a top-k OPD set. */
const TOP_K = 8;
/** A decode batch, for sampling. */
const DECODE_ROWS = 16;

function random(be: Backend, seed: number, shape: number[], scale = 1): Tensor {
  return be.tensor(
    randn(
      seed,
      shape.reduce((a, b) => a * b, 1),
      scale,
    ),
    shape,
  );
}

/** The op benches; `tokens` is the training batch's tokens, every one a loss row. */
function opBenches(tokens: number): OpBench[] {
  const targets = Int32Array.from({ length: tokens }, (_, r) => (r * 389) % VOCAB);
  const uniforms = Float32Array.from({ length: DECODE_ROWS }, (_, r) => (r + 0.5) / DECODE_ROWS);
  const logits = [tokens, VOCAB];
  const members = Array.from({ length: TOP_K }, (_, j) => Int32Array.from({ length: tokens }, (_, r) => (r * 389 + j * 97) % VOCAB));
  const memberGrads = members.map((_, j) => randn(20 + j, tokens));
  const mlp = [tokens, MLP];
  const hidden = [tokens, WIDTH];
  let step = 0;
  return [
    { name: 'logSoftmaxGather', shape: logits, inputs: (be) => [random(be, 1, logits, 4)], run: (be, [l]) => Object.values(be.logSoftmaxGather(l, targets)) },
    {
      name: 'logSoftmaxGatherBackward',
      shape: logits,
      inputs: (be) => [random(be, 1, logits, 4), random(be, 2, [tokens])],
      run: (be, [l, g]) => [be.logSoftmaxGatherBackward(l, targets, g)],
    },
    {
      // The top-k OPD term: one pass over each row on the fast backend, a gather per column on the reference.
      name: `top-${TOP_K} set's log-probs and their gradient`,
      shape: logits,
      inputs: (be) => [random(be, 1, logits, 4), be.zeros(logits)],
      run: async (be, [l, d]) => {
        await readColumnLogprobs(
          be,
          l,
          members,
          members.map(() => new Float32Array(tokens)),
          0,
        );
        addColumnsGradient(be, d, l, members, memberGrads);
      },
    },
    { name: 'reverseKl', shape: logits, inputs: (be) => [random(be, 1, logits, 4), random(be, 3, logits, 4)], run: (be, [l, q]) => [be.reverseKl(l, q)] },
    {
      name: 'reverseKlBackward',
      shape: logits,
      inputs: (be) => [random(be, 1, logits, 4), random(be, 3, logits, 4), random(be, 2, [tokens])],
      run: (be, [l, q, g]) => [be.reverseKlBackward(l, q, g)],
    },
    { name: 'siluMul', shape: mlp, inputs: (be) => [random(be, 4, mlp, 3), random(be, 5, mlp)], run: (be, [g, u]) => [be.siluMul(g, u)] },
    {
      name: 'siluMulBackward',
      shape: mlp,
      inputs: (be) => [random(be, 4, mlp, 3), random(be, 5, mlp), random(be, 6, mlp)],
      run: (be, [g, u, d]) => Object.values(be.siluMulBackward(g, u, d)),
    },
    { name: 'rmsnorm', shape: hidden, inputs: (be) => [random(be, 7, hidden, 3), random(be, 8, [WIDTH])], run: (be, [x, w]) => [be.rmsnorm(x, w, 1e-5)] },
    {
      name: 'rmsnormBackward and its weight gradient',
      shape: hidden,
      inputs: (be) => [random(be, 7, hidden, 3), random(be, 8, [WIDTH]), random(be, 9, hidden), be.zeros([WIDTH])],
      run: (be, [x, w, dy, dw]) => {
        be.rmsnormWeightGradAddInPlace(dw, x, 1e-5, dy);
        return [be.rmsnormBackward(x, w, 1e-5, dy)];
      },
    },
    {
      name: 'add and addInPlace',
      shape: hidden,
      inputs: (be) => [random(be, 10, hidden), random(be, 11, hidden)],
      run: (be, [a, b]) => {
        be.addInPlace(a, b, 1e-3);
        return [be.add(a, b)];
      },
    },
    ...[0, 1].map((temperature): OpBench => ({
      name: `sample, temperature ${temperature}`,
      shape: [DECODE_ROWS, VOCAB],
      inputs: (be) => [random(be, 12, [DECODE_ROWS, VOCAB], 4)],
      run: (be, [l]) => be.sample(l, { temperature, topK: 0, topP: 1 }, uniforms),
    })),
    {
      name: 'sumSquares and adamwInPlace',
      shape: [PARAMS],
      inputs: (be) => [random(be, 13, [PARAMS]), random(be, 14, [PARAMS]), be.zeros([PARAMS]), be.zeros([PARAMS])],
      run: async (be, [p, g, m, v]) => {
        const norm = Math.sqrt(await be.sumSquares([g]));
        be.adamwInPlace(p, g, m, v, { lr: 1e-3, beta1: 0.9, beta2: 0.98, eps: 1e-8, weightDecay: 0.1, step: ++step, gradScale: 1 / Math.max(1, norm) });
      },
    },
  ];
}

async function timeOp(be: Backend, b: OpBench, w: Workload): Promise<Maybe<Rate>> {
  const xs = b.inputs(be);
  const call = async () => {
    const out = await b.run(be, xs);
    if (Array.isArray(out)) for (const t of out) be.dispose(t);
  };
  try {
    const warm = await warmUp(call, w.reps, w.budgetMs);
    if (isSkipped(warm)) return warm;
    const ms: number[] = [];
    for (let i = repsFor(warm, w.reps, w.maxReps, w.cheapMs); i > 0; i--) ms.push(await timeMs(call));
    return rate(ms, warm.warmups);
  } finally {
    for (const t of xs) be.dispose(t);
  }
}

export async function measureOps(reference: Backend, one: Backend, all: Backend, w: Workload): Promise<Record<string, Maybe<OpCell>>> {
  const out: Record<string, Maybe<OpCell>> = {};
  for (const b of opBenches(w.train.batch * w.promptTokens)) {
    const [r, o, a] = [await timeOp(reference, b, w), await timeOp(one, b, w), await timeOp(all, b, w)];
    const skipped = [r, o, a].find(isSkipped);
    if (skipped) {
      out[b.name] = skipped;
      continue;
    }
    const [ref, oneT, allT] = [r, o, a] as Rate[];
    const over = (x: Rate) => round(ref.median / x.median);
    out[b.name] = {
      shape: `[${b.shape.join(', ')}]`,
      ms: { reference: ref, oneThread: oneT, allThreads: allT },
      speedup: { oneThread: over(oneT), allThreads: over(allT) },
    };
  }
  return out;
}
