import { InvalidArgumentError } from './errors';
import { checkLossMask, countedValues, type LossMask } from './loss-mask';
import { assertSameLength } from './numbers';
import { checkClip, clippedSurrogate } from './surrogate';
import { distillKlTokenLoss } from './distill-kl';
import { checkTopKTarget, topKDistillTokenLoss, type TopKDistillTarget } from './topk-distill';

/**
 * PPO loss terms on plain number arrays. This is the CPU reference the GPU engine's loss is
 * checked against, so every function is written for clarity over speed and returns the
 * per-token values that the engine's kernels produce.
 */

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(Math.max(x, lo), hi);
}

/**
 * Per-token clipped surrogate with an asymmetric clip range:
 * L = -min(rho * A, clip(rho, 1 - epsLow, 1 + epsHigh) * A), rho = exp(logp - oldLogp).
 *
 * @param logp - log-probs of the response tokens under the policy being trained
 * @param oldLogp - log-probs under the policy that sampled them
 * @param adv - per-token advantages
 */
export function ppoTokenLoss(logp: readonly number[], oldLogp: readonly number[], adv: readonly number[], epsLow: number, epsHigh: number): number[] {
  assertSameLength('ppoTokenLoss(logp, oldLogp)', logp, oldLogp);
  assertSameLength('ppoTokenLoss(logp, adv)', logp, adv);
  checkClip(epsLow, epsHigh);
  return logp.map((lp, i) => clippedSurrogate(Math.exp(lp - oldLogp[i]), adv[i], epsLow, epsHigh));
}

/**
 * Bound on each token's k3 value under "low_var_kl", as slime clamps it: one token the policy
 * has moved far from the reference (exp(ref - logp) grows without limit) cannot dominate the
 * batch's KL term or its gradient.
 */
export const K3_CLAMP = 10;

/**
 * The KL estimator, by slime's names: both are k3 = exp(ref - logp) - 1 - (ref - logp);
 * "low_var_kl" clamps it to [-K3_CLAMP, K3_CLAMP] (the reference's personal-agent scripts),
 * "k3" leaves it unclamped (its tool-call script, `--kl-loss-type k3`).
 */
export const KL_TYPES = ['low_var_kl', 'k3'] as const;
export type KlType = (typeof KL_TYPES)[number];

/** k3 before the clamp; the loss's gradient needs it to see where the clamp is active. */
export function k3Raw(refLogp: number, logp: number): number {
  const d = refLogp - logp;
  return Math.exp(d) - 1 - d;
}

/** Whether the KL term holds this token at its bound, where it has no gradient. */
export function klClamped(refLogp: number, logp: number, type: KlType = 'low_var_kl'): boolean {
  return type === 'low_var_kl' && k3Raw(refLogp, logp) > K3_CLAMP;
}

/**
 * Per-token k3 estimator of KL(pi_theta || pi_ref): exp(ref - logp) - 1 - (ref - logp),
 * clamped to [-K3_CLAMP, K3_CLAMP] under "low_var_kl" (the default). Non-negative, zero where
 * the two agree.
 *
 * @param refLogp - log-probs under the reference policy
 * @param logp - log-probs under the policy being trained
 */
export function k3(refLogp: readonly number[], logp: readonly number[], type: KlType = 'low_var_kl'): number[] {
  assertSameLength('k3(refLogp, logp)', logp, refLogp);
  return logp.map((lp, i) => {
    const raw = k3Raw(refLogp[i], lp);
    return type === 'low_var_kl' ? clamp(raw, -K3_CLAMP, K3_CLAMP) : raw;
  });
}

/**
 * How per-token values become one loss.
 * 'sample-mean' (reference): mean over each sample's tokens, then mean over the batch, so
 * every sample weighs the same however long it is.
 * 'token-mean': one mean over all tokens of the batch, so long responses weigh more.
 */
export const LOSS_AGGREGATIONS = ['sample-mean', 'token-mean'] as const;
export type LossAggregation = (typeof LOSS_AGGREGATIONS)[number];

/**
 * Reduces per-token values of a batch to one number.
 *
 * With masks, masked tokens (0) are left out of both sums and counts. Under 'sample-mean' a
 * fully masked sample contributes 0 but still counts in the batch mean, as in the reference
 * (slime divides the sum of per-sample means by the batch size).
 *
 * @param perToken - one array per sample
 * @param mode - the aggregation
 * @param masks - optional 0/1 loss masks, same shapes as perToken
 * @returns the aggregate; 0 for an empty batch or when no token is unmasked under 'token-mean'
 */
export function aggregateLoss(perToken: readonly (readonly number[])[], mode: LossAggregation, masks?: readonly (readonly number[])[]): number {
  if (masks) assertSameLength('aggregateLoss(perToken, masks) samples', perToken, masks);
  let total = 0;
  let count = 0;
  perToken.forEach((values, s) => {
    const mask = masks?.[s];
    if (mask) assertSameLength(`aggregateLoss mask of sample ${s}`, values, mask);
    let sum = 0;
    let n = 0;
    values.forEach((v, t) => {
      // A masked token is skipped, not multiplied by 0: its value may be anything (an observation's placeholder).
      if (mask && mask[t] === 0) return;
      sum += v;
      n += 1;
    });
    if (mode === 'sample-mean') {
      total += n > 0 ? sum / n : 0;
      count += 1;
    } else {
      total += sum;
      count += n;
    }
  });
  return count > 0 ? total / count : 0;
}

/** How often the clip was active, TRL's definition: the clipped branch won the min. */
export interface ClipStats {
  /** Tokens with rho < 1 - epsLow and A < 0 (update pushed down no further). */
  clippedLow: number;
  /** Tokens with rho > 1 + epsHigh and A > 0 (update pushed up no further). */
  clippedHigh: number;
  tokens: number;
  clipFracLow: number;
  clipFracHigh: number;
}

/** Which side of the band a token's update was clipped on, if any. */
export type ClipState = 'high' | 'low' | 'none';

/**
 * The clip state of a token with advantage `advantage` at ratio rho = pi / pi_old: clipped
 * when rho left the band [1 - epsLow, 1 + epsHigh] in the direction its advantage pushes it.
 */
export function clipState(advantage: number, rho: number, epsLow: number, epsHigh: number): ClipState {
  if (advantage > 0 && rho > 1 + epsHigh) return 'high';
  if (advantage < 0 && rho < 1 - epsLow) return 'low';
  return 'none';
}

/** Fractions of tokens clipped low and high for one sample's tokens. */
export function clipFractions(logp: readonly number[], oldLogp: readonly number[], adv: readonly number[], epsLow: number, epsHigh: number): ClipStats {
  assertSameLength('clipFractions(logp, oldLogp)', logp, oldLogp);
  assertSameLength('clipFractions(logp, adv)', logp, adv);
  checkClip(epsLow, epsHigh);
  let clippedLow = 0;
  let clippedHigh = 0;
  logp.forEach((lp, i) => {
    const state = clipState(adv[i], Math.exp(lp - oldLogp[i]), epsLow, epsHigh);
    if (state === 'low') clippedLow++;
    if (state === 'high') clippedHigh++;
  });
  return clipStatsOf(clippedLow, clippedHigh, logp.length);
}

function clipStatsOf(clippedLow: number, clippedHigh: number, tokens: number): ClipStats {
  return {
    clippedLow,
    clippedHigh,
    tokens,
    clipFracLow: tokens > 0 ? clippedLow / tokens : 0,
    clipFracHigh: tokens > 0 ? clippedHigh / tokens : 0,
  };
}

/** One sample as the loss sees it. */
export interface PpoSampleInput {
  logp: readonly number[];
  oldLogp: readonly number[];
  advantages: readonly number[];
  /** Reference-policy log-probs; needed only when klCoef > 0 and the sample is trainable. */
  refLogp?: readonly number[];
  /** false = loss-masked (contributes no gradient); default true. */
  trainable?: boolean;
  /**
   * Per-token loss mask (src/rl/loss-mask.ts): 0 leaves a token (a tool's output inside a
   * trajectory) out of every sum, count and statistic; absent, every token counts.
   */
  lossMask?: LossMask;
  /**
   * The top-k distillation term (src/rl/topk-distill.ts): its target, and the log-probs of each
   * set member under the policy being trained (logp) and the old policy (oldLogp).
   */
  topk?: TopKSampleInput;
  /**
   * The reverse-KL term over the whole vocabulary (src/rl/reverse-kl.ts): its weight w_opd and
   * KL_t per position, which the engine computes from the logits (its reverseKl op).
   */
  reverseKl?: { weight: number; kl: readonly number[] };
}

/** A sample's top-k distillation term as the loss sees it (a KL over sets reads no oldLogp). */
export interface TopKSampleInput extends TopKDistillTarget {
  logp: readonly (readonly number[])[];
  oldLogp: readonly (readonly number[])[];
}

/** The per-token loss of a sample's set term, unweighted: the top-k select surrogate, or a KL over the sets. */
export function setTermTokenLoss(topk: TopKSampleInput, epsLow: number, epsHigh: number): number[] {
  return topk.term
    ? distillKlTokenLoss(topk.term, topk.logp, topk.teacherLogp)
    : topKDistillTokenLoss(topk.logp, topk.oldLogp, topk.teacherLogp, topk.clip, epsLow, epsHigh);
}

/** The loss settings of a preset. */
export interface PpoSettings {
  epsLow: number;
  epsHigh: number;
  klCoef: number;
  /** The KL estimator; absent: "low_var_kl" (clamped k3). */
  klType?: KlType;
  aggregation: LossAggregation;
}

/** The batch loss and the statistics the engine reports for a train step. */
export interface PpoBatchStats {
  /** policyLoss + klCoef * kl */
  loss: number;
  policyLoss: number;
  kl: number;
  clipFracLow: number;
  clipFracHigh: number;
  /** Mean |A| over trainable tokens. */
  meanAbsAdv: number;
  /** Mean |logp - oldLogp| over trainable tokens: how far the trainer has moved off-policy. */
  logpGap: number;
  /** Trainable tokens. */
  tokens: number;
}

/**
 * The full loss of one batch on the CPU: clipped surrogate (plus w_opd times the top-k
 * distillation or KL term of a sample that has one, per token) plus klCoef times k3, each aggregated
 * with the preset's mode; clip fractions and the other statistics are taken
 * over trainable tokens. A sample's loss mask leaves its masked tokens out of the sums, the
 * counts (its token mean divides by its unmasked tokens, as slime's sum_of_sample_mean) and the
 * statistics.
 */
export function ppoBatchLoss(samples: readonly PpoSampleInput[], settings: PpoSettings): PpoBatchStats {
  const useKl = settings.klCoef !== 0;
  const policy: number[][] = [];
  const kls: number[][] = [];
  const masks: number[][] = [];
  let clippedLow = 0;
  let clippedHigh = 0;
  let absAdv = 0;
  let gap = 0;
  let tokens = 0;
  samples.forEach((s, i) => {
    const { logp, oldLogp, advantages } = s;
    const on = s.trainable ?? true;
    const tokenLoss = ppoTokenLoss(logp, oldLogp, advantages, settings.epsLow, settings.epsHigh);
    if (s.topk && on) {
      checkTopKTarget(s.topk, logp.length, `sample ${i}`);
      const distill = setTermTokenLoss(s.topk, settings.epsLow, settings.epsHigh);
      distill.forEach((l, t) => (tokenLoss[t] += s.topk!.weight * l));
    }
    if (s.reverseKl && on) {
      assertSameLength(`sample ${i}: reverse-KL values`, logp, s.reverseKl.kl);
      s.reverseKl.kl.forEach((l, t) => (tokenLoss[t] += s.reverseKl!.weight * l));
    }
    policy.push(tokenLoss);
    // A masked sample's KL is never used (its mask is 0), so it needs no reference scoring.
    if (useKl && !on) kls.push(new Array<number>(logp.length).fill(0));
    else if (useKl) {
      if (!s.refLogp) {
        throw new InvalidArgumentError(
          `sample ${i} has no refLogp but klCoef is ${settings.klCoef}; score the batch with ` + `the reference policy or set klCoef to 0.`,
        );
      }
      kls.push(k3(s.refLogp, logp, settings.klType));
    }
    checkLossMask(s.lossMask, logp.length, `sample ${i}`);
    masks.push(on ? (s.lossMask ? [...s.lossMask] : new Array<number>(logp.length).fill(1)) : new Array<number>(logp.length).fill(0));
    if (!on) return;
    const [lp, old, adv] = [logp, oldLogp, advantages].map((xs) => countedValues(xs, s.lossMask));
    const clip = clipFractions(lp, old, adv, settings.epsLow, settings.epsHigh);
    clippedLow += clip.clippedLow;
    clippedHigh += clip.clippedHigh;
    lp.forEach((x, t) => {
      absAdv += Math.abs(adv[t]);
      gap += Math.abs(x - old[t]);
    });
    tokens += lp.length;
  });
  const policyLoss = aggregateLoss(policy, settings.aggregation, masks);
  const kl = useKl ? aggregateLoss(kls, settings.aggregation, masks) : 0;
  const clip = clipStatsOf(clippedLow, clippedHigh, tokens);
  return {
    loss: policyLoss + settings.klCoef * kl,
    policyLoss,
    kl,
    clipFracLow: clip.clipFracLow,
    clipFracHigh: clip.clipFracHigh,
    meanAbsAdv: tokens > 0 ? absAdv / tokens : 0,
    logpGap: tokens > 0 ? gap / tokens : 0,
    tokens,
  };
}
