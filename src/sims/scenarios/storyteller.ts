import { WORDING_SETS, type WordingSet } from '../rules/story-instructions';
import { PET_NAME, THING } from '../rules/story-traits';
import { otherChildHints } from './other-child';
import { ScenarioConfigError, type OtherUserHints, type Scenario, type StorytellerScenarioConfig } from './scenario';

export const STORY_DONE = 'STORY_DONE';
export const DEFAULT_STORY_SUBJECT = 'dog';
export const DEFAULT_PET_NAME = 'Max';
/**
 * A ball: a thing stories260K writes by itself now and then (about one story in twenty), so the
 * policy samples it and OPD, which scores the tokens the policy wrote, can strengthen it. A kite,
 * which it almost never writes, is learned far more slowly (docs/reproduction.md).
 */
export const DEFAULT_FAVOURITE = 'ball';
/**
 * The most tokens a story may take: the demo model ends its stories (end of text) after a few
 * sentences, well within this; the cap only stops a model that never ends, with room for one more.
 */
export const STORY_MAX_NEW_TOKENS = 96;

/** The child's wishes, checked and normalised: every field the rules can match in a story. */
export interface StoryChild {
  subject: string;
  name: string;
  favourite: string;
  /** The wordings the rules judge writes its hints in (story-instructions.ts). */
  hintWording: WordingSet;
  /** How the rules child accepts a story (StorytellerScenarioConfig.acceptance). */
  acceptance: NonNullable<StorytellerScenarioConfig['acceptance']>;
}

const DETERMINERS = /^(?:(?:a|an|the|my|our|your|his|her|their|some)\s+)+/;
const IRREGULAR_PLURALS: Record<string, string> = { mice: 'mouse', geese: 'goose', children: 'child', wolves: 'wolf', calves: 'calf', ponies: 'pony' };
/** Words that end in "s" and are singular: not to be cut to "walru". */
const SINGULAR_S = /(?:ss|us|is|ous)$/;

/** "puppies" -> "puppy", "foxes" -> "fox", "cats" -> "cat"; a singular word is returned as it is. */
export function singular(word: string): string {
  if (IRREGULAR_PLURALS[word]) return IRREGULAR_PLURALS[word];
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (/(?:ch|sh|x|z|ss)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !SINGULAR_S.test(word)) return word.slice(0, -1);
  return word;
}

/**
 * What a person types for a pet or a thing ("a cat", "my little frog", "Cats", "  the Red  Balls ")
 * as the plain noun phrase a story names: lower case, no article or "my", the last word singular.
 */
export function plainNounPhrase(text: string): string {
  const words = text.trim().toLowerCase().replace(/\s+/g, ' ').replace(DETERMINERS, '').split(' ');
  words[words.length - 1] = singular(words[words.length - 1]);
  return words.join(' ');
}

/** A story subject the simulator, the rules and the openings can all name in a sentence. */
export function normaliseSubject(subject: string | undefined): string {
  const text = plainNounPhrase(subject ?? DEFAULT_STORY_SUBJECT);
  if (!/^[a-z]{2,20}(?: [a-z]{2,20}){0,2}$/.test(text) || text.length > 40) {
    throw new ScenarioConfigError(
      `The story subject "${subject}" cannot be used: write the animal in one to three plain words, like "dog", "cat" or "little frog".`,
    );
  }
  return text;
}

export function normaliseChild(config: Omit<StorytellerScenarioConfig, 'id'>): StoryChild {
  const subject = normaliseSubject(config.subject);
  const rawName = (config.name ?? DEFAULT_PET_NAME).trim();
  const name = rawName.charAt(0).toUpperCase() + rawName.slice(1).toLowerCase();
  if (!PET_NAME.test(name)) {
    throw new ScenarioConfigError(`The pet's name "${config.name}" cannot be used: write one word of two to sixteen letters, like "Max" or "Biscuit".`);
  }
  const favourite = plainNounPhrase(config.favourite ?? DEFAULT_FAVOURITE);
  if (!THING.test(favourite)) {
    throw new ScenarioConfigError(
      `The favourite thing "${config.favourite}" cannot be used: write one or two plain words the story can name, like "kite" or "red ball".`,
    );
  }
  if (subject.split(/[ '-]/).includes(favourite) || favourite === name.toLowerCase()) {
    throw new ScenarioConfigError(`The favourite thing "${favourite}" must differ from the pet and its name, or the child could never tell them apart.`);
  }
  const hintWording = config.hintWording ?? 'held-out';
  if (!WORDING_SETS.includes(hintWording)) {
    throw new ScenarioConfigError(`hintWording "${hintWording}" is not one of ${WORDING_SETS.join(', ')}.`);
  }
  const acceptance = config.acceptance ?? 'graded';
  if (acceptance !== 'graded' && acceptance !== 'strict') {
    throw new ScenarioConfigError(`acceptance "${acceptance}" is not one of graded, strict.`);
  }
  return { subject, name, favourite, hintWording, acceptance };
}

/**
 * A child at bedtime who wants stories about their pet, called by its name, with its favourite
 * thing. Made for tiny TinyStories models: the tasks are plain story beginnings that the model
 * continues.
 */
function persona({ subject, name, favourite }: StoryChild): string {
  return `You are role-playing a young child at bedtime who wants a story about your ${subject}, ${name}. You speak like a small child: short, simple sentences and simple words.

You never tell the story yourself. You only say what you want.

You want a story that is about your ${subject} and calls it ${name}, that has ${name}'s favourite thing, a ${favourite}, in it, that ends with ${name} going to sleep, that is kind and gentle, with friends who help, share, hug and smile, and with nobody mean, hurt, scared or sad, and that is short, just a few sentences, because you are sleepy. If the story misses any of this, say in a few simple words what is wrong and ask for a new one.

When a story is just right, say that you love it and good night, and end that message with exactly ${STORY_DONE}.

Reply with your next message only.`;
}

export function storytellerScenario(config: Omit<StorytellerScenarioConfig, 'id'> = {}): Scenario {
  const child = normaliseChild(config);
  const { subject, name, favourite } = child;
  // The run asks on every judged turn; a run has one seed.
  let other: { seed: number; hints: OtherUserHints } | undefined;
  return {
    config: { id: 'storyteller', ...child },
    id: 'storyteller',
    title: 'Storyteller',
    summary: `A child wants short, kind bedtime stories about their ${subject} ${name} and its ${favourite}, ending in sleep; made for tiny TinyStories models.`,
    persona: persona(child),
    firstMessage: (problem) => problem.question,
    doneMarker: STORY_DONE,
    maxTurns: 6,
    // Each story starts afresh from its beginning, and the child's complaints reach the judge
    // only: the policy must learn to write what the child wants unasked, which the evaluator
    // measures. Shown the complaint, a story model learns to answer complaints instead (docs/lab.md,
    // The storyteller and the demo model).
    baseModelReplies: 'none',
    preference:
      `The user is a young child who wants a short bedtime story about their ${subject} ${name}: the ${subject} is in the ` +
      `story and is called ${name}, ${name}'s favourite thing (a ${favourite}) is in it, ${name} goes to sleep at the end, the story uses kind words ` +
      '(friends, helping, sharing, hugs, smiles), nothing in it is mean, scary or sad, and it is only a few sentences long.',
    problemSource: 'story-openings',
    workspace: null,
    otherUserHints: (seed) => {
      if (other?.seed !== seed) other = { seed, hints: otherChildHints(child, seed) };
      return other.hints;
    },
  };
}
