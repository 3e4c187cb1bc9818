/**
 * Hindsight relabeling, the paper's idea applied to data: sample the base model's own stories,
 * read off by rules what each one happens to do, and write that down as the instruction it
 * followed. Stories are sampled from beginnings that name the pet, some opening with a templated
 * sentence about a favourite thing or bedtime, so that the base model writes stories that have
 * them; the training prompt then moves those facts into the instruction and keeps the plain
 * beginning.
 * A share of examples stays unconditioned (plain beginning, plain sample), so that without a hint
 * the model still continues a story as the base model does.
 *
 * Every story ends: the sample is cut after its last full sentence and followed by the end of
 * text, so the model learns to finish a short story (stories260K alone runs on for hundreds of
 * tokens, and a child's "goes to sleep at the end" could never be met). Beginnings come from the
 * `fine-tuning` openings and instructions from the `fine-tuning` wordings only: the lab's sessions,
 * its evaluation and its judge's hints use other openings and wordings.
 */
import type { Policy } from '../gpu/policy';
import { mulberry32, pickFrom as pick } from '../gpu/random';
import { hintInFront } from '../rl/hints';
import { storyOpenings } from '../sims/problems/story-openings';
import { instructionFor, type StoryWish } from '../sims/rules/story-instructions';
import { hasKindWords, hasUnkindWords, mentionsBedtime, mentionsName, mentionsNoun } from '../sims/rules/story-traits';
import { NAMES, SUBJECTS, THINGS, inventedName, type NameSpelling, type Split } from './pools';

export interface DemoExample {
  /** The instruction, a blank line, then the story beginning: the channel the lab gives base models hints in. */
  prompt: string;
  completion: string;
  /** What the instruction asks for; null for an unconditioned example. */
  wish: StoryWish | null;
}

/** A story shorter than this many words after the cut is not worth teaching. */
const MIN_STORY_WORDS = 8;

export interface RelabelOptions {
  count: number;
  seed: number;
  maxNewTokens: number;
  temperature: number;
  /** Share of examples without an instruction. */
  unconditioned: number;
  batch: number;
  /**
   * The copy task: made-up names spelled from the whole alphabet for most named examples, so
   * that copying a name it never met from the hint becomes the model's habit. Off by default.
   */
  copyTask?: boolean;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

interface Plan {
  subject: string;
  beginning: string;
  /** What the base model continues: the beginning naming the pet, then `lead`. */
  primed: string;
  /** Sentences written from templates that open the story; the rest is the model's own. */
  lead: string;
  /** A templated sentence that closes the story (going to sleep), after the model's own. */
  closing: string;
  name?: string;
  favourite?: string;
  bedtime: boolean;
  conditioned: boolean;
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

const FAVOURITE_LEADS: ((who: string, thing: string) => string)[] = [
  (who, thing) => `${who} had ${article(thing)} ${thing}. ${who} loved the ${thing} very much.`,
  (who, thing) => `${who} loved to play with ${article(thing)} ${thing}.`,
  (who, thing) => `${who} had a favourite ${thing}.`,
  (who, thing) => `One day, ${who.replace(/^The /, 'the ')} found ${article(thing)} ${thing}.`,
];
const BEDTIME_LEADS: ((who: string) => string)[] = [
  (who) => `It was almost bedtime, and ${who.replace(/^The /, 'the ')} was very sleepy.`,
  (who) => `${who} was tired and wanted to go to bed.`,
  () => 'Soon it was time to sleep.',
];
/** The story's first sentence when the pet has a name: said at once, as a child's story does. */
const NAME_LEADS: ((subject: string, name: string) => string)[] = [
  (_, name) => `Its name was ${name}.`,
  (subject, name) => `The ${subject}'s name was ${name}.`,
  (subject, name) => `The ${subject} was called ${name}.`,
  (subject, name) => `Everyone called the ${subject} ${name}.`,
  (subject, name) => `${name} was a happy ${subject}.`,
];
/** Share of named stories that say the name in their first sentence; the rest name it where the base model does. */
const NAME_LEAD_SHARE = 0.8;
/** Share of named training stories whose name is made up (pools.ts inventedName), not from the name pool, and how it is spelled. */
const INVENTED_NAMES: Record<'default' | 'copyTask', { share: number; spelling: NameSpelling }> = {
  default: { share: 0.5, spelling: 'syllables' },
  copyTask: { share: 0.85, spelling: 'alphabet' },
};
const BEDTIME_CLOSINGS: ((who: string) => string)[] = [
  (who) => `${who} was tired, so ${who.replace(/^The /, 'the ')} went to sleep.`,
  (who) => `That night, ${who.replace(/^The /, 'the ')} went to bed and fell asleep.`,
  (who) => `Then ${who.replace(/^The /, 'the ')} went to sleep.`,
  (who) => `At the end of the day, ${who.replace(/^The /, 'the ')} was sleepy and went to bed.`,
  (who) => `${who} said good night and went to sleep.`,
];

/**
 * A conditioned plan mostly opens the story with a templated sentence that names the pet, and
 * otherwise names it in the beginning the base model continues (it copies names from its
 * context, so its story keeps the name about a third of the time). Either way the base model's
 * own sentences go on with the name. A favourite thing or bedtime get a templated sentence too
 * (the base model, left to itself, keeps them too rarely to learn from). The training prompt
 * drops the name from the beginning and says it, and the rest, in the instruction instead.
 *
 * The name sentence comes first because a name is copied most surely where it is said at once:
 * a model that writes "Its name was" right after a hint reaches the name in one step, and OPD's
 * teacher then puts the name in the first tokens of every story, where the student, which never
 * saw the hint, can learn it.
 */
function plan(rand: () => number, conditioned: boolean, names: Split, copyTask: boolean): Plan {
  const subject = pick(SUBJECTS, rand);
  const beginning = pick(storyOpenings(subject, 'fine-tuning'), rand).question;
  if (!conditioned) return { subject, beginning, primed: beginning, lead: '', closing: '', bedtime: false, conditioned };
  const made = INVENTED_NAMES[copyTask ? 'copyTask' : 'default'];
  const invented = names === 'train' && rand() < made.share;
  const name = rand() < 0.65 ? (invented ? inventedName(rand, made.spelling) : pick(NAMES[names], rand)) : undefined;
  const favourite = rand() < 0.5 ? pick(THINGS[names], rand) : undefined;
  const bedtime = rand() < (name || favourite ? 0.35 : 1);
  const who = name ?? `The ${subject}`;
  // Mostly at the end, where a bedtime story puts it; sometimes first, as the child may say it.
  const bedtimeFirst = bedtime && rand() < 0.3;
  const closing = bedtime && !bedtimeFirst ? pick(BEDTIME_CLOSINGS, rand)(who) : '';
  const sentences = [favourite ? pick(FAVOURITE_LEADS, rand)(who, favourite) : '', bedtimeFirst ? pick(BEDTIME_LEADS, rand)(who) : ''];
  const nameLead = name && rand() < NAME_LEAD_SHARE ? pick(NAME_LEADS, rand)(subject, name) : '';
  const lead = [nameLead, ...(rand() < 0.5 ? sentences : sentences.reverse())]
    .filter(Boolean)
    .map((x) => ` ${x}`)
    .join('');
  const named = name && !nameLead ? withName(beginning, subject, name) : beginning;
  return { subject, beginning, primed: named + lead, lead, closing, name, favourite, bedtime, conditioned };
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
    // Every story is short; saying so now and then teaches the word, not the length.
    short: rand() < 0.15,
  };
}

/**
 * The generated tokens as text that follows `prompt`: decoding them alone drops the leading
 * space of the first piece, and training on "sea.The" would teach tokens the model never writes.
 */
function continuationText(policy: Policy, prompt: string, tokens: number[]): string {
  const ids = policy.promptIds(prompt);
  const stop = new Set(policy.tokenizer.stopIds);
  const kept = tokens.filter((t) => !stop.has(t));
  const head = policy.tokenizer.decode(ids);
  const full = policy.tokenizer.decode([...ids, ...kept]);
  return full.startsWith(head) ? full.slice(head.length) : policy.tokenizer.decode(kept);
}

/** `text` up to and with its last full sentence ("... the sea." or '... "Hello!"'); '' if none. */
export function lastSentenceCut(text: string): string {
  let end = -1;
  for (const m of text.matchAll(/[.!?]["']?(?=\s|$)/g)) end = m.index + m[0].length;
  return end < 0 ? '' : text.slice(0, end);
}

/**
 * `count` examples, `unconditioned` of them plain. Conditioned stories are kept only when they
 * kept a primed name, thing or bedtime (rejection sampling: sampling is cheap, training is not),
 * so every conditioned example teaches the model to carry a fact from the instruction into the
 * story.
 */
/** `names` picks the name and thing pools: held-out examples may use names training never saw. */
export async function relabeledStories(policy: Policy, o: RelabelOptions, names: Split = 'train'): Promise<DemoExample[]> {
  const rand = mulberry32(o.seed);
  const plain = Math.round(o.count * o.unconditioned);
  const want = { plain, conditioned: o.count - plain };
  const out: DemoExample[] = [];
  const kept = { plain: 0, conditioned: 0 };
  let batchIndex = 0;
  // A conditioned story keeps its fact about a third of the time; ten tries per example is ample.
  const maxBatches = Math.ceil((o.count * 10) / o.batch);
  while ((kept.plain < want.plain || kept.conditioned < want.conditioned) && batchIndex < maxBatches) {
    o.signal?.throwIfAborted();
    const plans = Array.from({ length: o.batch }, () => plan(rand, kept.plain >= want.plain || rand() >= o.unconditioned, names, o.copyTask ?? false));
    const gens = await policy.generate(
      plans.map((p) => p.primed),
      {
        maxNewTokens: o.maxNewTokens,
        sampling: { temperature: o.temperature, topP: 1, topK: 0 },
        seed: o.seed * 1_000_003 + batchIndex * o.batch,
        signal: o.signal,
      },
    );
    batchIndex++;
    for (const [j, p] of plans.entries()) {
      const own = lastSentenceCut(continuationText(policy, p.primed, gens[j].tokens));
      if (own.split(/\s+/).filter(Boolean).length < MIN_STORY_WORDS) continue;
      // A byte token sampled alone ("bed.\x07 the") or a broken character is noise the model
      // would learn to write; stories260K writes plain ASCII otherwise.
      if (/[^\n\x20-\x7e]/.test(own)) continue;
      const story = p.lead + own + (p.closing ? ` ${p.closing}` : '');
      if (!p.conditioned) {
        if (kept.plain >= want.plain) continue;
        kept.plain++;
        out.push({ prompt: p.beginning, completion: story, wish: null });
        continue;
      }
      const wish = hindsightWish(p, story, rand);
      const keptPrimed = !!wish.name || !!wish.favourite || !!wish.bedtime;
      if (!keptPrimed || kept.conditioned >= want.conditioned) continue;
      kept.conditioned++;
      const includeSubject = mentionsNoun(story, p.subject) && rand() < 0.5;
      // A primed fact the story kept is always in its instruction (hindsightWish): the model must
      // never learn to write a name or thing that nobody asked for.
      out.push({ prompt: hintInFront(instructionFor(wish, rand, 'fine-tuning', includeSubject), p.beginning), completion: story, wish });
    }
    o.onProgress?.(kept.plain + kept.conditioned, o.count);
  }
  return out;
}
