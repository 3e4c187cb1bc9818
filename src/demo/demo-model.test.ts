/**
 * The bundled demo model takes a hint: in the instruction wordings the rules judge uses (held out
 * of its fine-tuning), on story openings it never saw, the asked-for name and thing appear far
 * more often with the instruction in front of the story beginning than without, and the OPD
 * advantage (teacher with the hint minus student without it) is positive on exactly the tokens
 * that carry them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORY_MODEL } from '../models/bundled';
import { CpuBackend } from '../gpu/cpu/backend';
import { Policy } from '../gpu/policy';
import { modelSource } from '../models/source-node';
import { dataPath } from '../../test/data-dir';
import { DirSource } from '../models/source-node';
import { storyOpenings } from '../sims/problems/story-openings';
import { storytellerRules } from '../sims/rules/storyteller';
import { normaliseChild } from '../sims/scenarios/storyteller';
import { hintCases, hintEffect, type HintCase } from './hint-check';
import { hintInFront } from '../rl/hints';

let demo: Policy;
let base: Policy;

beforeAll(async () => {
  demo = await Policy.load(modelSource(DEMO_STORY_MODEL), new CpuBackend());
  base = await Policy.load(new DirSource(dataPath('models/stories260K')), new CpuBackend());
});

// Margins below what this build measures (seeded, so the same on every machine). The rules
// judge's own hint, in its held-out wordings, for the pet's name, a kite and bedtime: name 0.56
// vs 0, kite 0.06 vs 0, bedtime 0.17 vs 0. For the default child (a ball, which the base model
// writes now and then by itself): name 0.65 vs 0, ball 0.27 vs 0.10. Held-out wordings over the
// pools: name 0.47 vs 0, thing 0.16 vs 0, bedtime 0.16 vs 0.06. Only the name and the thing are
// asserted: words the story can only have from the hint; it ends in sleep unasked too.
const LAB_NAME = 0.5;
const DEFAULT_FAVOURITE_GAIN = 0.15;
const HELD_OUT_GAIN = { name: 0.25, favourite: 0.06 } as const;
const CHECK = { maxNewTokens: 48, temperature: 1, seed: 11 };

/**
 * A child (the default: dog Max, a ball) on each evaluation opening, with the rules judge's hint
 * for the name, the thing and bedtime, in the wording set the child's judge uses ('held-out' by
 * default: wordings the demo model was never fine-tuned on).
 */
function labCases(count: number, wishes: { favourite?: string; hintWording?: 'held-out' | 'fine-tuning' } = {}): HintCase[] {
  const child = normaliseChild(wishes);
  const rules = storytellerRules(child);
  const asked = rules.issues.filter((i) => ['no-name', 'no-favourite', 'no-bedtime'].includes(i.id));
  const openings = storyOpenings(child.subject, 'evaluation');
  return Array.from({ length: count }, (_, i) => ({ ...child, beginning: openings[i % openings.length].question, instruction: rules.hint(asked, 1000 + i) }));
}

describe('the storyteller demo model', () => {
  it('is stories260K in shape, with weights of its own', () => {
    expect(demo.config).toEqual(base.config);
    expect(demo.tokenizer.encode('Once upon a time')).toEqual(base.tokenizer.encode('Once upon a time'));
  });

  it("writes the name the judge's hint asks for, and the default ball, far more often than without it; stories260K does not read a hint", async () => {
    const lab = await hintEffect(demo, labCases(48, { favourite: 'kite' }), CHECK);
    const labDefault = await hintEffect(demo, labCases(48), CHECK);
    const heldOut = await hintEffect(demo, hintCases(64, 2024), CHECK);
    const baseHeldOut = await hintEffect(base, hintCases(64, 2024), CHECK);
    console.log(`demo model, the judge's hint: ${JSON.stringify(lab)}; for the default child: ${JSON.stringify(labDefault)}`);
    console.log(`demo model, held-out wordings: ${JSON.stringify(heldOut)}; stories260K: ${JSON.stringify(baseHeldOut)}`);
    for (const e of [lab, labDefault]) {
      expect(e.withHint.name).toBeGreaterThanOrEqual(LAB_NAME);
      expect(e.withoutHint.name).toBeLessThanOrEqual(0.05);
    }
    expect(labDefault.withoutHint.favourite).toBeLessThanOrEqual(0.2);
    expect(labDefault.withHint.favourite).toBeGreaterThanOrEqual(labDefault.withoutHint.favourite + DEFAULT_FAVOURITE_GAIN);
    for (const trait of ['name', 'favourite'] as const)
      expect(heldOut.withHint[trait]).toBeGreaterThanOrEqual(heldOut.withoutHint[trait] + HELD_OUT_GAIN[trait]);
    // The base model does not read the instruction: the same hints barely move it.
    for (const trait of ['name', 'favourite', 'bedtime'] as const)
      expect(baseHeldOut.withHint[trait]).toBeLessThanOrEqual(baseHeldOut.withoutHint[trait] + 0.1);
  }, 300_000);

  it('gives a positive OPD advantage on the tokens that satisfy the hint', async () => {
    const cases = hintCases(32, 77);
    const stories = await demo.generate(
      cases.map((c) => hintInFront(c.instruction, c.beginning)),
      { maxNewTokens: 48, sampling: { temperature: 1, topP: 1, topK: 0 }, seed: 5 },
    );
    const onName: number[] = [];
    const elsewhere: number[] = [];
    for (const [i, c] of cases.entries()) {
      const story = stories[i].text;
      if (!story.includes(c.name)) continue;
      const [teacher, student] = await demo.scoreText([
        { prompt: hintInFront(c.instruction, c.beginning), completion: story },
        { prompt: c.beginning, completion: story },
      ]);
      expect(teacher.tokens).toEqual(student.tokens);
      // Which tokens spell the name: the characters each token adds to the decoded text.
      const ends = teacher.tokens.map((_, t) => demo.tokenizer.decode(teacher.tokens.slice(0, t + 1)).length);
      const spans = [...story.matchAll(new RegExp(`\\b${c.name}\\b`, 'g'))].map((m) => [m.index!, m.index! + c.name.length]);
      teacher.tokens.forEach((_, t) => {
        const start = t ? ends[t - 1] : 0;
        const a = teacher.logprobs[t] - student.logprobs[t];
        (spans.some(([s, e]) => start < e && ends[t] > s) ? onName : elsewhere).push(a);
      });
    }
    const mean = (xs: number[]) => xs.reduce((p, q) => p + q, 0) / xs.length;
    console.log(`A_OPD on name tokens ${mean(onName).toFixed(3)} (${onName.length}), elsewhere ${mean(elsewhere).toFixed(3)} (${elsewhere.length})`);
    expect(onName.length).toBeGreaterThan(20);
    expect(mean(onName)).toBeGreaterThan(1);
    expect(mean(onName)).toBeGreaterThan(mean(elsewhere) + 1);
  }, 120_000);
});
