import { InvalidArgumentError, LengthMismatchError } from './errors';

/** Throws unless both per-token arrays have the same length. */
export function assertSameLength(what: string, a: { readonly length: number }, b: { readonly length: number }): void {
  if (a.length !== b.length) throw new LengthMismatchError(what, a.length, b.length);
}

/**
 * Throws unless `x` is finite. A NaN or infinite log-prob reaching the advantages would
 * silently poison the whole batch's gradient, so it is stopped where it enters.
 */
export function assertFinite(what: string, x: number): void {
  if (!Number.isFinite(x)) {
    throw new InvalidArgumentError(
      `${what} is ${x}; it must be a finite number. A log-prob of -Infinity means the scorer ` +
        `gave a sampled token zero probability: score with the same weights, temperature and ` +
        `token ids that generated the response.`,
    );
  }
}

/** Arithmetic mean; 0 for an empty list so callers need no special case. */
export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Throws unless `n` is a non-negative integer (a token or sample count). */
export function assertCount(what: string, n: number): void {
  if (!Number.isInteger(n) || n < 0) {
    throw new InvalidArgumentError(`${what} is ${n}; it must be a non-negative integer.`);
  }
}

/**
 * `x`, with -0 turned into 0. A product or a negated zero can be -0, which formats as "-0"
 * (Intl.NumberFormat, toLocaleString) and is not Object.is-equal to 0, so a recorded value
 * would differ from the same value replayed; adding 0 is the IEEE 754 way to drop the sign.
 */
export function unsignedZero(x: number): number {
  return x + 0;
}
