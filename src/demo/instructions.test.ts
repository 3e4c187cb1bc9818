import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../gpu/random';
import { createRules } from '../sims/rules/index';
import { createScenario } from '../sims/scenarios/index';
import { instructionFor, type StoryWish } from './instructions';
import { NAMES, THINGS } from './pools';

const WISH: StoryWish = { subject: 'dog', name: 'Max', favourite: 'kite', kind: true, gentle: true };

function wordings(split: 'train' | 'heldOut', n = 4000): Set<string> {
  const rand = mulberry32(5);
  return new Set(Array.from({ length: n }, () => instructionFor(WISH, rand, split)));
}

describe('demo instructions', () => {
  it('held-out wordings never occur in training, and vice versa', () => {
    const train = wordings('train');
    const held = wordings('heldOut');
    expect(train.size).toBeGreaterThan(200);
    expect(held.size).toBeGreaterThan(50);
    for (const h of held) expect(train.has(h)).toBe(false);
    // No held-out clause appears inside any training instruction either.
    const heldClauses = ['is the name of the', 'please call my', 'make sure there is', 'favourite thing is', 'be nice and happy', 'nothing scary or mean'];
    for (const t of train) for (const c of heldClauses) expect(t).not.toContain(c);
  });

  it('every asked-for fact is in the instruction', () => {
    const rand = mulberry32(9);
    for (let i = 0; i < 200; i++) {
      const text = instructionFor({ subject: 'cat', name: 'Pip', favourite: 'red ball' }, rand, i % 2 ? 'train' : 'heldOut');
      expect(text).toContain('Pip');
      expect(text).toContain('red ball');
    }
  });

  it('the rules judge’s own storyteller hint is one of the training wordings', async () => {
    const scenario = createScenario({ id: 'storyteller', favourite: 'kite' });
    const rules = createRules(scenario);
    const reply = 'Hmm, my dog is called Max and where is the kite? I love kites. Tell me a new one! Once upon a time, there was a dog';
    const out = await rules.hintJudge.generate([{ role: 'user', content: `Next state:\n${reply}` }]);
    const hint = /\[HINT_START\]([\s\S]*)\[HINT_END\]/.exec(out)![1];
    const rand = mulberry32(3);
    const seen = new Set(Array.from({ length: 20000 }, () => instructionFor({ subject: 'dog', name: 'Max', favourite: 'kite' }, rand, 'train', false)));
    expect(seen.has(hint)).toBe(true);
  });

  it('held-out names and things are not in the training pools', () => {
    for (const n of NAMES.heldOut) expect(NAMES.train).not.toContain(n);
    for (const t of THINGS.heldOut) expect(THINGS.train).not.toContain(t);
  });
});

describe('demo pools', () => {
  it('have no repeats, and every name and thing is one the storyteller rules accept', async () => {
    const { PET_NAME, THING } = await import('../sims/rules/story-traits');
    for (const pool of [NAMES.train, NAMES.heldOut, THINGS.train, THINGS.heldOut]) expect(new Set(pool).size).toBe(pool.length);
    for (const n of [...NAMES.train, ...NAMES.heldOut]) expect(n).toMatch(PET_NAME);
    for (const t of [...THINGS.train, ...THINGS.heldOut]) expect(t).toMatch(THING);
  });
});
