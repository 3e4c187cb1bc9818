/**
 * The demo-model pipeline at toy size: relabeled examples keep their promises (a name or thing in
 * the story is in its instruction), and a build is deterministic for its seed on the CPU engine.
 */
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { CpuBackend } from '../gpu/cpu/backend';
import { Policy } from '../gpu/policy';
import { DirSource } from '../models/source-node';
import { mentionsName, mentionsNoun } from '../sims/rules/story-traits';
import { makeDemoModel } from './make';
import { relabeledStories } from './relabel';
import { isInventedName, SUBJECTS } from './pools';
import { storyOpenings } from '../sims/problems/story-openings';

const base = () => Policy.load(new DirSource(dataPath('models/stories260K')), new CpuBackend());

describe('the demo-model pipeline', () => {
  it('relabels only what a story does, and keeps a share unconditioned', async () => {
    const policy = await base();
    const examples = await relabeledStories(policy, { count: 20, seed: 3, maxNewTokens: 24, temperature: 1, unconditioned: 0.25, batch: 20 });
    expect(examples).toHaveLength(20);
    expect(examples.filter((x) => x.wish === null)).toHaveLength(5);
    const fineTuningOpenings = new Set(SUBJECTS.flatMap((s) => storyOpenings(s, 'fine-tuning').map((p) => p.question)));
    // No stray byte token or broken character is taught.
    for (const x of examples) expect(x.completion).toMatch(/^[\n\x20-\x7e]*$/);
    for (const x of examples) {
      if (!x.wish) {
        expect(x.prompt).not.toContain('\n\n');
        continue;
      }
      const [instruction, beginning] = x.prompt.split('\n\n');
      expect(fineTuningOpenings.has(beginning)).toBe(true);
      expect(x.wish.name || x.wish.favourite || x.wish.bedtime).toBeTruthy();
      if (x.wish.name) {
        expect(mentionsName(x.completion, x.wish.name)).toBe(true);
        expect(instruction).toContain(x.wish.name);
      }
      if (x.wish.favourite) {
        expect(mentionsNoun(x.completion, x.wish.favourite)).toBe(true);
        expect(instruction).toContain(x.wish.favourite);
      }
    }
  }, 60_000);

  it('with the copy task, most named examples carry a made-up name', async () => {
    const policy = await base();
    const o = { count: 24, seed: 3, maxNewTokens: 24, temperature: 1, unconditioned: 0, batch: 24 };
    const named = (xs: Awaited<ReturnType<typeof relabeledStories>>) => xs.flatMap((x) => (x.wish?.name ? [x.wish.name] : []));
    const copy = named(await relabeledStories(policy, { ...o, copyTask: true }));
    expect(copy.length).toBeGreaterThan(4);
    expect(copy.filter(isInventedName).length / copy.length).toBeGreaterThan(0.6);
  }, 120_000);

  it('builds the same weights twice from one seed', async () => {
    // Long enough for a story to reach a full sentence of MIN_STORY_WORDS words, which relabeling keeps.
    const tiny = { seed: 4, examples: 16, epochs: 1, batch: 8, rank: 2, maxNewTokens: 40, checkCases: 4, heldOutExamples: 4 };
    const a = await makeDemoModel(await base(), tiny);
    const b = await makeDemoModel(await base(), tiny);
    expect(a.report.steps).toBe(2);
    expect(Buffer.from(a.safetensors).equals(Buffer.from(b.safetensors))).toBe(true);
    expect(a.report.heldOutLogp.after).toBeGreaterThan(a.report.heldOutLogp.before);
  }, 240_000);
});
