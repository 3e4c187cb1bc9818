/**
 * The other-child control (preset advantage.hintSource "other-child"), the storyteller's control
 * that can refute OPD. A shuffled hint still asks for what every child of the scenario wants; this
 * one gives each turn's teacher the hint the judge would have written about the same story for a
 * *different* child: another pet, name and favourite thing, drawn once per run by its seed from a
 * pool that shares none of them with this child. The judge's own hint is rewritten, whole words,
 * case kept (this child's pet and its plural, name, favourite thing and its plural become the
 * other child's), so it works for any judge, rules or LLM. If OPD learns because the hint carries
 * this user's wish, the control must learn this child's wishes clearly less, and drift toward the
 * other child's (docs/method.md#the-other-child-control).
 */
import { mulberry32, pickFrom } from '../../gpu/random';
import { escapeRegExp } from '../rules/profile';
import { mentionsName } from '../rules/story-traits';
import { hashParts } from '../seeded';

/** A storyteller child's three own wishes, as the scenario normalises them. */
export interface ChildWishes {
  /** The pet, plain lower-case words: "dog", "little cat". */
  subject: string;
  /** The pet's name, one capitalised word: "Max". */
  name: string;
  /** Its favourite thing, one or two lower-case words: "ball", "red ball". */
  favourite: string;
}

/**
 * The children another one is drawn from: the default child and the README's wish combinations
 * (`nextstate reproduce --wishes`). No two of them share a word, so each word of a child rules
 * out at most one of them and a child of up to six words always leaves one.
 */
export const OTHER_CHILDREN: readonly ChildWishes[] = [
  { subject: 'dog', name: 'Max', favourite: 'ball' },
  { subject: 'cat', name: 'Tom', favourite: 'hat' },
  { subject: 'frog', name: 'Pip', favourite: 'cake' },
  { subject: 'bird', name: 'Lily', favourite: 'kite' },
  { subject: 'bunny', name: 'Hazel', favourite: 'flower' },
  { subject: 'bear', name: 'Ben', favourite: 'pillow' },
  { subject: 'duck', name: 'Noodle', favourite: 'boat' },
];

/** A child as `nextstate reproduce --wishes` and the run's records write it: "cat/Tom/hat". */
export function childLabel(c: ChildWishes): string {
  return `${c.subject}/${c.name}/${c.favourite}`;
}

function wordsOf(c: ChildWishes): Set<string> {
  return new Set([c.subject, c.name, c.favourite].flatMap((part) => part.toLowerCase().split(/\s+/)));
}

/** The pool's children that share no word of a subject, name or favourite with `child`. */
export function otherChildren(child: ChildWishes): ChildWishes[] {
  const mine = wordsOf(child);
  return OTHER_CHILDREN.filter((other) => ![...wordsOf(other)].some((w) => mine.has(w)));
}

/** The other child of a run of `child` with `seed`: the same for the same seed, every time. */
export function otherChildFor(child: ChildWishes, seed: number): ChildWishes {
  const pool = otherChildren(child);
  // Mixed past the hash: consecutive seeds' FNV hashes differ in few low bits.
  return pickFrom(pool, mulberry32(hashParts('other-child', seed)));
}

const IRREGULAR_PLURALS: Record<string, string> = { mouse: 'mice', goose: 'geese', child: 'children', wolf: 'wolves', calf: 'calves' };

/** "dog" -> "dogs", "bunny" -> "bunnies", "fox" -> "foxes", "red ball" -> "red balls". */
export function pluralOf(phrase: string): string {
  const words = phrase.split(' ');
  const last = words[words.length - 1];
  words[words.length - 1] =
    IRREGULAR_PLURALS[last] ?? (/[^aeiou]y$/.test(last) ? `${last.slice(0, -1)}ies` : /(?:s|x|z|ch|sh)$/.test(last) ? `${last}es` : `${last}s`);
  return words.join(' ');
}

/** `replacement` in the case of `match`: "DOG" -> "CAT", "Dog" -> "Cat", "dog" -> "cat", "max" -> "tom". */
function caseLike(match: string, replacement: string): string {
  if (/[a-z]/i.test(match) && match === match.toUpperCase() && match.length > 1) return replacement.toUpperCase();
  const lower = replacement.toLowerCase();
  const words = match.split(/\s+/);
  // Title case throughout ("Little Cat") carries to every word; a capital first letter to the first.
  if (words.length > 1 && words.every((w) => /^[A-Z]/.test(w))) return lower.replace(/\b[a-z]/g, (c) => c.toUpperCase());
  return /^[A-Z]/.test(match) ? lower.charAt(0).toUpperCase() + lower.slice(1) : lower;
}

/**
 * Rewrites text about `from` as it would read about `to`: `from`'s pet (singular or plural), name
 * and favourite thing (singular or plural) become `to`'s, as whole words in any case, each in the
 * case it was written ("Maxine" is not "Max"; "Max's" becomes "Tom's").
 */
export function rewriteForChild(text: string, from: ChildWishes, to: ChildWishes): string {
  const swaps = new Map<string, string>();
  const add = (word: string, replacement: string) => {
    const key = word.toLowerCase();
    if (!swaps.has(key)) swaps.set(key, replacement);
  };
  for (const part of ['subject', 'favourite'] as const) {
    add(from[part], to[part]);
    // The proper plural, and a plain "s" ("bunnys"); never "es" on a word that takes "s" ("hat", "hates").
    for (const plural of [pluralOf(from[part]), `${from[part]}s`]) add(plural, pluralOf(to[part]));
  }
  add(from.name, to.name);
  const keys = [...swaps.keys()].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(`\\b(?:${keys.map((k) => escapeRegExp(k).replace(/ /g, '\\s+')).join('|')})\\b`, 'gi');
  return text.replace(pattern, (match) => caseLike(match, swaps.get(match.toLowerCase().replace(/\s+/g, ' '))!));
}

/** What the run loop hands the judge for the other-child control (JudgeDeps.rewriteHint). */
export interface OtherChildHints {
  /** The other child, as the records name it: "cat/Tom/hat". */
  user: string;
  child: ChildWishes;
  /** The judge's hint for `from` as the judge would write it for the other child. */
  rewrite: (hint: string) => string;
}

/** The other-child control of a run of `child` with `seed`. */
export function otherChildHints(child: ChildWishes, seed: number): OtherChildHints {
  const from = { subject: child.subject, name: child.name, favourite: child.favourite };
  const other = otherChildFor(from, seed);
  return { user: childLabel(other), child: other, rewrite: (hint) => rewriteForChild(hint, from, other) };
}

/** `noun` or its plural as whole words, any case ("cat", "Cats"; not "category", nor "hates" for "hat"). */
function nounPattern(noun: string): RegExp {
  const forms = [noun, pluralOf(noun)].map((w) => escapeRegExp(w).replace(/ /g, '\\s+'));
  return new RegExp(`\\b(?:${forms.join('|')})\\b`, 'i');
}

/**
 * How often `stories` name `child`'s pet (singular or plural, whole words), its name (a
 * capitalised whole word, as the rules read it) and its favourite thing: fractions of the
 * stories, 0 for none.
 */
export function childMentionRates(stories: readonly string[], child: ChildWishes): { pet: number; name: number; favourite: number } {
  const rate = (named: (story: string) => boolean) => (stories.length ? stories.filter(named).length / stories.length : 0);
  const [pet, favourite] = [nounPattern(child.subject), nounPattern(child.favourite)];
  return {
    pet: rate((s) => pet.test(s)),
    name: rate((s) => mentionsName(s, child.name)),
    favourite: rate((s) => favourite.test(s)),
  };
}
