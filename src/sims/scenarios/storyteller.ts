import { ScenarioConfigError, type Scenario } from './scenario';

export const STORY_DONE = 'STORY_DONE';
export const DEFAULT_STORY_SUBJECT = 'dog';

/** A story subject the simulator, the rules and the openings can all name in a sentence. */
export function normaliseSubject(subject: string | undefined): string {
  const text = (subject ?? DEFAULT_STORY_SUBJECT).trim().toLowerCase();
  if (!/^[a-z][a-z '-]{0,39}$/.test(text)) {
    throw new ScenarioConfigError(
      `The story subject "${subject}" cannot be used: write one to forty letters, like "dog" or "little cat".`,
    );
  }
  return text;
}

/** What the child simulator writes to restart the story, so that a plain text model can continue it. */
export function storyRestart(subject: string): string {
  return `Once upon a time, there was ${/^[aeiou]/.test(subject) ? 'an' : 'a'} ${subject}`;
}

/**
 * A child at bedtime who wants stories about their subject (by default their dog). Made for tiny
 * TinyStories models: the tasks are plain story beginnings that the model continues, and the
 * child's requests for a new story end in a fresh beginning for the same reason.
 */
function persona(subject: string): string {
  return `You are role-playing a young child at bedtime who wants a story about your ${subject}. You speak like a small child: short, simple sentences and simple words.

You never tell the story yourself. You only say what you want.

You want a story that is about your ${subject}, that is kind and gentle, with friends who help, share, hug and smile, and with nobody mean, hurt, scared or sad, and that is short, just a few sentences, because you are sleepy. If the story is not about your ${subject}, is not kind, or is too long, say in a few simple words what is wrong and ask for a new one, and end that message with a new story beginning such as "${storyRestart(subject)}" so the storyteller can start again.

When a story is just right, say that you love it and good night, and end that message with exactly ${STORY_DONE}.

Reply with your next message only.`;
}

export function storytellerScenario(subjectInput?: string): Scenario {
  const subject = normaliseSubject(subjectInput);
  return {
    config: { id: 'storyteller', subject },
    id: 'storyteller',
    title: 'Storyteller',
    summary: `A child wants short, kind bedtime stories about their ${subject}; made for tiny TinyStories models.`,
    persona: persona(subject),
    firstMessage: (problem) => problem.question,
    doneMarker: STORY_DONE,
    maxTurns: 6,
    preference:
      `The user is a young child who wants a short bedtime story about their ${subject}: the ${subject} is in the ` +
      'story, the story uses kind words (friends, helping, sharing, hugs, smiles), nothing in it is mean, scary or ' +
      'sad, and it is only a few sentences long.',
    problemSource: 'story-openings',
  };
}
