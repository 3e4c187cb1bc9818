import { describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../bench/node/args';

describe('bench flags', () => {
  it('--only durability, judge, accuracy, paper or serve selects that part alone; anything else is refused', () => {
    expect(parseBenchArgs([]).only).toBeNull();
    for (const part of ['durability', 'judge', 'accuracy', 'paper', 'serve', 'hostile']) expect(parseBenchArgs(['--only', part]).only).toBe(part);
    expect(() => parseBenchArgs(['--only', 'engine'])).toThrow('--only takes "durability", "judge", "accuracy", "paper", "serve", "hostile", got "engine"');
  });
});
