import { ARITHMETIC_LIMITS, ArithmeticError } from './arithmetic-error';

/**
 * The calculator's tokenizer. A hand-written single pass: no regular expression runs over the
 * model's text and nothing is ever evaluated as code.
 *
 * Spelling accepted besides ASCII: U+2212 (−) reads as minus, × as * and ÷ as /, because
 * models copy them from the problem text. `**` is the same operator as `^`.
 *
 * Commas: outside a function's parentheses a comma may only group thousands (`1,250`,
 * `12,345.5`; every group after the first exactly three digits). Inside `min(...)`,
 * `max(...)` or `round(...)` commas separate arguments, so a thousands group there
 * (`max(1,000)`) is refused as ambiguous rather than silently read as two arguments.
 */

export type Operator = '+' | '-' | '*' | '/' | '%' | '^';

export type Token =
  | { kind: 'number'; value: number; text: string; pos: number }
  | { kind: 'op'; op: Operator; pos: number }
  | { kind: 'function'; name: string; pos: number }
  | { kind: '(' | ')' | ',' | 'end'; pos: number };

/** Functions the calculator knows. A Set, not an object, so `constructor` or `__proto__` never hit a prototype. */
export const FUNCTION_NAMES: ReadonlySet<string> = new Set(['sqrt', 'abs', 'round', 'floor', 'ceil', 'min', 'max']);

export const ALLOWED_SYNTAX =
  'The calculator accepts numbers, the operators + - * / % ^ (or **), parentheses, and the functions ' + `${[...FUNCTION_NAMES].join(', ')}.`;

const SINGLE_CHAR_OPS = new Map<string, Operator>([
  ['+', '+'],
  ['-', '-'],
  ['\u2212', '-'],
  ['*', '*'],
  ['\u00d7', '*'],
  ['/', '/'],
  ['\u00f7', '/'],
  ['%', '%'],
  ['^', '^'],
]);

/** Why a character a model is likely to write does not belong in an expression. */
const CHARACTER_HINTS = new Map<string, string>([
  ['=', 'The calculator computes the value itself; leave out "=" and anything after it.'],
  ['$', 'Leave out currency signs: write 12.50, not $12.50.'],
  ['[', 'Use round parentheses ( ) for grouping.'],
  ['{', 'Use round parentheses ( ) for grouping.'],
]);

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isNameStart = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isNameChar = (c: string | undefined): boolean => c !== undefined && (isNameStart(c) || isDigit(c));
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';

/** True when `s` has exactly three digits at `i` and no digit right after them. */
function thousandsGroupAt(s: string, i: number): boolean {
  return isDigit(s[i]) && isDigit(s[i + 1]) && isDigit(s[i + 2]) && !isDigit(s[i + 3]);
}

function readDigits(s: string, i: number): number {
  while (isDigit(s[i])) i++;
  return i;
}

/**
 * Splits an expression into tokens and checks that parentheses balance and nest at most
 * ARITHMETIC_LIMITS.maxDepth deep. The check is a counter, so ten thousand '(' cost nothing.
 *
 * @throws ArithmeticError
 */
export function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  // One entry per open parenthesis: whether it belongs to a function call (commas separate arguments).
  const parens: boolean[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (isSpace(c)) {
      i++;
    } else if (isDigit(c) || (c === '.' && isDigit(s[i + 1]))) {
      i = readNumber(s, i, parens.at(-1) === true, tokens);
    } else if (isNameStart(c)) {
      i = readName(s, i, tokens);
    } else if (c === '*' && s[i + 1] === '*') {
      tokens.push({ kind: 'op', op: '^', pos: i });
      i += 2;
    } else if (SINGLE_CHAR_OPS.has(c)) {
      tokens.push({ kind: 'op', op: SINGLE_CHAR_OPS.get(c)!, pos: i });
      i++;
    } else if (c === '(') {
      parens.push(tokens.at(-1)?.kind === 'function');
      if (parens.length > ARITHMETIC_LIMITS.maxDepth) {
        throw new ArithmeticError(
          'too-deep',
          `Parentheses nest more than ${ARITHMETIC_LIMITS.maxDepth} levels deep (at character ${i + 1}). ` +
            'Simplify the expression or split it into several calculator calls.',
          i,
        );
      }
      tokens.push({ kind: '(', pos: i++ });
    } else if (c === ')') {
      if (parens.pop() === undefined) {
        throw new ArithmeticError('syntax', `Unmatched ")" at character ${i + 1}: no "(" is open there.`, i);
      }
      tokens.push({ kind: ')', pos: i++ });
    } else if (c === ',') {
      if (parens.at(-1) !== true) {
        throw new ArithmeticError(
          'syntax',
          `Unexpected "," at character ${i + 1}. A comma may only separate the arguments of a function ` +
            '(max(2, 3)) or group thousands (1,250); write plain numbers otherwise.',
          i,
        );
      }
      tokens.push({ kind: ',', pos: i++ });
    } else {
      const hint = CHARACTER_HINTS.get(c) ?? ALLOWED_SYNTAX;
      throw new ArithmeticError('syntax', `Unexpected character ${JSON.stringify(c)} at character ${i + 1}. ${hint}`, i);
    }
  }
  if (parens.length > 0) {
    throw new ArithmeticError('syntax', `Missing ")": ${parens.length} parenthes${parens.length === 1 ? 'is is' : 'es are'} opened but not closed.`, s.length);
  }
  tokens.push({ kind: 'end', pos: s.length });
  return tokens;
}

function readNumber(s: string, start: number, insideCall: boolean, tokens: Token[]): number {
  let i = readDigits(s, start);
  // A comma followed by a digit is meant to group thousands or to separate arguments; any
  // other comma is left to the caller's general comma rule.
  if (s[i] === ',' && i > start && isDigit(s[i + 1])) {
    if (insideCall) {
      if (thousandsGroupAt(s, i + 1)) {
        throw new ArithmeticError(
          'syntax',
          `"${s.slice(start, i + 4)}" at character ${start + 1} is ambiguous: inside a function's parentheses ` +
            'commas separate arguments. Write the number without a thousands separator, and put a space ' +
            'after the comma between arguments: max(1000, 2).',
          start,
        );
      }
    } else {
      if (i - start > 3) throw groupingError(s, start);
      while (s[i] === ',' && isDigit(s[i + 1])) {
        if (!thousandsGroupAt(s, i + 1)) throw groupingError(s, start);
        i += 4;
      }
    }
  }
  if (s[i] === '.' && isDigit(s[i + 1])) i = readDigits(s, i + 1);
  if ((s[i] === 'e' || s[i] === 'E') && (isDigit(s[i + 1]) || ((s[i + 1] === '+' || s[i + 1] === '-') && isDigit(s[i + 2])))) {
    i = readDigits(s, i + 2);
  }
  const text = s.slice(start, i);
  tokens.push({ kind: 'number', value: Number(text.replace(/,/g, '')), text, pos: start });
  return i;
}

function groupingError(s: string, start: number): ArithmeticError {
  let end = start;
  while (isDigit(s[end]) || s[end] === ',') end++;
  return new ArithmeticError(
    'syntax',
    `"${s.slice(start, end)}" at character ${start + 1} is not a number: a comma in a number must separate ` +
      'groups of exactly three digits (1,250 or 1,000,000). Write the number without commas.',
    start,
  );
}

function readName(s: string, start: number, tokens: Token[]): number {
  let i = start + 1;
  while (isNameChar(s[i])) i++;
  const name = s.slice(start, i);
  if (!FUNCTION_NAMES.has(name)) {
    const shown = name.length > 40 ? `${name.slice(0, 40)}...` : name;
    const hint = name === 'x' || name === 'X' ? ' Write multiplication as *, e.g. 3 * 4.' : '';
    throw new ArithmeticError(
      'unknown-name',
      `Unknown name "${shown}" at character ${start + 1}: the calculator has no variables or other names.${hint} ` +
        `${ALLOWED_SYNTAX} Put the numbers themselves into the expression.`,
      start,
    );
  }
  let next = i;
  while (next < s.length && isSpace(s[next])) next++;
  if (s[next] !== '(') {
    throw new ArithmeticError('syntax', `"${name}" at character ${start + 1} is a function; call it with parentheses, e.g. ${name}(16).`, start);
  }
  tokens.push({ kind: 'function', name, pos: start });
  return i;
}
