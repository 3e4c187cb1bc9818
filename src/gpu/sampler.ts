/**
 * Token sampling from one row of logits: temperature, top-k, top-p (nucleus), or greedy.
 * Runs on the CPU over logits read back once per step; greedy decoding never reads logits.
 */
export interface SamplingOptions {
  /** 0 means greedy (argmax). */
  temperature: number;
  topK: number;
  topP: number;
}

export const GREEDY: SamplingOptions = { temperature: 0, topK: 0, topP: 1 };

/** log_softmax(logits)[token] of the raw distribution (temperature 1, no truncation). */
export function logProbOf(logits: Float32Array, token: number): number {
  let max = -Infinity;
  for (const x of logits) if (x > max) max = x;
  let sum = 0;
  for (const x of logits) sum += Math.exp(x - max);
  return logits[token] - max - Math.log(sum);
}

export function sampleToken(logits: Float32Array, o: SamplingOptions, rand: () => number): number {
  if (o.temperature <= 0) {
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i] > logits[best]) best = i;
    return best;
  }
  // Candidates sorted by logit; top-k and top-p both cut from the top of this order.
  let idx = Array.from(logits.keys()).sort((a, b) => logits[b] - logits[a]);
  if (o.topK > 0 && o.topK < idx.length) idx = idx.slice(0, o.topK);
  const max = logits[idx[0]];
  const weights = idx.map((i) => Math.exp((logits[i] - max) / o.temperature));
  const total = weights.reduce((a, b) => a + b, 0);
  let keep = idx.length;
  if (o.topP < 1) {
    let acc = 0;
    for (let j = 0; j < idx.length; j++) {
      acc += weights[j] / total;
      if (acc >= o.topP) {
        keep = j + 1;
        break;
      }
    }
  }
  const kept = weights.slice(0, keep).reduce((a, b) => a + b, 0);
  let r = rand() * kept;
  for (let j = 0; j < keep; j++) {
    r -= weights[j];
    if (r <= 0) return idx[j];
  }
  return idx[keep - 1];
}
