import { STORY_DONE, type StoryChild } from '../scenarios/storyteller';
import { mulberry32 } from '../../gpu/random';
import type { Issue, RulesProfile } from './profile';
import { instructionFor, type StoryWish, type Trait } from './story-instructions';
import { hasKindWords, hasUnkindWords, isShortStory, mentionsBedtime, mentionsName, mentionsNoun } from './story-traits';

/**
 * The child's rules for stories about their pet: the pet, called by its name, with its favourite
 * thing, going to sleep at the end (it is a bedtime story), kind, gentle and short. The name and the favourite thing are the child's own, so a story
 * model meets them only through a hint: that is what leaves the run something to learn.
 */
export function storytellerRules(child: StoryChild): RulesProfile {
  const { subject, name, favourite, hintWording } = child;
  const issues: readonly Issue[] = [
    {
      id: 'no-subject',
      // A story that calls the pet by its name is about the pet: "Max ran" needs no "dog".
      present: (answer) => !mentionsNoun(answer, subject) && !mentionsName(answer, name),
      complaint: `there's no ${subject} in it`,
      heard: new RegExp(`no ${subject}|about (?:my|the|a) ${subject}\\b|where(?:'s| is) (?:my|the) ${subject}`, 'i'),
      fix: `make the story about the ${subject}`,
      label: `no ${subject}`,
    },
    {
      id: 'no-name',
      present: (answer) => !mentionsName(answer, name),
      complaint: `my ${subject} is called ${name}`,
      heard: new RegExp(`\\b(?:called|named?|name is|call (?:him|her|it|the \\w+)) ${name}\\b|\\bmy \\w+ ${name}\\b`, 'i'),
      fix: `call the ${subject} ${name}`,
      label: `no ${name}`,
    },
    {
      id: 'no-favourite',
      present: (answer) => !mentionsNoun(answer, favourite),
      complaint: `where is the ${favourite}? I love ${favourite}s`,
      heard: new RegExp(`\\b${favourite}`, 'i'),
      fix: `put a ${favourite} in the story`,
      label: `no ${favourite}`,
    },
    {
      id: 'no-bedtime',
      present: (answer) => !mentionsBedtime(answer),
      complaint: `${name} has to go to sleep at the end`,
      heard: /\b(?:go(?:es|ing)?|went) to (?:sleep|bed)\b|\bfall(?:s|ing)? asleep\b/i,
      fix: `let the story end with the ${subject} going to sleep`,
      label: 'no going to sleep',
    },
    {
      id: 'no-kindness',
      present: (answer) => !hasKindWords(answer),
      complaint: 'it needs kind things like friends and hugs',
      heard: /\bkind\b|\bhugs?\b|\bfriends\b/i,
      fix: 'use kind words, with friends who help, share, hug and smile',
      label: 'no kind words',
    },
    {
      id: 'unkind',
      present: (answer) => hasUnkindWords(answer),
      complaint: 'some parts are mean or scary',
      heard: /\bmean\b|scary|scared|\bsad\b/i,
      fix: 'keep it gentle, with nobody mean, hurt, scared or sad',
      label: 'mean or scary parts',
    },
    {
      id: 'too-long',
      present: (answer) => !isShortStory(answer),
      complaint: "it's too long and I'm sleepy",
      heard: /too long|\bshorter\b|sleepy/i,
      fix: 'keep it short, about five simple sentences',
      label: 'too long',
    },
  ];
  return {
    name: 'storyteller',
    doneMarker: STORY_DONE,
    issues,
    openers: ['Hmm,', 'No no,', 'Um,'],
    closers: ['Tell me a new one!', 'Can you tell me another one?', 'I want a new story!'],
    approvals: ['I love it! Good night!', 'Yay, I love that story! Good night!'],
    ...(child.acceptance === 'graded' ? { acceptance: STORY_ACCEPTANCE } : {}),
    hint: (heard, seed) => {
      const wanted = new Set(heard.map((i) => ISSUE_TRAITS[i.id]));
      const wish: StoryWish = {
        subject,
        name: wanted.has('name') ? name : undefined,
        favourite: wanted.has('favourite') ? favourite : undefined,
        bedtime: wanted.has('bedtime'),
        kind: wanted.has('kind'),
        gentle: wanted.has('gentle'),
        short: wanted.has('short'),
      };
      return instructionFor(wish, mulberry32(seed), hintWording, wanted.has('subject'));
    },
  };
}

/**
 * The child accepts a story that meets most of their seven wishes, the more readily the more it
 * meets: every one (certain), all but one, two or three. A story missing four or more is never
 * accepted. This gives the binary judge approvals to read long before the stories are perfect.
 */
export const STORY_ACCEPTANCE: readonly number[] = [1, 0.8, 0.5, 0.2];

/** The instruction trait that answers each of the child's complaints. */
const ISSUE_TRAITS: Record<string, Trait> = {
  'no-subject': 'subject',
  'no-name': 'name',
  'no-favourite': 'favourite',
  'no-bedtime': 'bedtime',
  'no-kindness': 'kind',
  unkind: 'gentle',
  'too-long': 'short',
};
