/**
 * The bundled demo model takes a hint: on names, favourite things and instruction wordings held
 * out of its training, the asked-for facts appear far more often with the instruction in front
 * of the story beginning than without, and the OPD advantage (teacher with the hint minus student
 * without it) is positive on exactly the tokens that carry them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORY_MODEL } from '../gpu/bundled';
import { CpuBackend } from '../gpu/cpu/backend';
import { Policy } from '../gpu/policy';
import { modelSource } from '../gpu/source-node';
import { dataPath } from '../../test/data-dir';
import { DirSource } from '../gpu/source-node';
import { hintCases, hintEffect } from './hint-check';
import { hintedPrompt } from './relabel';

let demo: Policy;
let base: Policy;

beforeAll(async () => {
  demo = await Policy.load(modelSource(DEMO_STORY_MODEL), new CpuBackend());
  base = await Policy.load(new DirSource(dataPath('models/stories260K')), new CpuBackend());
});

const CHECK = { maxNewTokens: 48, temperature: 1, seed: 11 };

describe('the storyteller demo model', () => {
  it('is stories260K in shape, with weights of its own', () => {
    expect(demo.config).toEqual(base.config);
    expect(demo.tokenizer.encode('Once upon a time')).toEqual(base.tokenizer.encode('Once upon a time'));
  });

  it('writes the asked-for name and favourite thing with a held-out hint, and rarely without', async () => {
    const cases = hintCases(64, 2024);
    const effect = await hintEffect(demo, cases, CHECK);
    console.log(`demo model, held-out hints: ${JSON.stringify(effect)}`);
    expect(effect.withHint.name).toBeGreaterThanOrEqual(0.8);
    expect(effect.withoutHint.name).toBeLessThanOrEqual(0.05);
    expect(effect.withHint.favourite).toBeGreaterThanOrEqual(0.5);
    expect(effect.withoutHint.favourite).toBeLessThanOrEqual(0.1);
    // The base model does not read the instruction: the same hints barely move it.
    const baseEffect = await hintEffect(base, cases, CHECK);
    expect(baseEffect.withHint.name).toBeLessThanOrEqual(0.1);
  }, 120_000);

  it('gives a positive OPD advantage on the tokens that satisfy the hint', async () => {
    const cases = hintCases(32, 77);
    const stories = await demo.generate(
      cases.map((c) => hintedPrompt(c.instruction, c.beginning)),
      { maxNewTokens: 48, sampling: { temperature: 1, topP: 1, topK: 0 }, seed: 5 },
    );
    const onName: number[] = [];
    const elsewhere: number[] = [];
    for (const [i, c] of cases.entries()) {
      const story = stories[i].text;
      if (!story.includes(c.name)) continue;
      const [teacher, student] = await demo.scoreText([
        { prompt: hintedPrompt(c.instruction, c.beginning), completion: story },
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
