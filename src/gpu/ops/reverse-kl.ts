/**
 * The reverse-KL distillation term over the whole vocabulary, per row of logits [R, V] against the
 * teacher's log-probs [R, V] (src/rl/reverse-kl.ts reverseKlFull, one row at a time):
 *   KL_r = sum_j p_j (log p_j - log q_j), p = softmax(logits_r), q the teacher's;
 *   d loss / d logits_rj = dkl_r * p_j (log p_j - log q_j - KL_r).
 * A row whose p_j underflows to 0 takes no part of that j (so a teacher's -inf there is harmless).
 */
import { like, type Arr } from './types';

/** log-sum-exp of row logits[o, o + V). */
function rowLse(logits: Arr, o: number, V: number): number {
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[o + i]);
  let sum = 0;
  for (let i = 0; i < V; i++) sum += Math.exp(logits[o + i] - max);
  return max + Math.log(sum);
}

/** KL_r of the row at o, given its log-sum-exp. */
function rowKl(logits: Arr, teacherLogp: Arr, o: number, V: number, lse: number): number {
  let kl = 0;
  for (let i = 0; i < V; i++) {
    const lp = logits[o + i] - lse;
    const p = Math.exp(lp);
    if (p > 0) kl += p * (lp - teacherLogp[o + i]);
  }
  return kl;
}

/** KL_r of every row: logits [R, V], teacherLogp [R, V] -> [R]. */
export function reverseKlForward(logits: Arr, teacherLogp: Arr, R: number): Arr {
  const V = logits.length / R;
  const out = like(logits, R);
  for (let r = 0; r < R; r++) out[r] = rowKl(logits, teacherLogp, r * V, V, rowLse(logits, r * V, V));
  return out;
}

/** d(sum_r dkl[r] * KL_r) / d logits: [R, V]. */
export function reverseKlBackward(logits: Arr, teacherLogp: Arr, dkl: Arr): Arr {
  const R = dkl.length;
  const V = logits.length / R;
  const d = like(logits, logits.length);
  for (let r = 0; r < R; r++) {
    const o = r * V;
    const lse = rowLse(logits, o, V);
    const kl = rowKl(logits, teacherLogp, o, V, lse);
    for (let i = 0; i < V; i++) {
      const lp = logits[o + i] - lse;
      const p = Math.exp(lp);
      d[o + i] = p > 0 ? dkl[r] * p * (lp - teacherLogp[o + i] - kl) : 0;
    }
  }
  return d;
}
