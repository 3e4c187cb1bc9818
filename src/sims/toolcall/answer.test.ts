import { describe, expect, it } from 'vitest';
import { numbersIn, readFinalAnswer, sameAnswer } from './answer';

describe('numbersIn', () => {
  it('reads thousands separators, signs and decimals', () => {
    expect(numbersIn('She has 1,250 books, then -3 and 4.5; 10-3 is 7, at (3,4).')).toEqual([1250, -3, 4.5, 10, 3, 7, 3, 4]);
    expect(numbersIn('$1,065.50 and 12,34')).toEqual([1065.5, 12, 34]);
    expect(numbersIn('no digits here')).toEqual([]);
  });
});

describe('readFinalAnswer', () => {
  it.each([
    ['So she fills 48 / 6 = 8 bags.\n\\boxed{8}', 8, 'boxed'],
    ['The answer is \\boxed{1,065} books, not 1000.', 1065, 'boxed'],
    ['\\boxed{\\text{eighteen}} The answer is 18.', 18, 'answer-phrase'],
    ['The answer is: 17 passengers. (I checked 34 / 2.)', 17, 'answer-phrase'],
    ['Final answer = -4', -4, 'answer-phrase'],
    ['The answer is below.\n48 / 6 = 8', 8, 'last-number'],
    ['After 3 stops, 17 are left.', 17, 'last-number'],
  ])('reads %j', (text, value, source) => {
    expect(readFinalAnswer(text)).toEqual({ value, source });
  });

  it('is null without any number', () => {
    expect(readFinalAnswer('I cannot solve this.')).toBeNull();
    expect(readFinalAnswer('')).toBeNull();
  });
});

describe('sameAnswer', () => {
  it('compares with a 1e-6 tolerance', () => {
    expect(sameAnswer(18, 18.0000005)).toBe(true);
    expect(sameAnswer(18, 18.00001)).toBe(false);
  });
});
