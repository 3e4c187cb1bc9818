/**
 * The forward-KL distillation term: at every position t of the sampled reply,
 *   KL_t = KL(pi_teacher(. | s_enhanced) || pi_theta(. | s_t)),
 * the teacher's distribution as a soft label (GKD's forward KL; Agarwal et al., 2024). It is the
 * reverse KL's twin (src/rl/reverse-kl.ts) with the two distributions swapped, and differs where
 * it matters for a token the policy never samples: the reverse KL's gradient on a token's
 * log-prob is p_v (...), so it scales with the student's own probability and barely moves a token
 * the student gives ~0, while the forward KL's is -q_v, the teacher's probability, whatever the
 * student's. Two forms, over the teacher's top-k set S:
 *
 * - renormalised (tail false): p~, q~ the softmax of the log-probs over S,
 *     KL~ = sum_{v in S} q~_v (log q~_v - log p~_v),  d KL~ / d log p_v = p~_v - q~_v;
 * - with one tail bin for the rest of the vocabulary (tail true), as the reverse KL's tail form,
 *     KL = sum_{v in S} q_v (log q_v - log p_v) + q_tail (log q_tail - log p_tail),
 *     d KL / d log p_v = -q_v + q_tail p_v / p_tail  (0 for the tail's part where the clamp holds it).
 *
 * The whole-vocabulary form (k = 0) is the reverse KL's alone: the forward KL takes a top-k set.
 * The set's members' log-probs are global (gathered from the logits) and the gradient flows back
 * through that gather, as for the reverse KL's set forms.
 *
 * The CPU reference: plain arrays, written for clarity.
 */
import { checkSet, renormalised, tailBins, type KlWithGrad } from './reverse-kl';

/**
 * KL(teacher || student) over one position's set, and d KL / d (the members' global log-probs).
 *
 * @param logp - log pi_theta(v) of each set member (global log-probs)
 * @param teacherLogp - log pi_teacher(v) of the same members
 * @param tail - false: both renormalised over the set; true: the set plus a tail bin
 */
export function forwardKlSet(logp: readonly number[], teacherLogp: readonly number[], tail: boolean): KlWithGrad {
  checkSet('forwardKlSet', logp, teacherLogp);
  if (!tail) {
    const { lp, lq } = renormalised(logp, teacherLogp);
    const q = lq.map(Math.exp);
    const kl = q.reduce((s, qv, v) => s + (qv > 0 ? qv * (lq[v] - lp[v]) : 0), 0);
    return { kl, grad: lp.map((x, v) => Math.exp(x) - q[v]) };
  }
  const { held, pTail, qTail } = tailBins(logp, teacherLogp);
  const q = teacherLogp.map(Math.exp);
  const qT = Math.exp(qTail);
  const kl = q.reduce((s, qv, v) => s + (qv > 0 ? qv * (teacherLogp[v] - logp[v]) : 0), 0) + qT * (qTail - pTail);
  // Where the clamp holds the set's mass, the tail bin is a constant and each bin keeps -q_v.
  const tailPull = held ? 0 : qT / Math.exp(pTail);
  return { kl, grad: logp.map((x, v) => -q[v] + tailPull * Math.exp(x)) };
}
