import { describe, expect, it } from 'vitest';
import { PET_NAME, THING } from '../sims/rules/story-traits';
import { mulberry32 } from '../gpu/random';
import { inventedName, NAMES, THINGS } from './pools';

describe('demo pools', () => {
  it('have no repeats, and every name and thing is one the storyteller rules accept', () => {
    for (const pool of [NAMES.train, NAMES.heldOut, THINGS.train, THINGS.heldOut]) expect(new Set(pool).size).toBe(pool.length);
    for (const n of [...NAMES.train, ...NAMES.heldOut]) expect(n).toMatch(PET_NAME);
    for (const t of [...THINGS.train, ...THINGS.heldOut]) expect(t).toMatch(THING);
  });

  it('held-out names and things are not in the training pools, whole or as a word', () => {
    for (const n of NAMES.heldOut) expect(NAMES.train).not.toContain(n);
    for (const t of THINGS.heldOut) for (const w of t.split(' ')) expect(THINGS.train.flatMap((x) => x.split(' '))).not.toContain(w);
  });

  it("made-up names are names the rules accept, never a held-out one; the copy task's begin with more letters", () => {
    const initials = { syllables: 'BDFGKLMNPRSTWZ', alphabet: 'BCDFGHJKLMNPRSTVWYZ' };
    for (const spelling of ['syllables', 'alphabet'] as const) {
      const rand = mulberry32(5);
      const names = Array.from({ length: 2000 }, () => inventedName(rand, spelling));
      for (const n of names) expect(n).toMatch(PET_NAME);
      for (const n of names) expect(NAMES.heldOut).not.toContain(n);
      expect([...new Set(names.map((n) => n[0]))].sort().join('')).toBe(initials[spelling]);
    }
  });
});
