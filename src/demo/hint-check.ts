/**
 * Does a hint change what the model writes? For pets, names and favourite things the model never
 * saw in training, and in wordings it was never trained on, sample stories with the instruction
 * in front of the beginning and without it, and count how often each asked-for fact appears.
 */
import type { LoraAdapter } from '../gpu/lora';
import type { Policy } from '../gpu/policy';
import { mulberry32, pickFrom } from '../gpu/random';
import { storyOpenings } from '../sims/problems/story-openings';
import { instructionFor, type WordingSet } from '../sims/rules/story-instructions';
import { mentionsBedtime, mentionsName, mentionsNoun } from '../sims/rules/story-traits';
import { NAMES, SUBJECTS, THINGS, type Split } from './pools';
import { hintInFront } from '../rl/hints';

export interface HintCase {
  subject: string;
  name: string;
  favourite: string;
  beginning: string;
  instruction: string;
}

export interface TraitRates {
  /** Share of stories that call the pet by the asked-for name. */
  name: number;
  /** Share of stories that contain the asked-for favourite thing. */
  favourite: number;
  /** Share of stories in which someone goes to sleep (every case asks for it). */
  bedtime: number;
}

export interface HintEffect {
  cases: number;
  withHint: TraitRates;
  withoutHint: TraitRates;
}

/**
 * Cases in the instruction wordings of `words` (held out of fine-tuning by default: the wordings
 * the rules judge writes its hints in), on the evaluation openings (never fine-tuned on), naming
 * pets and things from `names` (the training pools by default: the child's own pet name is one the
 * model met; 'heldOut' asks for names it never saw, a harder test of copying).
 */
export function hintCases(count: number, seed: number, split: { words?: WordingSet; names?: Split } = {}): HintCase[] {
  const words = split.words ?? 'held-out';
  const names = split.names ?? 'train';
  const rand = mulberry32(seed);
  const pool = <T>(items: readonly T[]) => pickFrom(items, rand);
  return Array.from({ length: count }, () => {
    const subject = pool(SUBJECTS);
    const name = pool(NAMES[names]);
    const favourite = pool(THINGS[names]);
    return {
      subject,
      name,
      favourite,
      beginning: pool(storyOpenings(subject, 'evaluation')).question,
      instruction: instructionFor({ subject, name, favourite, bedtime: true }, rand, words, false),
    };
  });
}

export async function hintEffect(
  policy: Policy,
  cases: readonly HintCase[],
  o: { maxNewTokens: number; temperature: number; seed: number; lora?: LoraAdapter; batch?: number },
): Promise<HintEffect> {
  const run = async (hinted: boolean): Promise<TraitRates> => {
    let name = 0;
    let favourite = 0;
    let bedtime = 0;
    const batch = o.batch ?? 32;
    for (let i = 0; i < cases.length; i += batch) {
      const part = cases.slice(i, i + batch);
      const gens = await policy.generate(
        part.map((c) => (hinted ? hintInFront(c.instruction, c.beginning) : c.beginning)),
        { maxNewTokens: o.maxNewTokens, sampling: { temperature: o.temperature, topP: 1, topK: 0 }, seed: o.seed + i, lora: o.lora },
      );
      part.forEach((c, j) => {
        if (mentionsName(gens[j].text, c.name)) name++;
        if (mentionsNoun(gens[j].text, c.favourite)) favourite++;
        if (mentionsBedtime(gens[j].text)) bedtime++;
      });
    }
    return { name: name / cases.length, favourite: favourite / cases.length, bedtime: bedtime / cases.length };
  };
  return { cases: cases.length, withHint: await run(true), withoutHint: await run(false) };
}
