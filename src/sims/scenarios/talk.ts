import type { Scenario } from './scenario';

/** No simulator: the person at the keyboard is the user, and the judge reads their replies. */
export function talkScenario(): Scenario {
  return {
    config: { id: 'talk' },
    id: 'talk',
    title: 'Talk yourself',
    summary: 'You are the user: chat with the policy and it learns from your replies.',
    persona: null,
    firstMessage: (problem) => problem.question,
    doneMarker: null,
    maxTurns: null,
    baseModelReplies: 'latest',
    preference: null,
    problemSource: 'none',
    workspace: null,
  };
}
