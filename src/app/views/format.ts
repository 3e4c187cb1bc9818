/** How the views write numbers and votes. */

/** A number for display: fixed digits, a real minus sign, an en dash for missing values. */
export function fmt(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const s = Math.abs(x).toFixed(digits);
  return (x < 0 && Number(s) !== 0 ? '\u2212' : '') + s;
}

/** A signed number for display (+0.500 / −0.500). */
export function fmtSigned(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const s = fmt(x, digits);
  return x > 0 && Number(Math.abs(x).toFixed(digits)) !== 0 ? `+${s}` : s;
}

/** A judge vote as shown: +1, −1, 0, or "failed" for a reply without a usable \boxed{}. */
export function voteText(score: number | null): string {
  return score === null ? 'failed' : fmtSigned(score, 0);
}

/**
 * A hint judge's vote as it reads: +1 means it found a hint, -1 that the next state held none,
 * which is no verdict on the reply, so it is shown neutral rather than as a penalty.
 */
export function hintVoteView(score: number | null): { text: string; cls: string } {
  if (score === null) return { text: voteText(null), cls: signClass(null) };
  return score > 0 ? { text: 'hint', cls: 'pos' } : { text: 'no hint', cls: 'zero' };
}

/** The colour class of a signed value: pos, neg, zero, or none when missing. */
export function signClass(x: number | null | undefined): string {
  return x === null || x === undefined ? 'none' : x > 0 ? 'pos' : x < 0 ? 'neg' : 'zero';
}

/** A token's text in quotes, newlines drawn as ↵ so that a line break is seen. */
export function quotedToken(text: string): string {
  return `“${text.replace(/\n/g, '↵')}”`;
}

/** A byte token's bytes as its pill shows them: 0xD0. */
export function byteLabel(bytes: readonly number[]): string {
  return bytes.map((b) => `0x${b.toString(16).toUpperCase().padStart(2, '0')}`).join(' ');
}

/**
 * A token as the token view names it: its text in quotes, or a byte token's bytes and the text
 * its run of bytes reads as; a token whose bytes the log lost, by what its run made, where known.
 */
export function tokenName(t: { text: string; bytes: readonly number[] | null; run: string | null; lost?: boolean }): string {
  if (t.bytes) return `byte${t.bytes.length > 1 ? 's' : ''} ${byteLabel(t.bytes)} of ${quotedToken(t.run ?? '')}`;
  if (t.lost) return `${t.run === null ? 'a token' : `part of ${quotedToken(t.run)}`}: this log did not keep its bytes`;
  return quotedToken(t.text);
}
