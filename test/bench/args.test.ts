import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/node/args';

describe('bench flags', () => {
  it('--only durability selects the storage figure alone; anything else is refused', () => {
    expect(parseBenchArgs([]).only).toBeNull();
    expect(parseBenchArgs(['--only', 'durability']).only).toBe('durability');
    expect(() => parseBenchArgs(['--only', 'engine'])).toThrow('--only takes "durability", got "engine"');
  });
});
