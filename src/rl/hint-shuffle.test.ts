import { describe, expect, it } from 'vitest';
import { HintShuffler } from './hint-shuffle';
import { makePreset } from './presets';
import { PresetError } from './errors';

describe('the shuffled-hint control', () => {
  it("gives a turn another session's hint, from the same version where there is one, else the newest earlier", () => {
    const s = new HintShuffler();
    // Nobody else has given a hint yet: no OPD sample for the first turn.
    expect(s.swap(0, 'a', 'hint a0', 7)).toBeNull();
    // Never the session's own hint.
    expect(s.swap(0, 'a', 'hint a0 again', 7)).toBeNull();
    expect(s.swap(0, 'b', 'hint b0', 7)).toMatch(/^hint a0/);
    expect(s.swap(1, 'c', 'hint c1', 0)).toMatch(/^hint (a0|b0)/);
    // Same version first: c1 is the only other version-1 hint for d.
    expect(s.swap(1, 'd', 'hint d1', 3)).toBe('hint c1');
    // A turn served by an older version never gets a newer version's hint.
    expect(s.swap(0, 'c', 'hint c0', 1)).toMatch(/^hint (a0|b0)/);
  });

  it('picks among the candidates by the draw, so a run is reproducible', () => {
    const picks = [0, 1, 2, 3].map((draw) => {
      const s = new HintShuffler();
      for (const x of ['a', 'b', 'c']) s.swap(0, x, `hint ${x}`, 0);
      return s.swap(0, 'd', 'hint d', draw);
    });
    expect(picks).toEqual(['hint a', 'hint b', 'hint c', 'hint a']);
  });

  it('is a preset setting of the hint methods, with the longest-hint rule', () => {
    expect(makePreset('combined', { advantage: { hintSource: 'shuffled' } }).advantage.hintSource).toBe('shuffled');
    // Absent is the judge's own hint, and the preset's JSON stays as it was.
    expect('hintSource' in makePreset('combined').advantage).toBe(false);
    expect(() => makePreset('binary', { advantage: { hintSource: 'shuffled' } })).toThrow(PresetError);
    expect(() => makePreset('opd', { advantage: { hintSource: 'shuffled', hintSelection: { rule: 'topk-sequence' } } })).toThrow(/longest/);
    expect(() => makePreset('opd', { advantage: { hintSource: 'mixed' as never } })).toThrow(PresetError);
  });
});
