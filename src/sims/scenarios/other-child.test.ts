import { describe, expect, it } from 'vitest';
import {
  childLabel,
  childMentionRates,
  OTHER_CHILDREN,
  otherChildFor,
  otherChildHints,
  otherChildren,
  pluralOf,
  rewriteForChild,
  type ChildWishes,
} from './other-child';
import { normaliseChild, storytellerScenario } from './storyteller';

const max: ChildWishes = { subject: 'dog', name: 'Max', favourite: 'ball' };
const tom: ChildWishes = { subject: 'cat', name: 'Tom', favourite: 'hat' };
const words = (c: ChildWishes) => [c.subject, c.name, c.favourite].flatMap((p) => p.toLowerCase().split(' '));

describe('the other child', () => {
  it('is drawn from a pool whose children share no word with each other', () => {
    const all = OTHER_CHILDREN.flatMap(words);
    expect(new Set(all).size).toBe(all.length);
    // Every child of the pool is a child the scenario accepts as it stands.
    for (const c of OTHER_CHILDREN) expect(normaliseChild(c)).toMatchObject(c);
  });

  it('shares no subject, name or favourite with this child, for every seed', () => {
    const children: ChildWishes[] = [
      max,
      tom,
      { subject: 'little cat', name: 'Pip', favourite: 'red ball' },
      { subject: 'bird', name: 'Ben', favourite: 'cake' },
      { subject: 'fox', name: 'Duck', favourite: 'kite' },
    ];
    for (const child of children) {
      const pool = otherChildren(child);
      expect(pool.length).toBeGreaterThan(0);
      for (let seed = 0; seed < 50; seed++) {
        const other = otherChildFor(child, seed);
        expect(pool).toContainEqual(other);
        expect(words(other).filter((w) => words(child).includes(w))).toEqual([]);
      }
    }
    // "little cat" rules out the cat, "Pip" the frog, "red ball" the dog.
    expect(otherChildren({ subject: 'little cat', name: 'Pip', favourite: 'red ball' }).map((c) => c.name)).toEqual(['Lily', 'Hazel', 'Ben', 'Noodle']);
  });

  it('is the same for the same seed and varies over seeds', () => {
    expect(otherChildFor(max, 3)).toEqual(otherChildFor(max, 3));
    const drawn = new Set(Array.from({ length: 20 }, (_, seed) => otherChildFor(max, seed).name));
    expect(drawn.size).toBeGreaterThan(3);
    expect(drawn.has('Max')).toBe(false);
    // The scenario hands the run the child its seed draws, named as the records name it.
    const hints = storytellerScenario().otherUserHints!(3);
    expect(hints.user).toBe(childLabel(otherChildFor(max, 3)));
    expect(storytellerScenario().otherUserHints!(3)).toEqual(expect.objectContaining({ user: hints.user }));
    expect(otherChildHints(max, 3).child).toEqual(otherChildFor(max, 3));
  });
});

describe('rewriteForChild', () => {
  it('swaps the pet, its name and its favourite thing, singular and plural, keeping the case', () => {
    expect(rewriteForChild("Please call my dog Max in the story. Max's ball is missing.", max, tom)).toBe(
      "Please call my cat Tom in the story. Tom's hat is missing.",
    );
    expect(rewriteForChild('Dogs love balls. The Dog plays. DOG! BALLS!', max, tom)).toBe('Cats love hats. The Cat plays. CAT! HATS!');
    expect(rewriteForChild('max is my dog', max, tom)).toBe('tom is my cat');
    const hazel: ChildWishes = { subject: 'bunny', name: 'Hazel', favourite: 'flower' };
    expect(rewriteForChild('The dogs and their balls.', max, hazel)).toBe('The bunnies and their flowers.');
    expect(rewriteForChild('The bunnies and their flowers; a bunny, Hazel.', hazel, max)).toBe('The dogs and their balls; a dog, Max.');
  });

  it('takes whole words only', () => {
    expect(rewriteForChild('Maxine and Maximum dogged the ballroom; Max did not.', max, tom)).toBe('Maxine and Maximum dogged the ballroom; Tom did not.');
    // "hat" takes an "s": "hates" is another word.
    expect(rewriteForChild('The cat hates the hat and the hats.', tom, max)).toBe('The dog hates the ball and the balls.');
  });

  it('swaps phrases of two words, the longer first', () => {
    const child: ChildWishes = { subject: 'little cat', name: 'Pip', favourite: 'red ball' };
    const other: ChildWishes = { subject: 'bear', name: 'Ben', favourite: 'pillow' };
    expect(rewriteForChild('My little cat Pip wants the red ball. Little Cats love red balls; a ball is not it.', child, other)).toBe(
      'My bear Ben wants the pillow. Bears love pillows; a ball is not it.',
    );
  });

  it('leaves a hint that names none of the wishes as it is', () => {
    expect(rewriteForChild('Nothing scary or mean please.', max, tom)).toBe('Nothing scary or mean please.');
  });
});

describe('pluralOf', () => {
  it('writes the plural the rewrite and the rates read', () => {
    expect(['dog', 'bunny', 'fox', 'boat', 'red ball', 'mouse', 'day'].map(pluralOf)).toEqual([
      'dogs',
      'bunnies',
      'foxes',
      'boats',
      'red balls',
      'mice',
      'days',
    ]);
  });
});

describe('childMentionRates', () => {
  it('counts the stories that name the pet, its name and its favourite thing as whole words', () => {
    const stories = ['Tom the cat slept.', 'The cats played with a hat.', 'Tommy hates cake.', 'A category of Tom.'];
    expect(childMentionRates(stories, tom)).toEqual({ pet: 0.5, name: 0.5, favourite: 0.25 });
    expect(childMentionRates([], tom)).toEqual({ pet: 0, name: 0, favourite: 0 });
    // Names are read as the rules read them: capitalised.
    expect(childMentionRates(['tom was here'], tom).name).toBe(0);
  });
});
