/**
 * The instructions the demo model learns to follow, in many wordings. The rules judge's own hint
 * is one of them; the rest are paraphrases a person or another judge might write. Each trait's
 * wordings are split in two: the model is trained on `train` and tested on `heldOut`, so a test
 * that the hint works is a test that the model reads the words, not that it memorised a sentence.
 */
import { pickFrom, shuffled } from '../gpu/random';
import { quotedRequest } from '../rl/hints';
import { joinList } from '../sims/rules/profile';

/** What one instruction asks for; absent fields are not asked for. */
export interface StoryWish {
  subject: string;
  name?: string;
  favourite?: string;
  bedtime?: boolean;
  kind?: boolean;
  gentle?: boolean;
}

export type Split = 'train' | 'heldOut';
type Trait = 'subject' | 'name' | 'favourite' | 'bedtime' | 'kind' | 'gentle';
type Template = (w: Required<Pick<StoryWish, 'subject'>> & { name: string; favourite: string }) => string;

/** Clauses, lower-case and without a full stop, so they join into one sentence or stand alone. */
const CLAUSES: Record<Trait, Record<Split, Template[]>> = {
  subject: {
    train: [
      (w) => `make the story about the ${w.subject}`,
      (w) => `tell it about a ${w.subject}`,
      (w) => `the story is about a ${w.subject}`,
      (w) => `write about the ${w.subject}`,
    ],
    heldOut: [(w) => `the ${w.subject} should be in the story`, (w) => `a story with my ${w.subject} please`],
  },
  name: {
    train: [
      (w) => `call the ${w.subject} ${w.name}`,
      (w) => `the ${w.subject}'s name is ${w.name}`,
      (w) => `name the ${w.subject} ${w.name}`,
      (w) => `the ${w.subject} is called ${w.name}`,
      (w) => `my ${w.subject} is named ${w.name}`,
      (w) => `use the name ${w.name}`,
      (w) => `make it about my ${w.subject} ${w.name}`,
    ],
    heldOut: [(w) => `${w.name} is the name of the ${w.subject}`, (w) => `please call my ${w.subject} ${w.name} in the story`],
  },
  favourite: {
    train: [
      (w) => `put a ${w.favourite} in the story`,
      (w) => `the ${w.subject} loves a ${w.favourite}`,
      (w) => `add a ${w.favourite}`,
      (w) => `include a ${w.favourite}`,
      (w) => `the story has a ${w.favourite} in it`,
      (w) => `the ${w.subject} plays with a ${w.favourite}`,
    ],
    heldOut: [(w) => `make sure there is a ${w.favourite}`, (w) => `my ${w.subject}'s favourite thing is a ${w.favourite}`],
  },
  bedtime: {
    train: [
      (w) => `let the story end with the ${w.subject} going to sleep`,
      () => 'end with going to bed',
      (w) => `the ${w.subject} falls asleep at the end`,
      () => 'it should end at bedtime',
      () => 'finish with a sleepy goodnight',
      (w) => `${w.name || `the ${w.subject}`} goes to sleep at the end`,
    ],
    heldOut: [(w) => `make it end with the ${w.subject} asleep`, () => 'the last part is about going to sleep'],
  },
  kind: {
    train: [
      () => 'use kind words, with friends who help, share, hug and smile',
      () => 'use kind words',
      () => 'make it kind, with friends who help and share',
      () => 'let them hug and smile',
      () => 'it needs friends and hugs',
    ],
    heldOut: [() => 'be nice and happy, with good friends', () => 'the friends should love and help each other'],
  },
  gentle: {
    train: [() => 'keep it gentle, with nobody mean, hurt, scared or sad', () => 'no scary parts', () => 'nobody is mean or sad', () => 'keep it gentle'],
    heldOut: [() => 'nothing scary or mean please', () => 'do not make anyone sad or scared'],
  },
};

/** Ways to open an instruction; `null` starts with the first clause. */
const LEADS: Record<Split, (((w: StoryWish) => string) | null)[]> = {
  train: [
    null,
    (w) => `The child wants a bedtime story about their ${w.subject}${w.name ? ` ${w.name}` : ''}:`,
    () => 'Tell a bedtime story:',
    () => 'Story rules:',
  ],
  heldOut: [null, () => 'Here is what I want:'],
};

export const TRAITS: readonly Trait[] = ['subject', 'name', 'favourite', 'bedtime', 'kind', 'gentle'];

function asked(wish: StoryWish): Trait[] {
  return TRAITS.filter((t) => (t === 'subject' ? true : t === 'name' ? !!wish.name : t === 'favourite' ? !!wish.favourite : !!wish[t]));
}

/**
 * One instruction for `wish`, its wording drawn with `rand` from `split`: a lead, then the
 * clauses in a random order, joined as one sentence ("a, b and c.") or as one sentence each.
 * `includeSubject` false leaves the subject clause out (the story beginning names it anyway).
 */
export function instructionFor(wish: StoryWish, rand: () => number, split: Split, includeSubject = rand() < 0.5): string {
  const fill = { subject: wish.subject, name: wish.name ?? '', favourite: wish.favourite ?? '' };
  const traits = asked(wish).filter((t) => t !== 'subject' || includeSubject);
  const order = shuffled(traits.length ? traits : ['subject' as const], rand);
  const clauses = order.map((t) => pickFrom(CLAUSES[t][split], rand)(fill));
  // The rules judge without a profile (talk yourself) quotes the person's request: that form too.
  if (rand() < 0.15) return quotedRequest(split === 'train' ? `${clauses.join(', ')}` : `${joinList(clauses)} please`);
  const lead = pickFrom(LEADS[split], rand);
  const body = rand() < 0.5 ? `${joinList(clauses)}.` : clauses.map((c) => `${capitalise(c)}.`).join(' ');
  return lead ? `${lead(wish)} ${lead(wish).endsWith(':') ? body : capitalise(body)}` : capitalise(body);
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
