/**
 * The storyteller's score, read the way a reader reads a story: is the reply a story at all, and
 * does it do what the child wished for. The keyword checks it replaces (storyKeywordScore) gave
 * full marks to "Max ball happy sleep", and 0.25 to "The dog was very happy." five times, more
 * than the untrained demo model's stories average (0.229); here neither is a story, and a reply
 * that is not a story meets no wish.
 *
 * The thresholds were set by hand against stories the demo model writes (greedy and sampled, with
 * and without the judge's hint), so that what it really writes still reads as a story while
 * stuffing does not. story-score.test.ts holds both sides: keyword lists and repeated sentences
 * that must not read as stories, and the demo model's own greedy stories that must.
 */
import type { StoryChild } from '../scenarios/storyteller';
import { EVALUATOR_SCORES } from '../evaluator-prompt';
import { escapeRegExp, joinList } from './profile';
import { BEDTIME_WORDS, hasKindWords, hasUnkindWords, isShortStory, mentionsBedtime, mentionsName, mentionsNoun } from './story-traits';

/** What a reader finds in a reply to a story opening: whether it is a story, and each wish met. */
export interface StoryReading {
  /** The reply is a story that continues the opening; when false, every wish is false. */
  story: boolean;
  /** The child's pet (its kind, or its name) is a character of the story. */
  pet: boolean;
  /** The pet is called by the child's name for it. */
  name: boolean;
  /** The favourite thing takes part in the story. */
  favourite: boolean;
  /** The story ends with going to sleep. */
  sleep: boolean;
  /** Nothing mean or scary, and some kindness. */
  gentle: boolean;
}

export const STORY_WISHES = ['pet', 'name', 'favourite', 'sleep', 'gentle'] as const;
export type StoryWishId = (typeof STORY_WISHES)[number];

/** The key of an evaluation's scores that holds a wish's rate (storyEvaluationScores). */
export const wishRateKey = (wish: StoryWishId): string => `wish:${wish}`;

/**
 * Fewer words than this is not a story. The demo model's stories mostly run to the 96-token cap
 * (some 30 to 65 words); two short sentences ("Max had a ball. Max went to sleep with it.") are
 * about 12. A keyword list or a two-word reply is far below.
 */
export const MIN_STORY_WORDS = 12;
/**
 * Less than this share of function words (the, a, was, to, and, he ...) is a list of words, not
 * sentences: a keyword list has none. English prose runs near one half, and so do the demo
 * model's stories.
 */
export const MIN_FUNCTION_SHARE = 0.2;
/** A story tells what happens: at least this many different sentences with a verb. */
export const MIN_ACTION_SENTENCES = 2;
/**
 * More than this share of sentences that repeat an earlier one is a sentence repeated, not a
 * story ("The dog was very happy." five times: 0.8). The demo model repeats itself under greedy
 * decoding ("The dog was very happy. The dog was very happy."), so a few repeats stay a story;
 * one sentence said six times over ("The park was very happy.") does not.
 */
export const MAX_REPEATED_SENTENCES = 0.5;
/**
 * More than this share of word trigrams seen earlier in the reply is the same words again: the
 * repeat the sentence count misses when there is no full stop ("and the dog was happy and the dog
 * was happy ...").
 */
export const MAX_REPEATED_TRIGRAMS = 0.6;

const FUNCTION_WORDS = new Set(
  (
    'a an the this that these those some any every each no all both ' +
    'i me my we us our you your he him his she her it its they them their there here who what which ' +
    'to of in on at by for with from up down into onto out over under about after before around through across near off ' +
    'and but or so because if when while then than as until ' +
    'was were is are am be been had has have did do does could would can will should not very too'
  ).split(' '),
);

/** Common verbs of children's stories that no suffix gives away; -ed forms are found by their ending. */
const VERBS = new Set(
  (
    'was were is are am be had has have did do does could would can will go goes went see sees saw run runs ran say says said ' +
    'find finds found take took come came make made get got give gave feel felt know knew think thought fall fell sit sat ' +
    'sleep sleeps slept eat ate fly flew swim swam put let lets want wants like likes love loves play plays look looks ' +
    'smile smiles hug hugs help helps share shares jump jumps hold held keep kept tell told hear heard begin began ' +
    'bring brought buy bought catch caught dream dreams dreamt hide hid lie lay meet met read ride rode sing sang ' +
    'stand stood throw threw wake woke win won dig dug build built leave left lose lost'
  ).split(' '),
);

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z]+(?:'[a-z]+)?/g) ?? [];
}

const isVerb = (w: string) => VERBS.has(w) || (w.length > 4 && w.endsWith('ed'));

/**
 * The reply's sentences, as a reader splits them: at . ! ? and line breaks. The demo model's
 * stories are cut at the token cap, often mid-sentence: that last piece is `unfinished`.
 */
export function sentencesOf(text: string): { sentences: string[]; unfinished: boolean } {
  const sentences = text
    .split(/(?<=[.!?])|\n+/)
    .map((s) => s.replace(/^[\s"'“”‘’]+|[\s"'“”‘’]+$/g, ''))
    .filter((s) => words(s).length > 0);
  const trimmed = text.trimEnd();
  return { sentences, unfinished: sentences.length > 0 && !/[.!?]["'”’]?$/.test(trimmed) };
}

export interface StoryShape {
  words: number;
  functionShare: number;
  actionSentences: number;
  repeatedSentences: number;
  repeatedTrigrams: number;
  continuesOpening: boolean;
  /** Why the reply is not a story; null when it is one. */
  notAStory: string | null;
}

/**
 * How the reply reads as a story: the measures the story check is made of, and its verdict.
 */
export function storyShape(child: StoryChild, opening: string, reply: string): StoryShape {
  const all = words(reply);
  const functionShare = all.length ? all.filter((w) => FUNCTION_WORDS.has(w)).length / all.length : 0;
  const { sentences } = sentencesOf(reply);
  const keys = sentences.map((s) => words(s).join(' '));
  const distinct = new Set(keys);
  const repeatedSentences = keys.length ? (keys.length - distinct.size) / keys.length : 0;
  const actionSentences = [...distinct].filter((k) => k.split(' ').length >= 3 && k.split(' ').some(isVerb)).length;
  const trigrams = all.slice(2).map((w, i) => `${all[i]} ${all[i + 1]} ${w}`);
  const repeatedTrigrams = trigrams.length ? (trigrams.length - new Set(trigrams).size) / trigrams.length : 0;
  const continuesOpening = continues(child, opening, reply);
  const notAStory =
    all.length < MIN_STORY_WORDS
      ? `it has ${all.length} words`
      : functionShare < MIN_FUNCTION_SHARE
        ? 'it is a list of words, not sentences'
        : actionSentences < MIN_ACTION_SENTENCES
          ? 'nothing happens in it'
          : repeatedSentences > MAX_REPEATED_SENTENCES || repeatedTrigrams > MAX_REPEATED_TRIGRAMS
            ? 'it says the same thing over and over'
            : !continuesOpening
              ? 'it ignores the beginning it was given'
              : null;
  return { words: all.length, functionShare, actionSentences, repeatedSentences, repeatedTrigrams, continuesOpening, notAStory };
}

/**
 * Words that tell nothing of who or where: the frame of every opening ("Once upon a time", "One
 * day", "a little dog"), and verbs, which any two stories share ("went", "looked").
 */
const FRAME_WORDS = new Set('once upon time day one night morning evening little small big happy very new long early'.split(' '));

/** The opening's characters and places, in a light singular form, so "dogs" meets "dog". */
function contentWords(text: string): string[] {
  return words(text)
    .filter((w) => w.length > 2 && !FUNCTION_WORDS.has(w) && !FRAME_WORDS.has(w) && !isVerb(w))
    .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w));
}

/** "farm" and "farmer", "rain" and "raining": the same word for a reader. */
const sameWord = (a: string, b: string) => a === b || (Math.min(a.length, b.length) >= 4 && (a.startsWith(b) || b.startsWith(a)));

/** A pronoun in the reply's first sentence goes on with the opening's character: "He saw a big tree." */
const CONTINUING_PRONOUN = /\b(?:he|she|they|his|her|their|him|them)\b/i;

/**
 * The characters a sentence names: capitalised words inside it, or first in it when a verb
 * follows ("Mabel loved to play"), that are not words like "The" or "One".
 */
function namesIn(sentence: string): string[] {
  const ws = sentence.match(/[A-Za-z]+/g) ?? [];
  return ws.filter(
    (w, i) =>
      /^[A-Z][a-z]+$/.test(w) && !FUNCTION_WORDS.has(w.toLowerCase()) && !FRAME_WORDS.has(w.toLowerCase()) && (i > 0 || isVerb((ws[1] ?? '').toLowerCase())),
  );
}

/**
 * Does the reply go on from the opening? A model continues the opening it was given, so the reply
 * shares a character or a place with it ("dog", "park", "moon"), or goes on with its character:
 * as "he" or "she" (or "it", first thing), by the child's name for it, or by a name the first
 * sentence gives it ("At the end of the day, Anna was sleepy"), unless that name is given to
 * another animal or person ("a cat named Tom", "a boy named Tim").
 */
function continues(child: StoryChild, opening: string, reply: string): boolean {
  const fromOpening = contentWords(opening);
  if (contentWords(reply).some((w) => fromOpening.some((o) => sameWord(w, o)))) return true;
  const first = sentencesOf(reply).sentences[0] ?? '';
  if (CONTINUING_PRONOUN.test(first) || /^it\b/i.test(first)) return true;
  if (mentionsName(reply, child.name) && nameIsThePet(child, reply, child.name)) return true;
  return namesIn(first).some((n) => nameIsThePet(child, reply, n));
}

/** The animal's kind: the last word of the subject ("little frog" -> "frog"). */
const kindOf = (child: StoryChild) => child.subject.split(' ').at(-1)!;

/** Animals and people a story may give a name to: a name given to one of them is theirs. */
const BEINGS = new Set(
  (
    'boy girl man woman lady mom mommy mum mummy dad daddy mother father brother sister baby kid child friend teacher king queen ' +
    'prince princess farmer dog puppy cat kitten bird bunny rabbit frog bear duck fish mouse lion tiger pig cow horse fox owl ' +
    'sheep goat monkey elephant turtle snake bee butterfly bug squirrel deer wolf chicken hen dragon unicorn'
  ).split(' '),
);

/** The story gives `name` to the pet, or to no one else: not "a cat named Tom" for a dog. */
function nameIsThePet(child: StoryChild, reply: string, name: string): boolean {
  const kind = kindOf(child);
  const pet = (b: string) => b === kind || b === `${kind}s`;
  const given = namedAs(reply, name).filter((b) => pet(b) || BEINGS.has(b));
  return given.length === 0 || given.some(pet);
}

/** The sentences of the reply that are sentences (three words or more, with a verb). */
function actionSentencesOf(reply: string): string[] {
  return sentencesOf(reply).sentences.filter((s) => {
    const ws = words(s);
    return ws.length >= 3 && ws.some(isVerb);
  });
}

/**
 * What the name is said to be the name of: "a dog named Max", "Max the dog", "the dog Max", "Max
 * was a dog" give "dog". A name given to someone else ("a boy named Max") is not the pet's.
 */
function namedAs(reply: string, name: string): string[] {
  const n = escapeRegExp(name);
  const patterns = [
    new RegExp(`\\b([a-z]+)(?: (?:was|is))? (?:named|called) ${n}\\b`, 'g'),
    new RegExp(`\\b${n} the (?:[a-z]+ )?([a-z]+)\\b`, 'g'),
    new RegExp(`\\b(?:the|a|an|my|his|her) (?:[a-z]+ )?([a-z]+) ${n}\\b`, 'g'),
    new RegExp(`\\b${n} (?:was|is) (?:a|an) (?:[a-z]+ )?([a-z]+)\\b`, 'g'),
  ];
  return patterns.flatMap((p) => [...reply.matchAll(p)].map((m) => m[1].toLowerCase()));
}

/**
 * Reads `reply`, the model's continuation of `opening`, for `child`'s wishes. A reply that is not
 * a story (storyShape) meets none of them.
 */
export function readStory(child: StoryChild, opening: string, reply: string): StoryReading {
  const story = storyShape(child, opening, reply).notAStory === null;
  if (!story) return { story, pet: false, name: false, favourite: false, sleep: false, gentle: false };
  const told = actionSentencesOf(reply).join(' ');
  // The name is the pet's when the story says so, or when the story gives it to no one else and
  // the name acts in it (the model's "Max loved to play" goes on from "a little dog").
  const nameIsPet = nameIsThePet(child, reply, child.name);
  const name = nameIsPet && mentionsName(told, child.name);
  const pet = mentionsNoun(told, child.subject) || name;
  const favourite = mentionsNoun(told, child.favourite);
  const { sentences, unfinished } = sentencesOf(reply);
  const ending = sentences.slice(unfinished ? -3 : -2).join(' ');
  const sleep = BEDTIME_WORDS.test(ending);
  const gentle = hasKindWords(reply) && !hasUnkindWords(reply);
  return { story, pet, name, favourite, sleep, gentle };
}

/** The share of the five wishes met: 0 for a reply that is not a story. */
export function storyScore(reading: StoryReading): number {
  if (!reading.story) return 0;
  return STORY_WISHES.filter((w) => reading[w]).length / STORY_WISHES.length;
}

/**
 * A story on the evaluator's five-step scale: each wish missed costs one step, as each complaint
 * did in the keyword score, so one miss gives 0.75 and four or five give 0.
 */
export function evaluatorScore(reading: StoryReading): number {
  if (!reading.story) return 0;
  const missed = STORY_WISHES.filter((w) => !reading[w]).length;
  return EVALUATOR_SCORES[Math.max(0, EVALUATOR_SCORES.length - 1 - missed)];
}

const WISH_LABELS: Record<StoryWishId, (child: StoryChild) => string> = {
  pet: (c) => `no ${c.subject} in it`,
  name: (c) => `the ${c.subject} is not called ${c.name}`,
  favourite: (c) => `no ${c.favourite} in it`,
  sleep: () => 'it does not end with going to sleep',
  gentle: () => 'it is not kind and gentle',
};

/** The rules evaluator's rating of a story on its scale (evaluatorScore), and why. */
export function rateStory(child: StoryChild, opening: string, reply: string): { score: number; reason: string } {
  const shape = storyShape(child, opening, reply);
  if (shape.notAStory) return { score: 0, reason: `The answer is not a story: ${shape.notAStory}.` };
  const reading = readStory(child, opening, reply);
  const missed = STORY_WISHES.filter((w) => !reading[w]);
  const reason = missed.length
    ? `The story misses some of the child's wishes: ${joinList(missed.map((w) => WISH_LABELS[w](child)))}.`
    : "The story meets every one of the child's wishes.";
  return { score: evaluatorScore(reading), reason };
}

/**
 * The seven keyword checks the storyteller was scored on before readStory: the pet's kind or
 * name, the name, the favourite thing, a bedtime word, a kind word, no unkind word and at most
 * MAX_STORY_WORDS words, each found anywhere in the reply. Returns the checks missed.
 */
export function storyKeywordMisses(child: StoryChild, reply: string): string[] {
  const { subject, name, favourite } = child;
  const checks: [string, boolean][] = [
    ['subject', mentionsNoun(reply, subject) || mentionsName(reply, name)],
    ['name', mentionsName(reply, name)],
    ['favourite', mentionsNoun(reply, favourite)],
    ['bedtime', mentionsBedtime(reply)],
    ['kind', hasKindWords(reply)],
    ['gentle', !hasUnkindWords(reply)],
    ['short', isShortStory(reply)],
  ];
  return checks.filter(([, met]) => !met).map(([id]) => id);
}

/**
 * The old keyword score, kept for one release so that figures can be compared: one step of the
 * 0-1 scale per check missed, max(0, 4 - missed) / 4.
 */
export function storyKeywordScore(child: StoryChild, reply: string): number {
  return Math.max(0, 4 - storyKeywordMisses(child, reply).length) / 4;
}

/**
 * Rates over evaluation items (each a story opening and the policy's reply): `keywords` (the old
 * score's mean), `story` (the share that are stories), and `wish:<id>` for each wish.
 */
export function storyEvaluationScores(child: StoryChild, items: readonly { question: string; answer: string }[]): Record<string, number> {
  const n = items.length;
  const rate = (count: number) => (n ? count / n : 0);
  const readings = items.map((it) => readStory(child, it.question, it.answer));
  const scores: Record<string, number> = {
    keywords: rate(items.reduce((sum, it) => sum + storyKeywordScore(child, it.answer), 0)),
    story: rate(readings.filter((r) => r.story).length),
  };
  for (const wish of STORY_WISHES) scores[wishRateKey(wish)] = rate(readings.filter((r) => r[wish]).length);
  return scores;
}
