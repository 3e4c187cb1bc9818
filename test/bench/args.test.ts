import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/node/args';

describe('bench flags', () => {
  it('--only durability or judge selects that figure alone; anything else is refused', () => {
    expect(parseBenchArgs([]).only).toBeNull();
    expect(parseBenchArgs(['--only', 'durability']).only).toBe('durability');
    expect(parseBenchArgs(['--only', 'judge']).only).toBe('judge');
    expect(() => parseBenchArgs(['--only', 'engine'])).toThrow('--only takes "durability" or "judge", got "engine"');
  });
});
