import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../gpu/random';
import { createRules } from './index';
import { createScenario } from '../scenarios/index';
import { clauseWordings, instructionFor, TRAITS, WORDING_SETS, type StoryWish, type WordingSet } from './story-instructions';

const WISH: StoryWish = { subject: 'dog', name: 'Max', favourite: 'kite', bedtime: true, kind: true, gentle: true, short: true };

function wordings(set: WordingSet, wish: StoryWish = WISH, n = 6000, includeSubject?: boolean): Set<string> {
  const rand = mulberry32(5);
  return new Set(Array.from({ length: n }, () => instructionFor(wish, rand, set, includeSubject)));
}

async function judgeHint(config: { favourite?: string; hintWording?: WordingSet }, seed: number, reply: string): Promise<string> {
  const rules = createRules(createScenario({ id: 'storyteller', ...config }));
  const out = await rules.hintJudge.generate([{ role: 'user', content: `Answer:\nOnce upon a time, there was a dog.\n\nNext state:\n${reply}` }], { seed });
  return /\[HINT_START\]([\s\S]*)\[HINT_END\]/.exec(out)![1];
}

const COMPLAINT = 'Hmm, my dog is called Max and where is the kite? I love kites. Tell me a new one!';

describe('story instructions', () => {
  it('no clause wording is in both sets, for any trait', () => {
    const fill = { subject: 'dog', name: 'Max', favourite: 'kite' };
    for (const trait of TRAITS) {
      const [held, tuned] = WORDING_SETS.map((set) => clauseWordings(trait, set, fill));
      expect(held.length, trait).toBeGreaterThanOrEqual(3);
      expect(tuned.length, trait).toBeGreaterThanOrEqual(4);
      for (const h of held) {
        expect(tuned, `${trait}: "${h}"`).not.toContain(h);
        // Nor inside any fine-tuning instruction: a held-out clause is never taught, whole or joined.
        for (const t of wordings('fine-tuning', WISH, 2000)) expect(t).not.toContain(h);
      }
    }
  });

  it('each set has many wordings of one wish, and they never coincide', () => {
    const held = wordings('held-out');
    const tuned = wordings('fine-tuning');
    expect(tuned.size).toBeGreaterThan(1000);
    expect(held.size).toBeGreaterThan(500);
    for (const h of held) expect(tuned.has(h)).toBe(false);
  });

  it('every asked-for fact is in the instruction', () => {
    const rand = mulberry32(9);
    for (let i = 0; i < 300; i++) {
      const text = instructionFor({ subject: 'cat', name: 'Pip', favourite: 'red ball' }, rand, WORDING_SETS[i % 2]);
      expect(text).toContain('Pip');
      expect(text).toContain('red ball');
    }
  });

  it('the rules judge writes its storyteller hint in held-out wordings by default, varied by seed', async () => {
    const asked: StoryWish = { subject: 'dog', name: 'Max', favourite: 'kite' };
    const tuned = wordings('fine-tuning', asked, 40000, false);
    const held = wordings('held-out', asked, 40000, false);
    const hints = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const hint = await judgeHint({ favourite: 'kite' }, seed, COMPLAINT);
      expect(hint).toContain('Max');
      expect(hint).toContain('kite');
      expect(tuned.has(hint), hint).toBe(false);
      expect(held.has(hint), hint).toBe(true);
      hints.add(hint);
    }
    expect(hints.size).toBeGreaterThan(20);
    // The same turn and seed give the same hint: a run repeats.
    expect(await judgeHint({ favourite: 'kite' }, 3, COMPLAINT)).toBe(await judgeHint({ favourite: 'kite' }, 3, COMPLAINT));
  });

  it("hintWording 'fine-tuning' gives the demo model's own wordings", async () => {
    const tuned = wordings('fine-tuning', { subject: 'dog', name: 'Max', favourite: 'kite' }, 40000, false);
    for (let seed = 0; seed < 10; seed++) expect(tuned.has(await judgeHint({ favourite: 'kite', hintWording: 'fine-tuning' }, seed, COMPLAINT))).toBe(true);
  });
});
