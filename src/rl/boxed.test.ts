import { describe, it, expect } from 'vitest';
import { boxContent, parseBoxedScore } from './boxed';

describe('parseBoxedScore', () => {
  const cases: [string, string, 1 | 0 | -1 | null][] = [
    ['progress', 'The user thanks the assistant. \\boxed{1}', 1],
    ['correction', '\\boxed{-1}', -1],
    ['ambiguous', '\\boxed{0}', 0],
    ['no box', 'I cannot decide.', null],
    ['empty text', '', null],
    ['several boxes: the last counts', 'Options: \\boxed{1}, \\boxed{-1}. Final: \\boxed{-1}', -1],
    ['several boxes: last is positive', '\\boxed{-1} ... on reflection \\boxed{1}', 1],
    ['nested \\text', '\\boxed{\\text{1}}', 1],
    ['nested \\textbf with minus', '\\boxed{\\textbf{-1}}', -1],
    ['double braces', '\\boxed{{1}}', 1],
    ['double braces negative', '\\boxed{{-1}}', -1],
    ['box inside box', '\\boxed{\\boxed{0}}', 0],
    ['explicit plus', '\\boxed{+1}', 1],
    ['spaces around', '\\boxed{ -1 }', -1],
    ['space after sign', '\\boxed{- 1}', -1],
    ['empty box', '\\boxed{}', null],
    ['blank box', '\\boxed{   }', null],
    ['unicode minus U+2212', '\\boxed{\u22121}', -1],
    ['en dash as minus', '\\boxed{\u20131}', -1],
    ['unclosed last box is ignored', 'so \\boxed{1} and then \\boxed{', 1],
    ['unreadable last box wins over an earlier valid one', '\\boxed{1} then \\boxed{}', null],
    ['out of range', '\\boxed{2}', null],
    ['two digits', '\\boxed{10}', null],
    ['decimal', '\\boxed{1.0}', null],
    ['word', '\\boxed{yes}', null],
    ['space before brace is not a box', '\\boxed {1}', null],
    ['escaped braces are literal', '\\boxed{\\{1\\}}', null],
    ['stray open brace before the box', 'let S = {a, b and \\boxed{1}', 1],
    ['stray close brace after the box', '\\boxed{-1}}}', -1],
    ['box never closed because of an inner brace', '\\boxed{1{}', null],
    ['inside math mode', 'Score: $\\boxed{-1}$.', -1],
    ['minus zero', '\\boxed{-0}', 0],
  ];
  it.each(cases)('%s', (_name, text, expected) => {
    expect(parseBoxedScore(text)).toBe(expected);
  });

  // A megabyte each: a scan that goes back over the text (n^2 = 1e12 steps) would run for hours,
  // far past the test's timeout, where a linear one takes milliseconds.
  const big: [string, () => string, 1 | 0 | -1 | null][] = [
    ['1 MB of prose then a box', () => 'x'.repeat(1_000_000) + '\\boxed{1}', 1],
    ['1 MB inside one box', () => '\\boxed{' + '1'.repeat(1_000_000) + '}', null],
    ['1 MB of open braces', () => '{'.repeat(1_000_000) + '\\boxed{-1}', -1],
    ['140k unclosed boxes', () => '\\boxed{'.repeat(140_000), null],
    ['deep nesting in a box', () => '\\boxed{' + '{'.repeat(500_000) + '1' + '}'.repeat(500_000) + '}', null],
    ['many boxes', () => '\\boxed{0} '.repeat(100_000) + '\\boxed{1}', 1],
  ];
  it.each(big)('%s: linear and defined', (_name, make, expected) => {
    expect(parseBoxedScore(make())).toBe(expected);
  });
});

describe('boxContent', () => {
  const cases: [string, string | null, string | null][] = [
    ['\\boxed{a} \\boxed{b}', 'b', 'a'],
    ['\\boxed{\\frac{1}{2}}', '\\frac{1}{2}', '\\frac{1}{2}'],
    ['\\boxed{x', null, null],
    ['\\boxed{x \\boxed{a} \\boxed{b}', 'b', 'a'],
    ['\\boxed{}', '', ''],
    ['no box', null, null],
  ];
  it.each(cases)('%j -> last %j, first %j', (text, last, first) => {
    expect(boxContent(text, 'last')).toBe(last);
    expect(boxContent(text, 'first')).toBe(first);
  });

  it("reads the first box's score where asked (the reference's tool-call PRM), the last by default", () => {
    const text = 'At first \\boxed{1}, but on reflection \\boxed{-1}';
    expect(parseBoxedScore(text)).toBe(-1);
    expect(parseBoxedScore(text, 'first')).toBe(1);
  });
});
