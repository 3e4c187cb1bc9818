import { unsignedZero } from '../../rl/numbers';
import { boxContent } from '../../rl/boxed';

/**
 * Reading the number a final answer commits to, and comparing it with GSM8K's `#### N`.
 * All scans are linear regular expressions without nested quantifiers, safe on long output.
 */

/** Where the answer was read: the last `\boxed{}`, an "answer is N" phrase, or the last number. */
export type AnswerSource = 'boxed' | 'answer-phrase' | 'last-number';

export interface FinalAnswer {
  value: number;
  source: AnswerSource;
}

/** Two answers are the same number when they differ by at most this much. */
export const ANSWER_TOLERANCE = 1e-6;

// A minus counts only where it cannot be a subtraction ("10-3" is 10 and 3).
const NUMBER = /(?:(?<![\w.)])-)?\d[\d,]*(?:\.\d+)?/g;
const GROUPED = /^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$/;
const ANSWER_PHRASE = /\banswer\b/gi;

/**
 * The numbers in `text`, in order. `1,250` is one number; commas that do not group thousands
 * separate numbers (`3,4` is 3 and 4); a trailing comma is punctuation.
 */
export function numbersIn(text: string): number[] {
  const out: number[] = [];
  for (const [match] of text.matchAll(NUMBER)) {
    const token = match.replace(/,+$/, '');
    const parts = token.includes(',') && !GROUPED.test(token) ? token.split(',').filter(Boolean) : [token.replace(/,/g, '')];
    for (const part of parts) {
      const value = Number(part);
      if (Number.isFinite(value)) out.push(unsignedZero(value));
    }
  }
  return out;
}

/** The first number on the rest of the line after the last "answer" that has one. */
function phraseAnswer(text: string): number | null {
  const starts = [...text.matchAll(ANSWER_PHRASE)].map((m) => m.index + m[0].length);
  for (let k = starts.length - 1; k >= 0; k--) {
    const lineEnd = text.indexOf('\n', starts[k]);
    const [first] = numbersIn(text.slice(starts[k], lineEnd < 0 ? text.length : lineEnd));
    if (first !== undefined) return first;
  }
  return null;
}

/**
 * The number a final answer gives, looked for in this order: the last number inside the last
 * closed `\boxed{...}`; the first number after the last "answer" (is / : / =) on its line; the
 * last number anywhere. A box or phrase without a number is skipped, not fatal.
 *
 * @returns null when the text holds no number at all
 */
export function readFinalAnswer(text: string): FinalAnswer | null {
  const box = boxContent(text, 'last');
  const boxed = box === null ? undefined : numbersIn(box).at(-1);
  if (boxed !== undefined) return { value: boxed, source: 'boxed' };
  const phrase = phraseAnswer(text);
  if (phrase !== null) return { value: phrase, source: 'answer-phrase' };
  const last = numbersIn(text).at(-1);
  return last === undefined ? null : { value: last, source: 'last-number' };
}

export function sameAnswer(a: number, b: number): boolean {
  return Math.abs(a - b) <= ANSWER_TOLERANCE;
}
