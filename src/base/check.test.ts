import { describe, expect, it } from 'vitest';
import { validate } from '../../test/docs/json-schema-validator';
import { above, arrayOf, bool, discriminated, FieldError, int, mapOf, nullable, num, object, oneOf, pair, str, timestamp, type Checker } from './check';

function accepts(check: Checker<unknown>, value: unknown): boolean {
  try {
    check(value, 'x');
    return true;
  } catch (e) {
    if (e instanceof FieldError) return false;
    throw e;
  }
}

// Each checker's schema must accept exactly what the checker accepts, at its edges, so that the
// published schema (docs/schema/) says no more and no less than the lab's reader.
const CASES: [string, Checker<unknown>, unknown[]][] = [
  ['str(3, 1)', str(3, 1), ['', 'a', 'abc', 'abcd', 5, null]],
  ['num(0, 1)', num(0, 1), [-0.1, 0, 0.5, 1, 1.1, '1']],
  ['num()', num(), [-1e300, 0, 1e300, true]],
  ['timestamp', timestamp, [-1, 0, 8.64e15, 8.64e15 + 1]],
  ['above(0)', above(0), [0, 1e-9, -1, 'a']],
  ['int(1, 3)', int(1, 3), [0, 1, 3, 4, 1.5, '2']],
  ['bool', bool, [true, false, 'true', 0]],
  ['oneOf("a", "b")', oneOf('a', 'b'), ['a', 'b', 'c', null]],
  ['oneOf(1, -1)', oneOf(1, -1), [1, -1, 0, '1']],
  ['oneOf("x")', oneOf('x'), ['x', 'y']],
  ['nullable(int())', nullable(int()), [null, 1, -1, 'a']],
  ['arrayOf(int(), 2)', arrayOf(int(), 2), [[], [1, 2], [1, 2, 3], ['a'], {}]],
  ['pair(num())', pair(num()), [[1, 2], [1], [1, 2, 3], [1, 'a'], 'ab']],
  ['mapOf(str(2, 1), int(), 2)', mapOf(str(2, 1), int(), 2), [{}, { a: 1 }, { abc: 1 }, { a: 1, b: 2, c: 3 }, { a: 'x' }, [], null]],
  ['object({ a }, { b })', object({ a: int() }, { b: bool }), [{ a: 1 }, { a: 1, b: true }, {}, { a: 1, c: 1 }, { a: 1, b: 1 }, [], null]],
  [
    'discriminated("k", ...)',
    discriminated('k', { x: object({ k: oneOf('x') }), y: object({ k: oneOf('y'), n: int() }) }),
    [{ k: 'x' }, { k: 'y', n: 1 }, { k: 'y' }, { k: 'z' }, { k: 'x', n: 1 }, 'x', null],
  ],
];

describe('checker schemas', () => {
  it.each(CASES)('%s: the schema accepts what the checker accepts', (_name, check, values) => {
    for (const value of values) expect(validate(check.schema, value).length === 0, JSON.stringify(value)).toBe(accepts(check, value));
  });

  it('discriminated names the key and the kinds when the key names no shape', () => {
    const check = discriminated('kind', { rules: object({ kind: oneOf('rules') }), policy: object({ kind: oneOf('policy') }) });
    expect(() => check({ kind: 'oracle' }, 'models.judge')).toThrow('field "models.judge.kind" must be one of rules, policy');
    expect(() => check(null, 'models.judge')).toThrow('field "models.judge.kind" must be one of rules, policy');
  });
});
