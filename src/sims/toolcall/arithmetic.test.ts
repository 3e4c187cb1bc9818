import { describe, expect, it } from 'vitest';
import { ARITHMETIC_LIMITS, ArithmeticError, evaluateArithmetic, type ArithmeticErrorKind } from './arithmetic';
import { tokenize } from './arithmetic-lexer';
import { formatNumber } from './format';

/** The error evaluateArithmetic throws for `expression` (fails the test if it returns). */
function errorOf(expression: string): ArithmeticError {
  try {
    const value = evaluateArithmetic(expression);
    throw new Error(`expected an ArithmeticError for ${JSON.stringify(expression.slice(0, 50))}, got ${value}`);
  } catch (err) {
    if (!(err instanceof ArithmeticError)) throw err;
    return err;
  }
}

function expectRefused(expression: string, kind: ArithmeticErrorKind, message?: RegExp): ArithmeticError {
  const err = errorOf(expression);
  expect(err.kind).toBe(kind);
  expect(err.name).toBe('ArithmeticError');
  if (message) expect(err.message).toMatch(message);
  return err;
}

describe('evaluateArithmetic: values', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['7 - 2 - 1', 4], // left-associative
    ['64 / 4 / 2', 8], // left-associative
    ['2 ^ 3 ^ 2', 512], // right-associative: 2^(3^2)
    ['2 ** 10', 1024],
    ['-2 ^ 2', -4], // the sign binds looser than the power
    ['(-2) ^ 2', 4],
    ['2 ^ -1', 0.5],
    ['- - 3', 3],
    ['+4', 4],
    ['3 * -2', -6],
    ['17 % 5', 2],
    ['-7 % 3', -1], // sign of the dividend
    ['10 - 4 % 3 * 2', 8],
    ['.5 + 1.25', 1.75],
    ['2.5e3', 2500],
    ['1,250 * 0.18', 225],
    ['12,345.5 + 0.5', 12346],
    ['1,000,000 / 4', 250000],
    ['(1,000) + max(2, 3)', 1003],
    ['sqrt(144) + abs(-3)', 15],
    ['round(2.5) + round(-2.5)', 0], // halves away from zero: 3 + (-3)
    ['round(1.005, 2)', 1.01],
    ['round(19.99 * 3, 1)', 60],
    ['floor(7.9) + ceil(7.1)', 15],
    ['min(4, 2, 8) * max(1, 5)', 10],
    ['max ( 2 , 3 )', 3],
    ['6 \u00f7 3 \u00d7 2 \u2212 1', 3], // ÷ × and U+2212 minus are accepted
    ['  ( ( 48 - 12 ) / 4 )\n', 9],
    ['0 * -5', 0],
  ])('%s = %d', (expression, value) => {
    expect(evaluateArithmetic(expression)).toBeCloseTo(value, 12);
  });

  it('never returns -0', () => {
    expect(Object.is(evaluateArithmetic('0 * -5'), 0)).toBe(true);
    expect(Object.is(evaluateArithmetic('-0'), 0)).toBe(true);
  });

  it('accepts magnitudes up to exactly 1e15', () => {
    expect(evaluateArithmetic('1e15')).toBe(1e15);
    expect(evaluateArithmetic('999,999,999,999,999 + 1')).toBe(1e15);
  });
});

describe('evaluateArithmetic: hostile and broken input', () => {
  it('refuses 10,000 "(" with an error instead of a stack overflow', () => {
    expectRefused('('.repeat(10_000), 'too-long', /10000 characters long; the limit is 1000/);
    // Within the length limit the nesting limit answers; the tokenizer counts, it does not recurse.
    expectRefused(`${'('.repeat(400)}1${')'.repeat(400)}`, 'too-deep', /more than 64 levels/);
    expect(() => tokenize('('.repeat(10_000))).toThrow(ArithmeticError);
  });

  it('allows nesting up to the limit and bounds sign and power chains too', () => {
    const depth = ARITHMETIC_LIMITS.maxDepth;
    expect(evaluateArithmetic(`${'('.repeat(depth - 1)}7${')'.repeat(depth - 1)}`)).toBe(7);
    expectRefused(`${'- '.repeat(400)}1`, 'too-deep', /signs/);
    expectRefused(Array(300).fill('1').join('^'), 'too-deep');
  });

  it('refuses a 10 kB expression before reading it', () => {
    const err = expectRefused('1+'.repeat(5_000) + '1', 'too-long', /Split the calculation/);
    expect(err.message).toContain('10001 characters');
  });

  it('refuses results that are not finite or exceed 1e15', () => {
    expectRefused('9^9^9', 'too-large', /9 \^ 387420489 is too large.*1e15/);
    expectRefused('10^16', 'too-large');
    expectRefused('1e16', 'too-large', /The number 1e16/);
    expectRefused('1e400 - 1e400', 'too-large');
    expectRefused('999999999999999 + 2', 'too-large', /sum/);
    expectRefused('(-8) ^ (1/3)', 'not-real');
    expectRefused('sqrt(-4)', 'not-real', /negative/);
  });

  it('refuses division by zero, naming the operation', () => {
    expectRefused('5 / 0', 'division-by-zero', /5 \/ 0/);
    expectRefused('5 / (3 - 3)', 'division-by-zero');
    expectRefused('5 % 0', 'division-by-zero');
    expectRefused('0 ^ -1', 'division-by-zero');
  });

  it.each([
    ['process.exit(1)', 'process'],
    ['constructor', 'constructor'],
    ['__proto__', '__proto__'],
    ['toString(1)', 'toString'],
    ['Math.pow(2, 3)', 'Math'],
    ['2 + x', 'x'],
    ['eval("1")', 'eval'],
  ])('refuses the identifier in %s and names it', (expression, name) => {
    const err = expectRefused(expression, 'unknown-name');
    expect(err.message).toContain(`Unknown name "${name}"`);
    expect(err.message).toMatch(/sqrt, abs, round/);
  });

  it('explains common mistakes', () => {
    expectRefused('3 x 4', 'unknown-name', /Write multiplication as \*/);
    expectRefused('', 'empty', /empty/);
    expectRefused('  \n ', 'empty');
    expectRefused('$12.50 * 2', 'syntax', /currency/);
    expectRefused('2 + 3 = 5', 'syntax', /leave out "="/);
    expectRefused('50 * 20%', 'syntax', /percentage/);
    expectRefused('2 3', 'syntax', /operator such as \* missing/);
    expectRefused('2(3)', 'syntax', /operator such as \* missing/);
    expectRefused('1 +', 'syntax', /ends too early/);
    expectRefused('(1 + 2', 'syntax', /Missing "\)"/);
    expectRefused('1 + 2)', 'syntax', /Unmatched "\)"/);
    expectRefused('sqrt 4', 'syntax', /sqrt\(16\)/);
    expectRefused('sqrt(1, 2)', 'syntax', /takes 1 argument, but got 2/);
    expectRefused('round(2.5, 1.5)', 'syntax', /whole number of digits/);
    expectRefused('min()', 'syntax');
    expectRefused('[1 + 2]', 'syntax', /round parentheses/);
    expectRefused('2 # 3', 'syntax', /Unexpected character "#" at character 3/);
    expectRefused('1 \u2013 2', 'syntax'); // an en dash is not a minus
  });

  it('reads commas only where they are unambiguous', () => {
    expectRefused('1,00 + 1', 'syntax', /groups of exactly three digits/);
    expectRefused('1,0000', 'syntax');
    expectRefused('1000,000', 'syntax');
    expectRefused('1, 2', 'syntax', /A comma may only/);
    expectRefused('max(1,000)', 'syntax', /ambiguous/);
    expect(evaluateArithmetic('max(1,2)')).toBe(2);
  });

  it('reports the position of the problem', () => {
    expect(errorOf('1 + foo').position).toBe(4);
    expect(errorOf('1 + (2 *').position).toBe(8);
  });
});

describe('formatNumber', () => {
  it('prints integers in full and hides binary rounding noise', () => {
    expect(formatNumber(123_456_789_012_345)).toBe('123456789012345');
    expect(formatNumber(1e15)).toBe('1000000000000000');
    expect(formatNumber(0.1 + 0.2)).toBe('0.3');
    expect(formatNumber(19.99 * 3)).toBe('59.97');
    expect(formatNumber(-0)).toBe('0');
    expect(formatNumber(1 / 3)).toBe('0.33333333333333');
    expect(formatNumber(2.5e-10)).toBe('2.5e-10');
  });
});
