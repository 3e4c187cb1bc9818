/**
 * Hindsight relabeling, the paper's idea applied to data: sample the base model's own stories,
 * read off by rules what each one happens to do, and write that down as the instruction it
 * followed. Stories are sampled from beginnings that mention the pet's name or favourite thing,
 * so that the base model (which copies names from its context) writes stories with them; the
 * training prompt then moves those facts into the instruction and keeps the plain beginning.
 * A share of examples stays unconditioned (plain beginning, plain sample), so that without a hint
 * the model still continues a story as the base model does.
 */
import type { Policy } from '../gpu/policy';
import { mulberry32 } from '../gpu/random';
import { storyOpenings } from '../sims/problems/story-openings';
import { hasKindWords, hasUnkindWords, mentionsBedtime, mentionsName, mentionsNoun } from '../sims/rules/story-traits';
import { instructionFor, type Split, type StoryWish } from './instructions';
import { NAMES, SUBJECTS, THINGS } from './pools';

export interface DemoExample {
  /** The instruction, a blank line, then the story beginning: the channel the lab gives base models hints in. */
  prompt: string;
  completion: string;
  /** What the instruction asks for; null for an unconditioned example. */
  wish: StoryWish | null;
}

export interface RelabelOptions {
  count: number;
  seed: number;
  maxNewTokens: number;
  temperature: number;
  /** Share of examples without an instruction. */
  unconditioned: number;
  batch: number;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/** The instruction in front of the story beginning, as `Policy.promptText` places a hint for a base model. */
export function hintedPrompt(instruction: string, beginning: string): string {
  return `${instruction}\n\n${beginning}`;
}

interface Plan {
  subject: string;
  beginning: string;
  primed: string;
  name?: string;
  favourite?: string;
  bedtime: boolean;
  conditioned: boolean;
}

function pick<T>(items: readonly T[], rand: () => number): T {
  return items[Math.floor(rand() * items.length) % items.length];
}

/** "a dog" -> "a dog named Max", at the pet's first mention in the beginning. */
function withName(beginning: string, subject: string, name: string): string {
  const at = beginning.search(new RegExp(`\\b${subject}\\b`));
  if (at < 0) return beginning;
  const end = at + subject.length;
  return `${beginning.slice(0, end)} named ${name}${beginning.slice(end)}`;
}

function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}

function plan(rand: () => number, conditioned: boolean): Plan {
  const subject = pick(SUBJECTS, rand);
  const beginning = pick(storyOpenings(subject), rand).question;
  if (!conditioned) return { subject, beginning, primed: beginning, bedtime: false, conditioned };
  const name = rand() < 0.65 ? pick(NAMES.train, rand) : undefined;
  const favourite = rand() < 0.5 ? pick(THINGS.train, rand) : undefined;
  const bedtime = rand() < (name || favourite ? 0.35 : 1);
  let primed = name ? withName(beginning, subject, name) : beginning;
  // Said twice, the thing is what the base model goes on about; once, it mostly drops it.
  const who = name ?? `The ${subject}`;
  if (favourite) primed += ` ${who} had ${article(favourite)} ${favourite}. ${who} loved the ${favourite} very much.`;
  if (bedtime) primed += ` It was almost bedtime, and ${who === `The ${subject}` ? `the ${subject}` : who} was very sleepy.`;
  return { subject, beginning, primed, name, favourite, bedtime, conditioned };
}

/** What the story does that the plan asked for or that it shows by itself. */
function hindsightWish(p: Plan, story: string, rand: () => number): StoryWish {
  return {
    subject: p.subject,
    name: p.name && mentionsName(story, p.name) ? p.name : undefined,
    favourite: p.favourite && mentionsNoun(story, p.favourite) ? p.favourite : undefined,
    bedtime: mentionsBedtime(story) && (p.bedtime || rand() < 0.6),
    kind: hasKindWords(story) && rand() < 0.6,
    gentle: !hasUnkindWords(story) && rand() < 0.4,
  };
}

/**
 * `count` examples, `unconditioned` of them plain. Conditioned stories are kept only when they
 * kept a primed name or thing (rejection sampling: sampling is cheap, training is not), so every
 * conditioned example teaches the model to carry a fact from the instruction into the story.
 */
export async function relabeledStories(policy: Policy, o: RelabelOptions, split: Split = 'train'): Promise<DemoExample[]> {
  const rand = mulberry32(o.seed);
  const plain = Math.round(o.count * o.unconditioned);
  const want = { plain, conditioned: o.count - plain };
  const out: DemoExample[] = [];
  let kept = { plain: 0, conditioned: 0 };
  let batchIndex = 0;
  // A conditioned story keeps its fact about a third of the time; ten tries per example is ample.
  const maxBatches = Math.ceil((o.count * 10) / o.batch);
  while ((kept.plain < want.plain || kept.conditioned < want.conditioned) && batchIndex < maxBatches) {
    o.signal?.throwIfAborted();
    const plans = Array.from({ length: o.batch }, () => plan(rand, kept.plain >= want.plain || rand() >= o.unconditioned));
    const gens = await policy.generate(
      plans.map((p) => p.primed),
      { maxNewTokens: o.maxNewTokens, sampling: { temperature: o.temperature, topP: 1, topK: 0 }, seed: o.seed * 1_000_003 + batchIndex * o.batch, signal: o.signal },
    );
    batchIndex++;
    for (const [j, p] of plans.entries()) {
      const story = gens[j].text;
      if (!story.trim()) continue;
      if (!p.conditioned) {
        if (kept.plain >= want.plain) continue;
        kept = { ...kept, plain: kept.plain + 1 };
        out.push({ prompt: p.beginning, completion: story, wish: null });
        continue;
      }
      const wish = hindsightWish(p, story, rand);
      const keptPrimed = !!wish.name || !!wish.favourite || (p.bedtime && !!wish.bedtime);
      if (!keptPrimed || kept.conditioned >= want.conditioned) continue;
      kept = { ...kept, conditioned: kept.conditioned + 1 };
      const includeSubject = mentionsNoun(story, p.subject) && rand() < 0.5;
      // A primed fact the story kept is always in its instruction (hindsightWish): the model must
      // never learn to write a name or thing that nobody asked for.
      out.push({ prompt: hintedPrompt(instructionFor(wish, rand, split, includeSubject), p.beginning), completion: story, wish });
    }
    o.onProgress?.(kept.plain + kept.conditioned, o.count);
  }
  return out;
}
