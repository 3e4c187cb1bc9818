/**
 * How far a weight format moves a model from its f32 self, measured the way other WebGPU
 * engines report it: under teacher forcing on the same token sequences, the mean absolute
 * difference of the target tokens' log-probs, and the top-1 agreement (llama.cpp's WebGPU
 * benchmark calls it "CPU match"): how often both pick the same most likely next token.
 *
 * The sequences are the f32 model's own samples (temperature 1, seeded) after a few prompts: text
 * the model finds likely, so a top-1 flip is a real change of prediction rather than a tie among
 * tokens it never expects.
 */
import { generate } from './generate';
import { CausalLM, type Weights } from './model';
import { roundTrip, type Codec } from './quant';
import { score, type ScoreItem } from './score';

export interface Agreement {
  /** Positions compared (completion tokens over all sequences). */
  positions: number;
  meanAbsLogpDiff: number;
  maxAbsLogpDiff: number;
  /** Fraction of positions whose most likely next token is the same under both models. */
  top1Agreement: number;
}

/** Teacher-forced comparison of `model` against `reference` on the same sequences. */
export async function agreement(reference: CausalLM, model: CausalLM, items: ScoreItem[]): Promise<Agreement> {
  const [want, got] = [await score(reference, items, { topK: 1 }), await score(model, items, { topK: 1 })];
  let positions = 0;
  let sumAbs = 0;
  let maxAbs = 0;
  let same = 0;
  want.forEach((w, i) => {
    w.logprobs.forEach((lp, t) => {
      const d = Math.abs(lp - got[i].logprobs[t]);
      sumAbs += d;
      maxAbs = Math.max(maxAbs, d);
      if (w.topIds![t][0] === got[i].topIds![t][0]) same++;
      positions++;
    });
  });
  return { positions, meanAbsLogpDiff: positions ? sumAbs / positions : 0, maxAbsLogpDiff: maxAbs, top1Agreement: positions ? same / positions : 1 };
}

/** `count` sequences the reference samples after `prompts` (cycled), `tokens` new tokens each. */
export async function sampledSequences(reference: CausalLM, prompts: number[][], count: number, tokens: number, seed = 1): Promise<ScoreItem[]> {
  const starts = Array.from({ length: count }, (_, i) => prompts[i % prompts.length]);
  const out = await generate(reference, starts, { maxNewTokens: tokens, sampling: { temperature: 1, topK: 0, topP: 1 }, seed });
  return out.map((g, i) => ({ prompt: starts[i], completion: g.tokens }));
}

/**
 * A copy of an f32 model whose matrices hold what `codec` would store, as f32: how a 4-bit codec
 * the engine does not load (NF4) is measured beside the ones it does. Norms and biases are shared.
 */
export async function fakeQuantized(model: CausalLM, codec: Codec): Promise<CausalLM> {
  const be = model.backend;
  const weights: Weights = new Map();
  for (const [name, t] of model.weights) {
    weights.set(name, t.shape.length === 2 ? be.tensor(roundTrip(await be.read(t), t.shape[1], codec), t.shape) : t);
  }
  return new CausalLM(be, model.config, weights);
}
