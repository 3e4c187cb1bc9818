import { unsignedZero } from '../../rl/numbers';

/**
 * A number as the model reads it back. Integers print in full (no exponent up to the
 * calculator's 1e15 limit); other values are cut to 14 significant digits, which hides binary
 * rounding noise (0.1 + 0.2 reads 0.3) and keeps cents on amounts in the billions. -0 reads 0.
 */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x) && Math.abs(x) < 1e21) return unsignedZero(x).toFixed(0);
  return String(unsignedZero(Number(x.toPrecision(14))));
}
