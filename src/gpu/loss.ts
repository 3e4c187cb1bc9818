/**
 * The PPO + k3 loss's gradient with respect to each token's log-prob. The values and
 * statistics come from the method library (src/rl/ppo.ts, the CPU reference); this adds
 * only d loss / d logp, which the backward pass starts from. Per-token arrays are small
 * (one number per completion token), so this runs on the CPU for every backend.
 */
import { klClamped, ppoBatchLoss, type PpoBatchStats, type PpoSampleInput, type PpoSettings } from '../rl/ppo';

/** Sizes of the whole batch; a micro-batch's gradient needs them to weigh its tokens. */
export interface BatchNorm {
  samples: number;
  tokens: number;
}

export function batchNorm(samples: { logp: ArrayLike<number>; trainable?: boolean }[]): BatchNorm {
  return { samples: samples.length, tokens: samples.reduce((n, x) => n + ((x.trainable ?? true) ? x.logp.length : 0), 0) };
}

/** d loss / d logp per token of each sample; `norm` describes the full batch. */
export function ppoLossGrad(samples: PpoSampleInput[], s: PpoSettings, norm: BatchNorm = batchNorm(samples)): Float32Array[] {
  return samples.map((x) => {
    const n = x.logp.length;
    const g = new Float32Array(n);
    if (!(x.trainable ?? true) || n === 0) return g;
    // Weight of one token in the aggregate: 1/(n*S) per sample, or 1/(all tokens).
    const w = s.aggregation === 'sample-mean' ? 1 / (n * norm.samples) : 1 / norm.tokens;
    for (let t = 0; t < n; t++) {
      const rho = Math.exp(x.logp[t] - x.oldLogp[t]);
      const a = x.advantages[t];
      const clipped = Math.min(Math.max(rho, 1 - s.epsLow), 1 + s.epsHigh);
      // The min picks the unclipped branch (gradient -A*rho) or the clipped one (constant).
      const policy = rho * a <= clipped * a ? -a * rho : 0;
      // d k3 / d logp = 1 - exp(ref - logp), and 0 where low_var_kl's clamp holds k3 at its bound.
      const kl = s.klCoef !== 0 && !klClamped(x.refLogp![t], x.logp[t], s.klType) ? s.klCoef * (1 - Math.exp(x.refLogp![t] - x.logp[t])) : 0;
      g[t] = w * (policy + kl);
    }
    return g;
  });
}

export function ppoLossWithGrad(samples: PpoSampleInput[], s: PpoSettings): { stats: PpoBatchStats; dlogp: Float32Array[] } {
  return { stats: ppoBatchLoss(samples, s), dlogp: ppoLossGrad(samples, s) };
}
