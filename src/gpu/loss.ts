/**
 * The PPO + k3 loss's gradient with respect to each token's log-prob. The values and
 * statistics come from the method library (src/rl/ppo.ts, the CPU reference); this adds
 * only d loss / d logp, which the backward pass starts from. Per-token arrays are small
 * (one number per completion token), so this runs on the CPU for every backend.
 */
import { counts, countedTokens } from '../rl/loss-mask';
import { klClamped, type PpoSampleInput, type PpoSettings } from '../rl/ppo';
import { clippedSurrogateGrad } from '../rl/surrogate';
import { distillKlSet } from '../rl/distill-kl';
import { memberRatio, setAdvantages } from '../rl/topk-distill';

/** Sizes of the whole batch; a micro-batch's gradient needs them to weigh its tokens. */
export interface BatchNorm {
  samples: number;
  tokens: number;
}

/** The batch's sizes: every sample is a slot, and only unmasked tokens of trainable samples count. */
export function batchNorm(samples: Pick<PpoSampleInput, 'logp' | 'trainable' | 'lossMask'>[]): BatchNorm {
  return { samples: samples.length, tokens: samples.reduce((n, x) => n + ((x.trainable ?? true) ? countedTokens(x.lossMask, x.logp.length) : 0), 0) };
}

/**
 * Weight of one counted token of a sample in the aggregate: 1/(n*S) with n its unmasked tokens
 * (sample-mean), or 1/(all unmasked tokens of the batch) (token-mean); 0 for a sample with none.
 */
function tokenWeight(x: PpoSampleInput, s: PpoSettings, norm: BatchNorm): number {
  const n = countedTokens(x.lossMask, x.logp.length);
  if (n === 0) return 0;
  return s.aggregation === 'sample-mean' ? 1 / (n * norm.samples) : 1 / norm.tokens;
}

/** d loss / d logp per token of each sample; `norm` describes the full batch. */
export function ppoLossGrad(samples: PpoSampleInput[], s: PpoSettings, norm: BatchNorm = batchNorm(samples)): Float32Array[] {
  return samples.map((x) => {
    const n = x.logp.length;
    const g = new Float32Array(n);
    if (!(x.trainable ?? true) || n === 0) return g;
    const w = tokenWeight(x, s, norm);
    for (let t = 0; t < n; t++) {
      // A masked token (a tool's output) gets no gradient at all.
      if (!counts(x.lossMask, t)) continue;
      const policy = clippedSurrogateGrad(Math.exp(x.logp[t] - x.oldLogp[t]), x.advantages[t], s.epsLow, s.epsHigh);
      // d k3 / d logp = 1 - exp(ref - logp), and 0 where low_var_kl's clamp holds k3 at its bound.
      const kl = s.klCoef !== 0 && !klClamped(x.refLogp![t], x.logp[t], s.klType) ? s.klCoef * (1 - Math.exp(x.refLogp![t] - x.logp[t])) : 0;
      g[t] = w * (policy + kl);
    }
    return g;
  });
}

/**
 * d loss / d logp of each top-k set member (src/rl/topk-distill.ts), per sample and position:
 * null for a sample without the term. w_v and A_v are constants of the step, so each member's
 * gradient is w_opd times its own clipped surrogate's, weighted as its position's token.
 */
export function topKLossGrad(samples: PpoSampleInput[], s: PpoSettings, norm: BatchNorm = batchNorm(samples)): (Float32Array[] | null)[] {
  return samples.map((x) => {
    const k = x.topk;
    if (!k || !(x.trainable ?? true) || x.logp.length === 0) return null;
    const w = tokenWeight(x, s, norm) * k.weight;
    // A KL over the sets (src/rl/distill-kl.ts): its gradient in the members' log-probs.
    if (k.term) {
      const term = k.term;
      return k.logp.map((cur, t) =>
        counts(x.lossMask, t) ? Float32Array.from(distillKlSet(term, cur, k.teacherLogp[t]).grad, (g) => w * g) : new Float32Array(cur.length),
      );
    }
    return k.logp.map((cur, t) => {
      if (!counts(x.lossMask, t)) return new Float32Array(cur.length);
      const a = setAdvantages(k.oldLogp[t], k.teacherLogp[t], k.clip);
      return Float32Array.from(cur, (lp, v) => {
        // The ratio's clamp holds a member whose log-ratio left +-20: no gradient there, as in the reference.
        const { rho, held } = memberRatio(lp, k.oldLogp[t][v]);
        return held ? 0 : w * clippedSurrogateGrad(rho, a[v], s.epsLow, s.epsHigh);
      });
    });
  });
}

/**
 * d loss / d KL_t of the whole-vocabulary reverse-KL term per sample and position (null for a
 * sample without it): w_opd times the position's token weight. The engine's reverseKlBackward
 * takes it to the logits.
 */
export function reverseKlLossGrad(samples: PpoSampleInput[], s: PpoSettings, norm: BatchNorm = batchNorm(samples)): (Float32Array | null)[] {
  return samples.map((x) => {
    const r = x.reverseKl;
    if (!r || !(x.trainable ?? true) || x.logp.length === 0) return null;
    const w = tokenWeight(x, s, norm) * r.weight;
    return Float32Array.from({ length: x.logp.length }, (_, t) => (counts(x.lossMask, t) ? w : 0));
  });
}
