/**
 * The reverse-KL distillation term: at every position t of the sampled reply, the student's
 * next-token distribution is pulled toward the hint-conditioned teacher's by
 *   KL_t = KL(pi_theta(. | s_t) || pi_teacher(. | s_enhanced)),
 * which reaches every token the teacher likes, not only the one the policy wrote. Three forms:
 *
 * - the whole vocabulary (preset advantage.reverseKl.k = 0; small vocabularies):
 *     KL = sum_j p_j (log p_j - log q_j),  d KL / d z_j = p_j (log p_j - log q_j - KL)
 *   with p = softmax(z) the student's and q the teacher's distribution;
 * - the teacher's top-k set S, renormalised (k >= 1): p~ = softmax(log p over S), q~ likewise,
 *     KL~ = sum_{v in S} p~_v (log p~_v - log q~_v),  d KL~ / d log p_v = p~_v (log p~_v - log q~_v - KL~);
 * - the teacher's top-k set plus one tail bin for the rest of the vocabulary (tail: true), the
 *   reference's OPD top-k loss (openclaw-opd/topk_distillation_loss.py, --distill-topk 50, after
 *   SDFT/SDPO): bins v in S with log p_v, and log p_tail = log(1 - exp(min(lse_S(log p), -1e-7))),
 *     KL = sum_{v in S} p_v (log p_v - log q_v) + p_tail (log p_tail - log q_tail),
 *     d KL / d log p_v = p_v ((log p_v - log q_v) - (log p_tail - log q_tail))  (unclamped tail).
 *
 * L_t = w_opd * KL_t is added to the position's sampled-token PPO loss (whose advantage keeps only
 * w_binary * r) before the batch is aggregated, as the top-k select term is. The set forms take the
 * global log-probs of the set's members under the policy (the engine gathers them from the
 * logits) and their gradient flows back through that gather; the whole-vocabulary form works on
 * the logits row itself (the engine's reverseKl op, src/gpu/ops/reverse-kl.ts).
 *
 * The CPU reference: plain arrays, written for clarity.
 */
import { InvalidArgumentError, LengthMismatchError } from './errors';

/**
 * The largest vocabulary the whole-vocabulary form takes (preset reverseKl.k = 0): the teacher's
 * log-prob of every token at every position goes into the run file, so a 150k vocabulary takes
 * the top-k form instead.
 */
export const MAX_FULL_KL_VOCAB = 8192;

/** The reference's bound on log sum_S p before the tail bin's log(1 - .): the tail keeps at least ~1e-7. */
export const TAIL_LOG_MASS_MAX = -1e-7;

/** log sum_i exp(x_i), stable; -Infinity for an empty or all -Infinity list. */
function logSumExp(xs: readonly number[]): number {
  const max = Math.max(...xs);
  if (max === -Infinity) return -Infinity;
  let s = 0;
  for (const x of xs) s += Math.exp(x - max);
  return max + Math.log(s);
}

/** log(1 - exp(x)) for x <= TAIL_LOG_MASS_MAX, without cancellation near 0. */
function log1mExp(x: number): number {
  return x > -Math.LN2 ? Math.log(-Math.expm1(x)) : Math.log1p(-Math.exp(x));
}

/** KL and its gradient with respect to whatever the student's inputs are (logits, or the set's log-probs). */
export interface KlWithGrad {
  kl: number;
  grad: number[];
}

/**
 * KL(softmax(logits) || q) over the whole vocabulary, and d KL / d logits.
 *
 * @param logits - the student's logits of one position
 * @param teacherLogp - log q_j for every vocabulary id j
 */
export function reverseKlFull(logits: readonly number[], teacherLogp: readonly number[]): KlWithGrad {
  if (teacherLogp.length !== logits.length) throw new LengthMismatchError('reverseKlFull(teacherLogp, logits)', logits.length, teacherLogp.length);
  const lse = logSumExp(logits);
  const logp = logits.map((z) => z - lse);
  const p = logp.map(Math.exp);
  const kl = p.reduce((s, pj, j) => s + (pj > 0 ? pj * (logp[j] - teacherLogp[j]) : 0), 0);
  return { kl, grad: p.map((pj, j) => (pj > 0 ? pj * (logp[j] - teacherLogp[j] - kl) : 0)) };
}

/** Refuses a set whose two sides differ in length, or an empty one; `what` names the caller. */
export function checkSet(what: string, logp: readonly number[], teacherLogp: readonly number[]): void {
  if (teacherLogp.length !== logp.length) throw new LengthMismatchError(`${what}(teacherLogp, logp)`, logp.length, teacherLogp.length);
  if (logp.length === 0) throw new InvalidArgumentError(`${what}: the set is empty; every position needs at least one id.`);
}

/** Both sides renormalised over the set: log p~ and log q~. */
export function renormalised(logp: readonly number[], teacherLogp: readonly number[]): { lp: number[]; lq: number[] } {
  const ls = logSumExp(logp);
  const lt = logSumExp(teacherLogp);
  return { lp: logp.map((x) => x - ls), lq: teacherLogp.map((x) => x - lt) };
}

/**
 * The tail bin of each side, log(1 - the set's mass) with the mass bounded by TAIL_LOG_MASS_MAX,
 * and whether that bound holds the student's (then its tail is a constant).
 */
export function tailBins(logp: readonly number[], teacherLogp: readonly number[]): { held: boolean; pTail: number; qTail: number } {
  const sMass = logSumExp(logp);
  return {
    held: sMass > TAIL_LOG_MASS_MAX,
    pTail: log1mExp(Math.min(sMass, TAIL_LOG_MASS_MAX)),
    qTail: log1mExp(Math.min(logSumExp(teacherLogp), TAIL_LOG_MASS_MAX)),
  };
}

/**
 * The set forms: KL over one position's set, and d KL / d (the members' global log-probs).
 *
 * @param logp - log pi_theta(v) of each set member (global log-probs)
 * @param teacherLogp - log pi_teacher(v) of the same members
 * @param tail - false: both renormalised over the set; true: the set plus a tail bin
 */
export function reverseKlSet(logp: readonly number[], teacherLogp: readonly number[], tail: boolean): KlWithGrad {
  checkSet('reverseKlSet', logp, teacherLogp);
  if (!tail) {
    const { lp, lq } = renormalised(logp, teacherLogp);
    const p = lp.map(Math.exp);
    const kl = p.reduce((s, pv, v) => s + pv * (lp[v] - lq[v]), 0);
    return { kl, grad: p.map((pv, v) => pv * (lp[v] - lq[v] - kl)) };
  }
  const { held, pTail, qTail } = tailBins(logp, teacherLogp);
  const dTail = pTail - qTail;
  const p = logp.map(Math.exp);
  const kl = p.reduce((s, pv, v) => s + pv * (logp[v] - teacherLogp[v]), 0) + Math.exp(pTail) * dTail;
  // Where the clamp holds the set's mass, the tail bin is a constant: each bin's own term alone,
  // d/d log p_v of p_v (log p_v - log q_v) = p_v (log p_v - log q_v + 1).
  return { kl, grad: p.map((pv, v) => pv * (logp[v] - teacherLogp[v] - (held ? -1 : dTail))) };
}
