import { STORY_DONE, storyRestart } from '../scenarios/storyteller';
import { escapeRegExp, wordCount, type Issue, type RulesProfile } from './profile';

const KIND = /\b(?:kind|friends?|love[sd]?|hug(?:s|ged)?|shared?|sharing|help(?:ed|s)?|smiled?|smiles|gentle|nice|happy|cared?|cares)\b/i;
const UNKIND = /\b(?:mean|angry|hit|hurt|scared|scary|cry|cried|sad|hated?|hates|yell(?:ed)?|fight|monster|bad)\b/i;
const MAX_WORDS = 100;

/** The child's rules for stories about `subject` (already normalised, e.g. "dog"). */
export function storytellerRules(subject: string): RulesProfile {
  const name = escapeRegExp(subject);
  const issues: readonly Issue[] = [
    {
      id: 'no-subject',
      present: (answer) => !new RegExp(`\\b${name}(?:s|es)?\\b`, 'i').test(answer),
      complaint: `there's no ${subject} in it`,
      heard: new RegExp(`no ${name}|about (?:my|the|a) ${name}|where(?:'s| is) (?:my|the) ${name}`, 'i'),
      fix: `make the story about the ${subject} and name the ${subject} in it`,
      label: `no ${subject}`,
    },
    {
      id: 'no-kindness',
      present: (answer) => !KIND.test(answer),
      complaint: 'it needs kind things like friends and hugs',
      heard: /\bkind\b|\bhugs?\b|\bfriends\b/i,
      fix: 'use kind words, with friends who help, share, hug and smile',
      label: 'no kind words',
    },
    {
      id: 'unkind',
      present: (answer) => UNKIND.test(answer),
      complaint: 'some parts are mean or scary',
      heard: /\bmean\b|scary|scared|\bsad\b/i,
      fix: 'keep it gentle, with nobody mean, hurt, scared or sad',
      label: 'mean or scary parts',
    },
    {
      id: 'too-long',
      present: (answer) => wordCount(answer) > MAX_WORDS,
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
    restart: storyRestart(subject),
    hintLead: `The child wants a bedtime story about their ${subject}:`,
    hintTail: '',
  };
}
