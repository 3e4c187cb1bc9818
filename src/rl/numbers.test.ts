import { describe, expect, it } from 'vitest';
import { unsignedZero } from './numbers';

describe('unsignedZero', () => {
  it('turns -0 into 0 and leaves every other number alone', () => {
    expect(Object.is(unsignedZero(-0), 0)).toBe(true);
    expect(Object.is(unsignedZero(0 * -1), 0)).toBe(true);
    for (const x of [0, 1, -1, 0.5, -1e-300, Infinity]) expect(unsignedZero(x)).toBe(x);
  });
});
