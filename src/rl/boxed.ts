/**
 * Reading `\boxed{...}` answers out of judge text.
 *
 * Judge outputs are untrusted and can be long (a 100 kB rambling answer is normal for a
 * thinking model), so everything here is a single linear pass: no regular expression runs
 * over the whole text, because nested quantifiers over attacker-shaped input can backtrack
 * catastrophically.
 */

/** The three classes a judge can answer: progress, ambiguous, correction/redo. */
export const BOXED_SCORES = [1, 0, -1] as const;
export type BoxedScore = (typeof BOXED_SCORES)[number];

const BOX_OPEN = '\\boxed{';
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;

/**
 * A real score is one or two characters; anything much longer is prose, and capping the
 * length keeps the unwrapping below (quadratic in the worst case) trivially cheap.
 */
const MAX_SCORE_CONTENT = 64;

/** Wrappers a judge puts around a number that do not change it. */
const WRAPPERS = ['\\boxed', '\\text', '\\textbf', '\\mathrm', '\\mathbf', '\\displaystyle'];

/** Characters judges (and their tokenizers) use for a minus sign besides ASCII '-'. */
const MINUS_LIKE = /[\u2212\u2013\uFE63\uFF0D]/g;

/** Which box of a judge's text is its verdict: the personal-agent judges read the last, the reference's tool-call PRM the first. */
export type BoxChoice = 'first' | 'last';

/**
 * The content of the first or the last `\boxed{...}` to close, or null when no box is closed.
 *
 * Braces are matched with a stack, so `\boxed{{1}}` and `\boxed{\text{1}}` close at the
 * right brace. `\{`, `\}` are literal characters in LaTeX and `\\` is a line break, so
 * neither moves the depth. A box left open (a judge cut off by its token limit) is ignored
 * and an earlier closed box still counts. Boxes are ordered by where they close, so of two
 * nested boxes the inner one is first.
 */
export function boxContent(text: string, which: BoxChoice): string | null {
  // For each open brace: the index where a box's content starts, or -1 for a plain brace.
  const stack: number[] = [];
  let start = -1;
  let end = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) {
      if (text.startsWith(BOX_OPEN, i)) {
        stack.push(i + BOX_OPEN.length);
        i += BOX_OPEN.length - 1;
        continue;
      }
      const next = text.charCodeAt(i + 1);
      if (next === LBRACE || next === RBRACE || next === BACKSLASH) i++;
      continue;
    }
    if (c === LBRACE) {
      stack.push(-1);
    } else if (c === RBRACE && stack.length > 0) {
      const open = stack.pop()!;
      if (open >= 0) {
        start = open;
        end = i;
        if (which === 'first') break;
      }
    }
  }
  return start < 0 ? null : text.slice(start, end);
}

/** Index of the brace closing the one at `open`, or -1. Only used on short strings. */
function matchingBrace(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === LBRACE) depth++;
    else if (c === RBRACE && --depth === 0) return i;
  }
  return -1;
}

/** Strips `{...}` groups and formatting wrappers that enclose the whole string. */
function unwrap(content: string): string {
  let s = content.trim();
  for (;;) {
    if (s.startsWith('{') && matchingBrace(s, 0) === s.length - 1) {
      s = s.slice(1, -1).trim();
      continue;
    }
    const wrapper = WRAPPERS.find((w) => s.startsWith(w + '{') && matchingBrace(s, w.length) === s.length - 1);
    if (wrapper === undefined) return s;
    s = s.slice(wrapper.length + 1, -1).trim();
  }
}

/**
 * The judge's score: the content of the last closed `\boxed{...}` (or the first, `which`) when
 * it reads as 1, 0 or -1; otherwise null (a failed vote).
 *
 * Accepted spellings of the content: optional sign (`+`, `-`, or a unicode minus such as
 * U+2212), whitespace anywhere, and enclosing `{...}`, `\text{...}`, `\textbf{...}`,
 * `\mathrm{...}`, `\mathbf{...}` or `\boxed{...}`. So `\boxed{ -1 }`, `\boxed{+1}`,
 * `\boxed{{1}}` and `\boxed{\text{1}}` all parse; `\boxed{}`, `\boxed{1.0}`, `\boxed{2}`
 * and `\boxed{yes}` are null.
 *
 * Differs from the reference implementation, which takes the last match of
 * `\\boxed\{([-+]?\d)\}` and so skips over a later malformed box to an earlier valid one
 * and rejects `\boxed{ -1 }`. Here the last box is final: a judge that ends on an
 * unreadable box has not given a score, and an earlier box it went on from is not its verdict.
 *
 * @param text - raw judge output, any length
 * @param which - 'first' for the tool-call PRM, whose reference reads the first box
 */
export function parseBoxedScore(text: string, which: BoxChoice = 'last'): BoxedScore | null {
  const content = boxContent(text, which);
  if (content === null || content.length > MAX_SCORE_CONTENT) return null;
  const compact = unwrap(content).replace(MINUS_LIKE, '-').replace(/\s+/g, '');
  switch (compact) {
    case '1':
    case '+1':
      return 1;
    case '0':
    case '+0':
    case '-0':
      return 0;
    case '-1':
      return -1;
    default:
      return null;
  }
}
