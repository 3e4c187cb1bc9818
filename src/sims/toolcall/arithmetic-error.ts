/**
 * What the calculator refuses and why. Every message is written for the model that made the
 * call: it says what was wrong and how to write the call instead, because the message goes
 * back to the model as the tool result and is all it has to fix its next call.
 */

/** Bounds on what one calculator call may ask for; they keep a hostile call cheap to refuse. */
export const ARITHMETIC_LIMITS = {
  /** Characters in one expression. GSM8K steps need a few dozen. */
  maxChars: 1000,
  /** Nested parentheses, signs, powers and function calls. Keeps the parser's recursion shallow. */
  maxDepth: 64,
  /** Largest magnitude of any number or intermediate result; beyond it doubles lose integer precision. */
  maxMagnitude: 1e15,
} as const;

export type ArithmeticErrorKind = 'empty' | 'too-long' | 'too-deep' | 'syntax' | 'unknown-name' | 'division-by-zero' | 'too-large' | 'not-real';

export class ArithmeticError extends Error {
  override name = 'ArithmeticError';
  constructor(
    readonly kind: ArithmeticErrorKind,
    message: string,
    /** 0-based character index in the expression, where one place is to blame. */
    readonly position?: number,
  ) {
    super(message);
  }
}
