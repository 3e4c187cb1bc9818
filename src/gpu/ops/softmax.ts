import { like, type Arr } from './types';

/** The max of row logits[o, o + V) and the sum of exp(x - max) over it: shifted by the max, exp cannot overflow. */
function rowExpSum(logits: Arr, o: number, V: number): { max: number; sum: number } {
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[o + i]);
  let sum = 0;
  for (let i = 0; i < V; i++) sum += Math.exp(logits[o + i] - max);
  return { max, sum };
}

/** Per row of logits [R, V]: log p(target) and the entropy of the row's distribution. */
export function logSoftmaxGatherForward(logits: Arr, targets: Int32Array): { logp: Arr; entropy: Arr } {
  const R = targets.length;
  const V = logits.length / R;
  const logp = like(logits, R);
  const entropy = like(logits, R);
  for (let r = 0; r < R; r++) {
    const o = r * V;
    const { max, sum } = rowExpSum(logits, o, V);
    const lse = max + Math.log(sum);
    let h = 0;
    for (let i = 0; i < V; i++) {
      const lp = logits[o + i] - lse;
      h -= Math.exp(lp) * lp;
    }
    logp[r] = logits[o + targets[r]] - lse;
    entropy[r] = h;
  }
  return { logp, entropy };
}

/** dlogits = dlogp * (onehot(target) - softmax(logits)). */
export function logSoftmaxGatherBackward(logits: Arr, targets: Int32Array, dlogp: Arr): Arr {
  const R = targets.length;
  const V = logits.length / R;
  const d = like(logits, logits.length);
  for (let r = 0; r < R; r++) {
    const o = r * V;
    const { max, sum } = rowExpSum(logits, o, V);
    for (let i = 0; i < V; i++) d[o + i] = -dlogp[r] * (Math.exp(logits[o + i] - max) / sum);
    d[o + targets[r]] += dlogp[r];
  }
  return d;
}
