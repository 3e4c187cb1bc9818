/**
 * What the rules judge reads as a change request. People word a correction in many ways ("It
 * should be about my cat Biscuit, not a boy."), and each is the -1 of the reference's judge and a
 * hint quoting the request. Widening that must leave the simulated users' own messages judged
 * exactly as before: the storyteller's committed reproduction results come from them.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { quotedRequest } from '../../rl/hints';
import { buildBinaryJudgePrompt, buildHintJudgePrompt, parseBoxedScore, parseHintVote, type ChatMessage } from '../../rl/index';
import { createScenario } from '../scenarios/registry';
import type { ScenarioConfig } from '../scenarios/scenario';
import { simulatorMessages } from '../scenarios/simulator-view';
import { rulesProfileFor } from './index';
import { RulesJudge } from './judge';
import type { RulesProfile } from './profile';
import { classifyReaction } from './reaction';
import { RulesUser } from './user';

const ANSWER = 'Once upon a time, there was a little boy named Tim. He played in the park all day.';

async function judged(judge: RulesJudge, reply: string, seed = 0): Promise<string> {
  const next: ChatMessage = { role: 'user', content: reply };
  const prompt = judge.label.includes('hint') ? buildHintJudgePrompt(ANSWER, next) : buildBinaryJudgePrompt(ANSWER, next);
  return judge.generate(prompt, { seed });
}

describe('change requests as people type them', () => {
  // Talk yourself and the lab's first users: corrections that point back at the answer.
  it.each([
    'It should be about my cat Biscuit, not a boy.',
    'it should be a cat',
    'The cat should be called Biscuit.',
    'This is supposed to be about my cat.',
    'I wanted a story about my cat.',
    'I asked for a cat, not a boy',
    'I meant my cat Biscuit.',
    'You forgot the cat!',
    'you left out Biscuit',
    'Biscuit is missing from the story.',
    'a cat, not a boy',
    'about a cat rather than a boy please',
    'Can you put my cat in the story?',
    'please add Biscuit to it',
    'her name is Biscuit',
    'That is not right.',
    "that's not it",
    'less scary please',
    'more funny, please',
    'Write it about my cat.',
    'tell it again with a cat',
    'Could it be about a cat?',
    'Can the story be about my cat?',
  ])('"%s" is a correction: -1, and its hint quotes it', async (reply) => {
    expect(classifyReaction(reply)).toBe('redo');
    expect(parseBoxedScore(await judged(new RulesJudge('binary'), reply))).toBe(-1);
    const vote = parseHintVote(await judged(new RulesJudge('hint'), reply));
    expect(vote.score).toBe(1);
    expect(vote.hint).toBe(quotedRequest(reply));
  });

  // Not every reply that mentions "should" or "not" points back at the answer.
  it.each([
    'What should I name my cat?',
    'Can you write me a poem about the sea?',
    'Tell me about cats.',
    'Do you like cats?',
    'Where do cats sleep?',
    'Is it raining where you are?',
  ])('"%s" is not one: an unrelated question stays ambiguous', (reply) => {
    expect(classifyReaction(reply)).toBe('unclear');
  });

  it.each(['Not bad at all, thanks!', 'nice, I love it', 'That is right, thank you.', "Perfect, that's it!"])('"%s" stays progress', (reply) => {
    expect(classifyReaction(reply)).toBe('progress');
  });
});

/**
 * Every message a rule-based user writes: for each set of its issues an answer could have (in
 * the profile's order, as the user lists them) and a range of seeds (its openers, closers and
 * approvals), what RulesUser itself says, with the issues decided by the set rather than a story.
 */
async function usersMessages(profile: RulesProfile, scenario: ReturnType<typeof createScenario>): Promise<string[]> {
  const out: string[] = [];
  const n = profile.issues.length;
  for (let mask = 0; mask < 1 << n; mask++) {
    const forced: RulesProfile = {
      ...profile,
      // Strict acceptance: an answer with any issue gets a complaint, one with none an approval.
      acceptance: undefined,
      issues: profile.issues.map((issue, i) => ({ ...issue, present: () => (mask & (1 << i)) !== 0 })),
    };
    const user = new RulesUser(forced);
    const view = simulatorMessages(scenario, [
      { role: 'user', content: 'Tell me a story.' },
      { role: 'assistant', content: ANSWER },
    ]);
    for (let seed = 0; seed < 6; seed++) out.push(await user.generate(view, { seed }));
  }
  return [...new Set(out)];
}

/** The rules judges' every answer to every message of a scenario's rule-based user, hashed. */
async function judgedDigest(config: ScenarioConfig): Promise<{ digest: string; messages: string[]; binary: number[] }> {
  const scenario = createScenario(config);
  const profile = rulesProfileFor(scenario)!;
  const messages = await usersMessages(profile, scenario);
  const binaryJudge = new RulesJudge('binary', profile);
  const hintJudge = new RulesJudge('hint', profile);
  const hash = createHash('sha256');
  const binary: number[] = [];
  for (const m of messages) {
    const b = await judged(binaryJudge, m);
    binary.push(parseBoxedScore(b)!);
    hash.update(b).update('\u0000');
    for (const seed of [0, 1, 2]) hash.update(await judged(hintJudge, m, seed)).update('\u0000');
  }
  return { digest: hash.digest('hex'), messages, binary };
}

describe("the simulated users' own messages", () => {
  // Digests of the judges' outputs on this build's users and judges with the narrower recognition
  // (reaction.ts as it was before the widening): the same text, vote for vote and hint for hint,
  // so the committed reproduction results stand.
  it.each([
    [{ id: 'storyteller' }, '2886d7c2e31700169caf5fb84d8ef2c285a2dc09d93fad44e0686455960fa244'],
    [{ id: 'storyteller', subject: 'cat', name: 'Biscuit', favourite: 'kite' }, '3198b73782cb31b1d5fdf6bf876ea4b6ed11539defae56e99c27500071ca4259'],
    [{ id: 'student' }, '5aa993efb94c33baafe10fd2ee1f346d496af17185bc739ac2171e0f825f4d30'],
    [{ id: 'teacher' }, 'ed87649623155b3451a52269297957b0772f61069fee552fb8b782409d86e6db'],
  ] as [ScenarioConfig, string][])('are judged as before: %o', async (config, digest) => {
    const { digest: got, messages, binary } = await judgedDigest(config);
    const done = rulesProfileFor(createScenario(config))!.doneMarker;
    // Approvals are progress, complaints corrections, as the scenario's users mean them.
    expect(binary).toEqual(messages.map((m) => (m.includes(done) ? 1 : -1)));
    expect(got).toBe(digest);
  });
});
