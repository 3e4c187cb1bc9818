import { InvalidArgumentError } from './errors';
import { unsignedZero } from './numbers';

/** Refuses a clip band PPO cannot use. */
export function checkClip(epsLow: number, epsHigh: number): void {
  if (!(epsLow >= 0 && epsLow < 1) || !(epsHigh >= 0 && Number.isFinite(epsHigh))) {
    throw new InvalidArgumentError(
      `clip range (epsLow=${epsLow}, epsHigh=${epsHigh}) is invalid; use 0 <= epsLow < 1 and ` + `a finite epsHigh >= 0 (the reference uses 0.2 and 0.28).`,
    );
  }
}

/**
 * One token's clipped surrogate with an asymmetric band:
 * -min(rho * A, clip(rho, 1 - epsLow, 1 + epsHigh) * A). The sampled-token PPO loss and the
 * top-k distillation term both use it, per token and per set member.
 */
export function clippedSurrogate(rho: number, a: number, epsLow: number, epsHigh: number): number {
  return unsignedZero(-Math.min(rho * a, Math.min(Math.max(rho, 1 - epsLow), 1 + epsHigh) * a));
}

/**
 * d clippedSurrogate / d log pi at rho = exp(log pi - log pi_old): -A * rho where the min takes
 * the unclipped branch, 0 where the clipped one (a constant) wins.
 */
export function clippedSurrogateGrad(rho: number, a: number, epsLow: number, epsHigh: number): number {
  const clipped = Math.min(Math.max(rho, 1 - epsLow), 1 + epsHigh);
  return rho * a <= clipped * a ? -a * rho : 0;
}
