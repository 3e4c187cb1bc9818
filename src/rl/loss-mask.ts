import { RlError } from './errors';

/**
 * A per-token loss mask, as slime's `loss_mask`: 1 on a token the policy wrote (the loss trains
 * it), 0 on a token it only read, such as a tool's output inside a multi-turn trajectory. Every
 * caller that weighs tokens (the CPU loss, the engine's gradient, the trainer's statistics, the
 * run log) reads the mask through these functions, so a masked token is left out the same way
 * everywhere. No mask means every token counts.
 */
export type LossMask = readonly number[];

/** A loss mask that does not fit the tokens it describes. */
export class LossMaskError extends RlError {}

/**
 * Refuses a mask of the wrong length or with a value other than 0 and 1.
 *
 * @throws LossMaskError naming `where`
 */
export function checkLossMask(mask: LossMask | undefined, tokens: number, where: string): void {
  if (!mask) return;
  if (mask.length !== tokens) {
    throw new LossMaskError(`${where}: the loss mask has ${mask.length} entries for ${tokens} tokens; give one 0 or 1 per response token.`);
  }
  const bad = mask.findIndex((m) => m !== 0 && m !== 1);
  if (bad !== -1) throw new LossMaskError(`${where}: loss mask entry ${bad} is ${mask[bad]}; use 1 for a policy token and 0 for an observation token.`);
}

/** Whether token t counts in the loss. */
export function counts(mask: LossMask | undefined, t: number): boolean {
  return !mask || mask[t] === 1;
}

/** How many of n tokens count in the loss: the denominator of a sample's token mean. */
export function countedTokens(mask: LossMask | undefined, n: number): number {
  if (!mask) return n;
  let k = 0;
  for (let t = 0; t < n; t++) if (mask[t] === 1) k++;
  return k;
}

/** The values at counted tokens only (statistics over what the loss trains). */
export function countedValues<T>(values: ArrayLike<T>, mask: LossMask | undefined): T[] {
  return Array.from(values).filter((_, t) => counts(mask, t));
}

/**
 * Advantages with zero on every masked token: slime multiplies the step-wise advantages by the
 * loss mask, so an observation token carries no advantage into the loss or any statistic.
 */
export function maskAdvantages(advantages: readonly number[], mask: LossMask | undefined): number[] {
  return mask ? advantages.map((a, t) => (mask[t] === 1 ? a : 0)) : [...advantages];
}
