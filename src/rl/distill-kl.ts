/**
 * The KL a distillation target trains over its sets (TopKDistillTarget.term): which direction,
 * and whether the rest of the vocabulary is one tail bin. The loss (src/rl/ppo.ts) and the
 * engine's gradient (src/gpu/loss.ts) both read a term through here.
 */
import { LengthMismatchError } from './errors';
import { forwardKlSet } from './forward-kl';
import { reverseKlSet, type KlWithGrad } from './reverse-kl';
import type { DistillTerm } from './topk-distill';

/** KL_t of one position's set under `term`, and its gradient in the members' log-probs. */
export function distillKlSet(term: DistillTerm, logp: readonly number[], teacherLogp: readonly number[]): KlWithGrad {
  const tail = term.endsWith('-tail');
  return term.startsWith('forward-') ? forwardKlSet(logp, teacherLogp, tail) : reverseKlSet(logp, teacherLogp, tail);
}

/**
 * KL_t of every position (unweighted by w_opd).
 *
 * @param cur - log-probs of each set member under the policy being trained, per position
 * @param teacher - the teacher's log-probs over the same sets
 */
export function distillKlTokenLoss(term: DistillTerm, cur: readonly (readonly number[])[], teacher: readonly (readonly number[])[]): number[] {
  if (teacher.length !== cur.length) throw new LengthMismatchError('distillKlTokenLoss(teacher, cur)', cur.length, teacher.length);
  return cur.map((c, t) => distillKlSet(term, c, teacher[t]).kl);
}
