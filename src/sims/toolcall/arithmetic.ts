import { unsignedZero } from '../../rl/numbers';
import { ARITHMETIC_LIMITS, ArithmeticError } from './arithmetic-error';
import { tokenize, type Operator, type Token } from './arithmetic-lexer';
import { formatNumber } from './format';

export { ArithmeticError, ARITHMETIC_LIMITS, type ArithmeticErrorKind } from './arithmetic-error';
export { ALLOWED_SYNTAX, FUNCTION_NAMES } from './arithmetic-lexer';

/**
 * The calculator: a recursive-descent evaluator over the tokens of arithmetic-lexer. It never
 * turns text into code (no eval, no Function), knows no names besides its few functions, and
 * refuses before doing work: over-long text, deep nesting, and every number or intermediate
 * result that is not finite or exceeds ARITHMETIC_LIMITS.maxMagnitude.
 *
 * Grammar, loosest first (so `-2^2` is -4, `2^3^2` is 512, `2^-1` is 0.5, `7 - 2 - 1` is 4):
 *
 *   sum     = product (("+" | "-") product)*
 *   product = signed (("*" | "/" | "%") signed)*        % is the remainder, sign of the dividend
 *   signed  = ("-" | "+") signed | power
 *   power   = atom ("^" signed)?                         right-associative
 *   atom    = number | "(" sum ")" | name "(" sum ("," sum)* ")"
 *
 * Functions: sqrt(x), abs(x), floor(x), ceil(x), round(x) and round(x, digits) with digits 0-10
 * (halves round away from zero), min(a, ...), max(a, ...).
 *
 * @returns the value (never -0)
 * @throws ArithmeticError with a message a model can act on
 */
export function evaluateArithmetic(expression: string): number {
  if (typeof expression !== 'string') {
    throw new ArithmeticError('syntax', `The expression must be a string such as "12 * 7", not ${typeof expression}.`);
  }
  if (expression.length > ARITHMETIC_LIMITS.maxChars) {
    throw new ArithmeticError(
      'too-long',
      `The expression is ${expression.length} characters long; the limit is ${ARITHMETIC_LIMITS.maxChars}. ` +
        'Split the calculation into several calculator calls.',
    );
  }
  if (expression.trim() === '') {
    throw new ArithmeticError('empty', 'The expression is empty. Pass the arithmetic to compute, e.g. "3 * (4 + 5)".');
  }
  return unsignedZero(new Parser(tokenize(expression)).parse());
}

const OPERATOR_WORDS: Record<Operator, string> = {
  '+': 'sum',
  '-': 'difference',
  '*': 'product',
  '/': 'quotient',
  '%': 'remainder',
  '^': 'power',
};

function describeToken(t: Token): string {
  switch (t.kind) {
    case 'end':
      return 'the end of the expression';
    case 'number':
      return `the number ${t.text}`;
    case 'op':
      return `"${t.op}"`;
    case 'function':
      return `"${t.name}"`;
    default:
      return `"${t.kind}"`;
  }
}

/** Throws unless `value` is a real number within the calculator's range. */
function checked(value: number, what: string, pos: number): number {
  if (Number.isNaN(value)) {
    throw new ArithmeticError('not-real', `${what} is not a real number (for example the square root or a fractional power of a negative number).`, pos);
  }
  if (!Number.isFinite(value) || Math.abs(value) > ARITHMETIC_LIMITS.maxMagnitude) {
    throw new ArithmeticError(
      'too-large',
      `${what} is too large: the calculator works with magnitudes up to 1e15 (1,000,000,000,000,000). ` +
        'Check the expression for a mistake, or compute in smaller units.',
      pos,
    );
  }
  return value;
}

function binary(op: Operator, a: number, b: number, pos: number): number {
  const what = `The ${OPERATOR_WORDS[op]} ${formatNumber(a)} ${op} ${formatNumber(b)}`;
  switch (op) {
    case '+':
      return checked(a + b, what, pos);
    case '-':
      return checked(a - b, what, pos);
    case '*':
      return checked(a * b, what, pos);
    case '/':
    case '%':
      if (b === 0) {
        throw new ArithmeticError(
          'division-by-zero',
          `Division by zero in ${formatNumber(a)} ${op} 0 (at character ${pos + 1}). Check what the divisor should be.`,
          pos,
        );
      }
      return checked(op === '/' ? a / b : a % b, what, pos);
    case '^':
      if (a === 0 && b < 0) {
        throw new ArithmeticError('division-by-zero', `0 ^ ${formatNumber(b)} divides by zero (at character ${pos + 1}).`, pos);
      }
      return checked(Math.pow(a, b), what, pos);
  }
}

/** Rounds half away from zero, going through the decimal text so that round(1.005, 2) is 1.01. */
function roundTo(x: number, digits: number): number {
  const magnitude = Math.abs(x);
  let rounded = Number(`${Math.round(Number(`${magnitude}e${digits}`))}e-${digits}`);
  // Very small magnitudes print with an exponent already, which the text shift cannot take.
  if (!Number.isFinite(rounded)) rounded = Math.round(magnitude * 10 ** digits) / 10 ** digits;
  return Math.sign(x) * rounded;
}

type Fn = { arity: [min: number, max: number]; apply: (args: number[], pos: number) => number };

const MAX_ROUND_DIGITS = 10;

const FUNCTIONS = new Map<string, Fn>([
  [
    'sqrt',
    {
      arity: [1, 1],
      apply: ([x], pos) => {
        if (x < 0) {
          throw new ArithmeticError('not-real', `sqrt(${formatNumber(x)}) is not a real number: the argument is negative.`, pos);
        }
        return Math.sqrt(x);
      },
    },
  ],
  ['abs', { arity: [1, 1], apply: ([x]) => Math.abs(x) }],
  ['floor', { arity: [1, 1], apply: ([x]) => Math.floor(x) }],
  ['ceil', { arity: [1, 1], apply: ([x]) => Math.ceil(x) }],
  [
    'round',
    {
      arity: [1, 2],
      apply: ([x, digits = 0], pos) => {
        if (!Number.isInteger(digits) || digits < 0 || digits > MAX_ROUND_DIGITS) {
          throw new ArithmeticError(
            'syntax',
            `round(x, digits) takes a whole number of digits from 0 to ${MAX_ROUND_DIGITS}, not ${formatNumber(digits)}.`,
            pos,
          );
        }
        return roundTo(x, digits);
      },
    },
  ],
  ['min', { arity: [1, Infinity], apply: (args) => Math.min(...args) }],
  ['max', { arity: [1, Infinity], apply: (args) => Math.max(...args) }],
]);

class Parser {
  private at = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    const value = this.sum();
    const t = this.peek();
    if (t.kind !== 'end') {
      const hint = t.kind === 'number' || t.kind === '(' || t.kind === 'function' ? ' Is an operator such as * missing?' : '';
      throw new ArithmeticError('syntax', `Found ${describeToken(t)} at character ${t.pos + 1} where an operator or the end was expected.${hint}`, t.pos);
    }
    return value;
  }

  private peek(): Token {
    return this.tokens[this.at];
  }

  private next(): Token {
    return this.tokens[this.at++];
  }

  private peekOp(...ops: Operator[]): Operator | null {
    const t = this.peek();
    return t.kind === 'op' && ops.includes(t.op) ? t.op : null;
  }

  /**
   * Guards each recursion into a nested construct. Parentheses are already bounded by the
   * tokenizer; this also bounds chains of signs (`- - - 1`) and powers (`2^2^2^...`).
   */
  private nested<T>(pos: number, parse: () => T): T {
    if (++this.depth > ARITHMETIC_LIMITS.maxDepth) {
      throw new ArithmeticError(
        'too-deep',
        `The expression nests more than ${ARITHMETIC_LIMITS.maxDepth} levels deep (parentheses, signs, powers) ` +
          `at character ${pos + 1}. Simplify it or split it into several calculator calls.`,
        pos,
      );
    }
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }

  private sum(): number {
    let value = this.product();
    for (let op = this.peekOp('+', '-'); op; op = this.peekOp('+', '-')) {
      const pos = this.next().pos;
      value = binary(op, value, this.product(), pos);
    }
    return value;
  }

  private product(): number {
    let value = this.signed();
    for (let op = this.peekOp('*', '/', '%'); op; op = this.peekOp('*', '/', '%')) {
      const pos = this.next().pos;
      value = binary(op, value, this.signed(), pos);
    }
    return value;
  }

  private signed(): number {
    const op = this.peekOp('+', '-');
    if (op === null) return this.power();
    const pos = this.next().pos;
    const value = this.nested(pos, () => this.signed());
    return op === '-' ? -value : value;
  }

  private power(): number {
    const base = this.atom();
    if (this.peekOp('^') === null) return base;
    const pos = this.next().pos;
    return binary(
      '^',
      base,
      this.nested(pos, () => this.signed()),
      pos,
    );
  }

  private atom(): number {
    const t = this.next();
    switch (t.kind) {
      case 'number':
        return checked(t.value, `The number ${t.text}`, t.pos);
      case '(':
        return this.nested(t.pos, () => {
          const value = this.sum();
          this.expect(')', t.pos);
          return value;
        });
      case 'function':
        return this.nested(t.pos, () => this.call(t.name, t.pos));
      default: {
        const previous = this.at >= 2 ? this.tokens[this.at - 2] : null;
        const after = previous ? ` after ${describeToken(previous)}` : '';
        const percent = [t, previous].some((x) => x?.kind === 'op' && x.op === '%');
        throw new ArithmeticError(
          'syntax',
          `Expected a number, "(" or a function${after} at character ${t.pos + 1}, but found ${describeToken(t)}.` +
            (t.kind === 'end' ? ' The expression ends too early.' : '') +
            (percent ? ' "%" is the remainder (7 % 3 = 1); for a percentage write 20 / 100 * x.' : ''),
          t.pos,
        );
      }
    }
  }

  private call(name: string, pos: number): number {
    const fn = FUNCTIONS.get(name)!;
    this.expect('(', pos);
    const args = [this.sum()];
    while (this.peek().kind === ',') {
      this.next();
      args.push(this.sum());
    }
    this.expect(')', pos);
    const [min, max] = fn.arity;
    if (args.length < min || args.length > max) {
      const wanted = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} or ${max}`;
      throw new ArithmeticError(
        'syntax',
        `${name}() takes ${wanted} argument${wanted === '1' ? '' : 's'}, but got ${args.length} (at character ${pos + 1}).`,
        pos,
      );
    }
    return checked(fn.apply(args, pos), `${name}(${args.map(formatNumber).join(', ')})`, pos);
  }

  private expect(kind: '(' | ')', openedAt: number): void {
    const t = this.next();
    if (t.kind !== kind) {
      throw new ArithmeticError(
        'syntax',
        `Expected "${kind}" at character ${t.pos + 1} (to close the one at character ${openedAt + 1}), but found ${describeToken(t)}.` +
          (t.kind === 'number' || t.kind === '(' ? ' Is an operator such as * missing?' : ''),
        t.pos,
      );
    }
  }
}
