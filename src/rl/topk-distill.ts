/**
 * The top-k distillation term, the reference's top-k select loss (subset "student") beside the
 * paper's sampled-token OPD: at every response position t the term covers the student's k most
 * likely next tokens S_t, not only the token it wrote, so it can teach a token the policy
 * did not sample.
 *
 * Per position t and token v in S_t, with ell the log-probs of v under the policy being trained
 * (cur), the old policy (old) and the hint-conditioned teacher:
 *   w_v    = exp(old_v) / sum_{u in S_t} exp(old_u)       the old policy renormalised over S_t
 *   A_v    = w_v * clip(teacher_v - old_v, -c, +c)        (c = 0: no clip)
 *   rho_v  = exp(clamp(cur_v - old_v, -20, +20))           (the reference's guard; no gradient where held)
 *   L_v    = -min(rho_v * A_v, clip(rho_v, 1 - epsLow, 1 + epsHigh) * A_v)
 *   L_t    = sum_{v in S_t} L_v                            (a sum, not a mean)
 * w_v, A_v and old are constants of the step. L_t is added, times w_opd, to the position's
 * sampled-token PPO loss before the batch is aggregated, as the reference combines its GRPO
 * term with this one per token.
 *
 * The CPU reference of the engine's loss: plain arrays, written for clarity.
 */
import { InvalidArgumentError, LengthMismatchError } from './errors';
import { checkClip, clippedSurrogate } from './surrogate';
import { clipDifference } from './topk-hints';

/**
 * The reference's guard on a set member's log-ratio before exp (its top-k select loss's
 * _PPO_KL_CLAMP): a rare member far from the old policy cannot overflow rho.
 */
export const LOG_RATIO_CLAMP = 20;

/** rho_v = exp(clamp(cur - old, +-LOG_RATIO_CLAMP)), and whether the clamp holds it (then it has no gradient). */
export function memberRatio(cur: number, old: number): { rho: number; held: boolean } {
  const d = cur - old;
  const held = d > LOG_RATIO_CLAMP || d < -LOG_RATIO_CLAMP;
  return { rho: Math.exp(Math.min(LOG_RATIO_CLAMP, Math.max(-LOG_RATIO_CLAMP, d))), held };
}

/**
 * Which distillation a target trains over its sets (TopKDistillTarget.term; src/rl/distill-kl.ts).
 * Absent: the top-k select surrogate above. 'reverse-kl': KL(pi_theta || pi_teacher) over each set
 * renormalised (a set of the whole vocabulary is the full KL); 'forward-kl': KL(pi_teacher ||
 * pi_theta) over each set renormalised; '-tail': the same over the set's tokens plus one bin for
 * the rest of the vocabulary (src/rl/reverse-kl.ts, src/rl/forward-kl.ts).
 */
export const DISTILL_TERMS = ['reverse-kl', 'reverse-kl-tail', 'forward-kl', 'forward-kl-tail'] as const;
export type DistillTerm = (typeof DISTILL_TERMS)[number];

/** What a sample carries for the term: the set per position and the teacher's log-probs over it. */
export interface TopKDistillTarget {
  /** w_opd, the term's weight. */
  weight: number;
  /** Bound on |teacher - old| per token in nats; 0 = none. */
  clip: number;
  /** S_t: the student's k most likely next-token ids at each response position. */
  ids: readonly (readonly number[])[];
  /** log pi_teacher(v) for each v of S_t, same shape as ids. */
  teacherLogp: readonly (readonly number[])[];
  /**
   * Absent: the top-k select surrogate over the student's sets. A KL (DistillTerm): the sets are
   * the teacher's top-k (or, for the reverse KL, the whole vocabulary), and clip, ratio and old
   * policy are unused.
   */
  term?: DistillTerm;
}

/** Checks a target's shape against a response of `tokens` tokens. */
export function checkTopKTarget(target: TopKDistillTarget, tokens: number, what: string): void {
  if (target.ids.length !== tokens) throw new LengthMismatchError(`${what}: top-k sets`, tokens, target.ids.length);
  if (target.teacherLogp.length !== tokens) throw new LengthMismatchError(`${what}: teacher log-probs over the top-k sets`, tokens, target.teacherLogp.length);
  target.ids.forEach((set, t) => {
    if (set.length === 0) throw new InvalidArgumentError(`${what}: the top-k set of token ${t} is empty; every position needs at least one id.`);
    if (target.teacherLogp[t].length !== set.length)
      throw new LengthMismatchError(`${what}: teacher log-probs of token ${t}`, set.length, target.teacherLogp[t].length);
  });
}

/** w_v: the softmax of the old log-probs over one position's set. */
export function setWeights(oldLogp: readonly number[]): number[] {
  const max = Math.max(...oldLogp);
  const e = oldLogp.map((x) => Math.exp(x - max));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

/** A_v per set member of one position: w_v * clip(teacher_v - old_v). */
export function setAdvantages(oldLogp: readonly number[], teacherLogp: readonly number[], clip: number): number[] {
  const w = setWeights(oldLogp);
  return oldLogp.map((o, v) => w[v] * clipDifference(teacherLogp[v] - o, clip));
}

/**
 * L_t of every response position (unweighted by w_opd).
 *
 * @param cur - log-probs of each set member under the policy being trained, per position
 * @param old - the same under the old policy (constants of the step)
 */
export function topKDistillTokenLoss(
  cur: readonly (readonly number[])[],
  old: readonly (readonly number[])[],
  teacher: readonly (readonly number[])[],
  clip: number,
  epsLow: number,
  epsHigh: number,
): number[] {
  if (cur.length !== old.length) throw new LengthMismatchError('topKDistillTokenLoss(cur, old)', old.length, cur.length);
  if (teacher.length !== old.length) throw new LengthMismatchError('topKDistillTokenLoss(teacher, old)', old.length, teacher.length);
  checkClip(epsLow, epsHigh);
  return cur.map((c, t) => {
    if (c.length !== old[t].length) throw new LengthMismatchError(`topKDistillTokenLoss: set of token ${t}`, old[t].length, c.length);
    const a = setAdvantages(old[t], teacher[t], clip);
    return c.reduce((sum, lp, v) => sum + clippedSurrogate(memberRatio(lp, old[t][v]).rho, a[v], epsLow, epsHigh), 0);
  });
}
