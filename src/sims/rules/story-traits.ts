/**
 * What a bedtime story does, read by rules: the facts the storyteller's child checks, the hint
 * judge asks for, and the demo model's hindsight labels are made of. One reading serves all three,
 * so that what the model was taught to do on a hint is exactly what the child then rewards.
 */
import { escapeRegExp, wordCount } from './profile';

export const KIND_WORDS = /\b(?:kind|friends?|love[sd]?|hug(?:s|ged)?|shared?|sharing|help(?:ed|s)?|smiled?|smiles|gentle|nice|happy|cared?|cares)\b/i;
export const UNKIND_WORDS = /\b(?:mean|angry|hit|hurt|scared|scary|cry|cried|sad|hated?|hates|yell(?:ed)?|fight|monster|bad)\b/i;
/** Longer than this many words is too long for a sleepy child. */
export const MAX_STORY_WORDS = 100;

/** A word or short phrase as a whole word, with an optional plural for nouns. */
function wordPattern(word: string, plural: boolean): RegExp {
  return new RegExp(`\\b${escapeRegExp(word)}${plural ? '(?:s|es)?' : ''}\\b`, 'i');
}

/** The story names `noun` ("dog", "little cat"), singular or plural. */
export function mentionsNoun(story: string, noun: string): boolean {
  return wordPattern(noun, true).test(story);
}

/** The story names `name` ("Max") as a word; names are matched case-sensitively. */
export function mentionsName(story: string, name: string): boolean {
  return new RegExp(`\\b${escapeRegExp(name)}\\b`).test(story);
}

export function hasKindWords(story: string): boolean {
  return KIND_WORDS.test(story);
}

export function hasUnkindWords(story: string): boolean {
  return UNKIND_WORDS.test(story);
}

/** Words of going to sleep: a bedtime story ends that way. */
export const BEDTIME_WORDS = /\b(?:sleep|sleeps|sleeping|slept|asleep|sleepy|bed|beds|bedtime|dream|dreams|dreamed|dreamt|nap|naps|napped|goodnight)\b/i;

export function mentionsBedtime(story: string): boolean {
  return BEDTIME_WORDS.test(story);
}

export function isShortStory(story: string): boolean {
  return wordCount(story) <= MAX_STORY_WORDS;
}

/** A pet name the rules can match and the story can carry: one capitalised word. */
export const PET_NAME = /^[A-Z][a-z]{1,15}$/;
/** A favourite thing: one or two lower-case words, like "kite" or "red ball". */
export const THING = /^[a-z]{2,15}(?: [a-z]{2,15})?$/;
