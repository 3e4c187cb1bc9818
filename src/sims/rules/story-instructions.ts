/**
 * Instructions for a bedtime story, in two disjoint sets of wordings. The demo model is
 * fine-tuned on `fine-tuning` wordings only; the rules judge writes its hints in `held-out`
 * wordings by default, the way an LLM judge phrases each hint its own way, so a run on the demo
 * model measures whether the model reads what a hint says, not whether it recognises a sentence
 * it was trained on. `fine-tuning` stays available to the judge, so the README can show how much
 * the wording matters.
 */
import { pickFrom, shuffled } from '../../gpu/random';
import { quotedRequest } from '../../rl/hints';
import { joinList } from './profile';

/** What one instruction asks for; absent fields are not asked for. */
export interface StoryWish {
  subject: string;
  name?: string;
  favourite?: string;
  bedtime?: boolean;
  kind?: boolean;
  gentle?: boolean;
  short?: boolean;
}

export const WORDING_SETS = ['held-out', 'fine-tuning'] as const;
export type WordingSet = (typeof WORDING_SETS)[number];

export type Trait = (typeof TRAITS)[number];
type Fill = { subject: string; name: string; favourite: string };
type Template = (w: Fill) => string;

const a = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');

/** Clauses, lower-case and without a full stop, so they join into one sentence or stand alone. */
const CLAUSES: Record<Trait, Record<WordingSet, Template[]>> = {
  subject: {
    'fine-tuning': [
      (w) => `make the story about the ${w.subject}`,
      (w) => `tell it about ${a(w.subject)} ${w.subject}`,
      (w) => `the story is about ${a(w.subject)} ${w.subject}`,
      (w) => `write about the ${w.subject}`,
      (w) => `the ${w.subject} is the hero`,
      (w) => `it is a story about my ${w.subject}`,
      (w) => `the main one is the ${w.subject}`,
    ],
    'held-out': [
      (w) => `the ${w.subject} should be in the story`,
      (w) => `a story with my ${w.subject} please`,
      (w) => `i want the ${w.subject} in it`,
      (w) => `tell me about my ${w.subject}`,
      (w) => `it has to be about the ${w.subject}`,
    ],
  },
  name: {
    'fine-tuning': [
      (w) => `call the ${w.subject} ${w.name}`,
      (w) => `the ${w.subject}'s name is ${w.name}`,
      (w) => `name the ${w.subject} ${w.name}`,
      (w) => `the ${w.subject} is called ${w.name}`,
      (w) => `my ${w.subject} is named ${w.name}`,
      (w) => `use the name ${w.name}`,
      (w) => `make it about my ${w.subject} ${w.name}`,
      (w) => `the ${w.subject} has the name ${w.name}`,
      (w) => `give the ${w.subject} the name ${w.name}`,
      (w) => `${w.name} is my ${w.subject}`,
      (w) => `say ${w.name} for the ${w.subject}`,
      (w) => `the story is about ${w.name}`,
      (w) => `write about ${w.name} the ${w.subject}`,
      (w) => `the pet is ${w.name}`,
    ],
    'held-out': [
      (w) => `${w.name} is the name of the ${w.subject}`,
      (w) => `please call my ${w.subject} ${w.name} in the story`,
      (w) => `the ${w.subject} should be called ${w.name}`,
      (w) => `my ${w.subject} goes by ${w.name}`,
      (w) => `we call the ${w.subject} ${w.name}`,
      (w) => `use ${w.name} as the ${w.subject}'s name`,
      (w) => `it has to be ${w.name}, my ${w.subject}`,
      (w) => `the ${w.subject} in it must be named ${w.name}`,
    ],
  },
  favourite: {
    'fine-tuning': [
      (w) => `put ${a(w.favourite)} ${w.favourite} in the story`,
      (w) => `the ${w.subject} loves ${a(w.favourite)} ${w.favourite}`,
      (w) => `add ${a(w.favourite)} ${w.favourite}`,
      (w) => `include ${a(w.favourite)} ${w.favourite}`,
      (w) => `the story has ${a(w.favourite)} ${w.favourite} in it`,
      (w) => `the ${w.subject} plays with ${a(w.favourite)} ${w.favourite}`,
      (w) => `there is ${a(w.favourite)} ${w.favourite} too`,
      (w) => `the ${w.subject} has ${a(w.favourite)} ${w.favourite}`,
      (w) => `write about ${a(w.favourite)} ${w.favourite} as well`,
      (w) => `the ${w.favourite} is in the story`,
      (w) => `do not forget the ${w.favourite}`,
    ],
    'held-out': [
      (w) => `make sure there is ${a(w.favourite)} ${w.favourite}`,
      (w) => `my ${w.subject}'s favourite thing is ${a(w.favourite)} ${w.favourite}`,
      (w) => `the ${w.favourite} needs to be there`,
      (w) => `it should have ${a(w.favourite)} ${w.favourite}`,
      (w) => `show the ${w.subject} with its ${w.favourite}`,
      (w) => `the ${w.subject}'s ${w.favourite} is missing`,
      (w) => `bring in ${a(w.favourite)} ${w.favourite}`,
    ],
  },
  bedtime: {
    'fine-tuning': [
      (w) => `let the story end with the ${w.subject} going to sleep`,
      () => 'end with going to bed',
      (w) => `the ${w.subject} falls asleep at the end`,
      () => 'it should end at bedtime',
      () => 'finish with a sleepy goodnight',
      (w) => `${w.name || `the ${w.subject}`} goes to sleep at the end`,
      () => 'at the end everyone sleeps',
      () => 'end it with sleep',
      (w) => `in the end the ${w.subject} is in bed`,
    ],
    'held-out': [
      (w) => `make it end with the ${w.subject} asleep`,
      () => 'the last part is about going to sleep',
      (w) => `the ${w.subject} should go to bed when it ends`,
      () => 'it is a bedtime story, so it ends in sleep',
      () => 'close with a good night and sleep',
      (w) => `finally the ${w.subject} must sleep`,
    ],
  },
  kind: {
    'fine-tuning': [
      () => 'use kind words, with friends who help, share, hug and smile',
      () => 'use kind words',
      () => 'make it kind, with friends who help and share',
      () => 'let them hug and smile',
      () => 'it needs friends and hugs',
      () => 'they are good friends',
      () => 'someone helps a friend',
      () => 'make it a happy story',
    ],
    'held-out': [
      () => 'be nice and happy, with good friends',
      () => 'the friends should love and help each other',
      () => 'there should be hugs and sharing',
      () => 'make everyone friendly and kind',
      () => 'i like it when they help and smile',
    ],
  },
  gentle: {
    'fine-tuning': [
      () => 'keep it gentle, with nobody mean, hurt, scared or sad',
      () => 'no scary parts',
      () => 'nobody is mean or sad',
      () => 'keep it gentle',
      () => 'nothing bad happens',
      () => 'no one gets hurt',
    ],
    'held-out': [
      () => 'nothing scary or mean please',
      () => 'do not make anyone sad or scared',
      () => 'leave out anything scary',
      () => 'no mean or sad parts',
    ],
  },
  short: {
    'fine-tuning': [() => 'keep it short, about five simple sentences', () => 'make it short', () => 'only a few sentences', () => 'a short story'],
    'held-out': [() => 'not too long please', () => 'just a little story', () => 'tell it in a few lines'],
  },
};

/** Ways to open an instruction; `null` starts with the first clause. */
const LEADS: Record<WordingSet, (((w: StoryWish) => string) | null)[]> = {
  'fine-tuning': [
    null,
    (w) => `The child wants a bedtime story about their ${w.subject}${w.name ? ` ${w.name}` : ''}:`,
    () => 'Tell a bedtime story:',
    () => 'Story rules:',
    () => 'Write a story.',
    () => 'For the story:',
    (w) => `A story about the ${w.subject}.`,
  ],
  'held-out': [null, () => 'Here is what I want:', () => 'The child asks for this:', () => 'Please change the story.', () => 'Next time:'],
};

export const TRAITS = ['subject', 'name', 'favourite', 'bedtime', 'kind', 'gentle', 'short'] as const;

function asked(wish: StoryWish): Trait[] {
  return TRAITS.filter((t) => (t === 'subject' ? true : t === 'name' ? !!wish.name : t === 'favourite' ? !!wish.favourite : !!wish[t]));
}

/** How many distinct clause wordings a set has for `trait` (tests check the sets stay disjoint). */
export function clauseWordings(trait: Trait, set: WordingSet, fill: Fill): string[] {
  return CLAUSES[trait][set].map((t) => t(fill));
}

/**
 * One instruction for `wish`, its wording drawn with `rand` from `set`: a lead, then the clauses
 * in a random order, joined as one sentence ("a, b and c.") or as one sentence each.
 * `includeSubject` false leaves the subject clause out (the story beginning names it anyway).
 */
export function instructionFor(wish: StoryWish, rand: () => number, set: WordingSet, includeSubject = rand() < 0.5): string {
  const fill = { subject: wish.subject, name: wish.name ?? '', favourite: wish.favourite ?? '' };
  const traits = asked(wish).filter((t) => t !== 'subject' || includeSubject);
  const order = shuffled(traits.length ? traits : ['subject' as const], rand);
  const clauses = order.map((t) => pickFrom(CLAUSES[t][set], rand)(fill));
  // The rules judge without a profile (talk yourself) quotes the person's request: that form too.
  if (rand() < 0.15) return quotedRequest(set === 'fine-tuning' ? `${clauses.join(', ')}` : `${joinList(clauses)} please`);
  const lead = pickFrom(LEADS[set], rand);
  const body = rand() < 0.5 ? `${joinList(clauses)}.` : clauses.map((c) => `${capitalise(c)}.`).join(' ');
  if (!lead) return capitalise(body);
  const head = lead(wish);
  return `${head} ${head.endsWith(':') ? body : capitalise(body)}`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
