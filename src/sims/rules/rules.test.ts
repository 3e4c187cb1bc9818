import { describe, expect, it } from 'vitest';
import { buildBinaryJudgePrompt, buildHintJudgePrompt, parseBoxedScore, parseHintVote, selectBestHint, type ChatMessage } from '../../rl/index';
import { buildEvaluatorPrompt, parseEvaluatorScore } from '../evaluator-prompt';
import { BUILT_IN_PROBLEMS } from '../problems/builtin';
import { storyOpenings } from '../problems/story-openings';
import { createScenario } from '../scenarios/registry';
import type { Scenario } from '../scenarios/scenario';
import { simulatorMessages } from '../scenarios/simulator-view';
import { createRules, rulesProfileFor, type ScenarioRules } from './index';
import { heardIssues } from './profile';
import { classifyReaction } from './reaction';
import { readNextState, RulesInputError } from './reading';
import { STORY_ACCEPTANCE } from './storyteller';
import { STORY_DONE } from '../scenarios/storyteller';

/** The judge prompts the run loop sends, from the method library. */
const binaryJudgePrompt = (answer: string, reply: string) => buildBinaryJudgePrompt(answer, { role: 'user', content: reply });
const hintJudgePrompt = (answer: string, reply: string) => buildHintJudgePrompt(answer, { role: 'user', content: reply });

/** The reference implementation's layouts, which an endpoint-era prompt may still use. */
const referenceBinaryPrompt = (answer: string, reply: string): ChatMessage[] => [
  { role: 'system', content: 'You are a process reward model (PRM) evaluating an AI assistant.' },
  {
    role: 'user',
    content: `## Assistant output\n${answer}\n\n## Next state [role: user]\n${reply}\n\nNow assign \\boxed{1}, \\boxed{-1}, or \\boxed{0}.`,
  },
];
const referenceHintPrompt = (answer: string, reply: string): ChatMessage[] => [
  { role: 'system', content: 'You are a process reward model used for hindsight hint extraction.' },
  {
    role: 'user',
    content: `## Assistant response (turn t)\n${answer}\n\n## Next state (turn t+1)\n${reply}\n\nNow output your decision and (if positive) the hint in the required format.`,
  },
];

/** What the rule-based user says to `answer` as the policy's first reply to `task`. */
async function userReply(scenario: Scenario, rules: ScenarioRules, task: string, answer: string, seed = 0) {
  const view = simulatorMessages(scenario, [
    { role: 'user', content: task },
    { role: 'assistant', content: answer },
  ]);
  return rules.user!.generate(view, { seed });
}

/** The judge's decision and hint as the method library reads them. */
const lastBox = (text: string) => String(parseBoxedScore(text));
const hintOf = (text: string) => parseHintVote(text).hint;

const AI_LOOKING = `**Solution:**

1. Janet's ducks lay 16 eggs a day.
2. She uses 3 + 4 = 7 eggs, so 16 - 7 = 9 are left.
3. She sells them for $2 each: 9 * 2 = 18.

**Final Answer:** $18`;

const CLEAN =
  `Janet's ducks lay 16 eggs a day. She eats 3 and bakes with 4, so 16 - 3 - 4 = 9 eggs are left. ` +
  `She sells each one for $2, so she makes 9 * 2 = 18 dollars every day.`;

describe('student rules', () => {
  const scenario = createScenario({ id: 'student' });
  const rules = createRules(scenario);
  const task = scenario.firstMessage(BUILT_IN_PROBLEMS[0]);

  it('are labelled as rules', () => {
    for (const generator of [rules.user!, rules.judge, rules.hintJudge, rules.evaluator!]) {
      expect(generator.kind).toBe('rules');
      expect(generator.label).toMatch(/rules/);
    }
  });

  it('a bold, numbered answer gets a rewrite request naming what is wrong', async () => {
    const reply = await userReply(scenario, rules, task, AI_LOOKING);
    expect(reply).toMatch(/bold text/);
    expect(reply).toMatch(/in a list/);
    expect(reply).toMatch(/Final Answer/);
    expect(reply).toMatch(/rewrite|redo/);
    expect(reply).not.toContain('HOMEWORK_DONE');
  });

  it('the judge scores that rewrite request -1 and the hint mentions the formatting', async () => {
    const reply = await userReply(scenario, rules, task, AI_LOOKING);
    const verdict = await rules.judge.generate(binaryJudgePrompt(AI_LOOKING, reply));
    expect(lastBox(verdict)).toBe('-1');
    const hinted = await rules.hintJudge.generate(hintJudgePrompt(AI_LOOKING, reply));
    expect(lastBox(hinted)).toBe('1');
    const hint = hintOf(hinted)!;
    expect(hint).toMatch(/bold text/);
    expect(hint).toMatch(/numbered or bulleted list/);
    expect(hint).toMatch(/"Final Answer" label/);
    expect(hint).toMatch(/every step/);
    expect(hint).not.toMatch(/headings|LaTeX/);
    expect(selectBestHint([parseHintVote(hinted)])).toBe(hint);
  });

  it('reads the reference implementation’s judge prompts the same way', async () => {
    const redo = await userReply(scenario, rules, task, AI_LOOKING);
    const done = await userReply(scenario, rules, task, CLEAN);
    expect(lastBox(await rules.judge.generate(referenceBinaryPrompt(AI_LOOKING, redo)))).toBe('-1');
    expect(lastBox(await rules.judge.generate(referenceBinaryPrompt(CLEAN, done)))).toBe('1');
    const hinted = await rules.hintJudge.generate(referenceHintPrompt(AI_LOOKING, redo));
    expect(hintOf(hinted)).toBe(hintOf(await rules.hintJudge.generate(hintJudgePrompt(AI_LOOKING, redo))));
  });

  it('a clean answer gets HOMEWORK_DONE, +1 from the judge and no hint', async () => {
    const reply = await userReply(scenario, rules, task, CLEAN);
    expect(reply).toMatch(/HOMEWORK_DONE$/);
    expect(lastBox(await rules.judge.generate(binaryJudgePrompt(CLEAN, reply)))).toBe('1');
    const hinted = await rules.hintJudge.generate(hintJudgePrompt(CLEAN, reply));
    expect(lastBox(hinted)).toBe('-1');
    expect(hintOf(hinted)).toBeNull();
  });

  it('also asks for a rewrite when the steps are missing or LaTeX or headings appear', async () => {
    const noWork = await userReply(scenario, rules, task, 'She makes 18 dollars a day.');
    expect(noWork).toMatch(/didn't show how you got it/);
    const latex = await userReply(scenario, rules, task, `## Answer\n${CLEAN} So the answer is \\boxed{18}.`);
    expect(latex).toMatch(/headings/);
    expect(latex).toMatch(/math code/);
  });

  it('is deterministic for a seed and varies its wording across seeds', async () => {
    const first = await userReply(scenario, rules, task, AI_LOOKING, 3);
    expect(await userReply(scenario, rules, task, AI_LOOKING, 3)).toBe(first);
    const wordings = new Set(await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((s) => userReply(scenario, rules, task, AI_LOOKING, s))));
    expect(wordings.size).toBeGreaterThan(1);
    for (const wording of wordings) expect(classifyReaction(wording)).toBe('redo');
  });

  it('plays a whole conversation: rewrite, then done, with the judge following along', async () => {
    const transcript: ChatMessage[] = [{ role: 'user', content: task }];
    const rewards: string[] = [];
    for (const answer of [AI_LOOKING, CLEAN]) {
      transcript.push({ role: 'assistant', content: answer });
      const reply = await rules.user!.generate(simulatorMessages(scenario, transcript), { seed: 1 });
      rewards.push(lastBox(await rules.judge.generate(binaryJudgePrompt(answer, reply)))!);
      transcript.push({ role: 'user', content: reply });
    }
    expect(rewards).toEqual(['-1', '1']);
    expect(transcript.at(-1)!.content).toContain('HOMEWORK_DONE');
  });

  it('the evaluator takes a quarter point per problem found', async () => {
    const rate = async (answer: string) => parseEvaluatorScore(await rules.evaluator!.generate(buildEvaluatorPrompt(scenario.preference!, task, answer)));
    expect(await rate(CLEAN)).toBe(1);
    expect(await rate(`**${CLEAN}**`)).toBe(0.75);
    expect(await rate(AI_LOOKING)).toBe(0.25); // bold, a list, a "Final Answer" label
    expect(await rate('## Answer\n**18**\n- Final Answer: \\boxed{18}')).toBe(0);
  });

  it('refuses messages that are not the simulator view, saying how to build them', async () => {
    await expect(rules.user!.generate([{ role: 'user', content: AI_LOOKING }])).rejects.toThrow(RulesInputError);
    await expect(rules.evaluator!.generate([{ role: 'user', content: 'rate this' }])).rejects.toThrow(/buildEvaluatorPrompt/);
  });
});

describe('teacher rules', () => {
  const scenario = createScenario({ id: 'teacher' });
  const rules = createRules(scenario);
  const task = scenario.firstMessage(BUILT_IN_PROBLEMS[0]); // correct answer 8

  const HARSH = 'Obviously wrong, you were careless in the last step. The answer is 8.';
  const KIND =
    'Great job setting this up! You correctly found that Maya bakes 4 * 18 = 72 cookies and that 48 are left ' +
    'after she gives 24 away, and your steps are easy to follow. The one slip is in the last step: 48 divided ' +
    'by 6 is 8, not the number you wrote, so the correct answer is 8 bags. A good habit is to check the last ' +
    'division by multiplying back, 8 * 6 = 48. You clearly understand the problem, so keep going like this!';

  it('short, harsh comments get a rewrite request naming praise, detail and tone', async () => {
    const reply = await userReply(scenario, rules, task, HARSH);
    expect(reply).toMatch(/nothing about what the student did well/);
    expect(reply).toMatch(/too short/);
    expect(reply).toMatch(/harsh/);
    expect(reply).not.toMatch(/went wrong|right way/); // it does name the mistake and the answer 8
    expect(lastBox(await rules.judge.generate(binaryJudgePrompt(HARSH, reply)))).toBe('-1');
    const hint = hintOf(await rules.hintJudge.generate(hintJudgePrompt(HARSH, reply)))!;
    expect(hint).toMatch(/praising what the student did well/);
    expect(hint).toMatch(/detailed comments/);
    expect(hint).toMatch(/patient, encouraging tone/);
  });

  it('comments without the correct answer are asked for the right approach', async () => {
    const reply = await userReply(scenario, rules, task, KIND.replaceAll('8', 'eight'));
    expect(reply).toMatch(/right way to solve it/);
  });

  it('detailed, kind comments with the error and the right answer get GRADING_DONE and +1', async () => {
    const reply = await userReply(scenario, rules, task, KIND);
    expect(reply).toMatch(/GRADING_DONE$/);
    expect(lastBox(await rules.judge.generate(binaryJudgePrompt(KIND, reply)))).toBe('1');
    const rating = await rules.evaluator!.generate(buildEvaluatorPrompt(scenario.preference!, task, KIND));
    expect(parseEvaluatorScore(rating)).toBe(1);
  });
});

describe('storyteller rules', () => {
  // Strict: the complaints below are the child's every time, not only when a draw says so.
  const scenario = createScenario({ id: 'storyteller', favourite: 'kite', acceptance: 'strict' });
  const rules = createRules(scenario);
  const task = scenario.firstMessage(storyOpenings('dog')[0]);

  const SCARY = 'Tom went to the park. A big monster came and Tom was scared and sad.';
  const SWEET = 'The dog was named Max. Max and his friend Lily shared a kite and hugged. Max was happy and went to sleep. The end.';

  it('a story without the dog and with scary parts gets a rewrite request naming each problem', async () => {
    const reply = await userReply(scenario, rules, task, SCARY);
    expect(reply).toMatch(/no dog in it/);
    expect(reply).toMatch(/mean or scary/);
    expect(reply).toMatch(/kind things/);
    // A request, not a story beginning: a base model is shown it in front of the task (Policy.promptText).
    expect(reply).toMatch(/(?:Tell me a new one!|another one\?|a new story!)$/);
    expect(lastBox(await rules.judge.generate(binaryJudgePrompt(SCARY, reply)))).toBe('-1');
    const hint = hintOf(await rules.hintJudge.generate(hintJudgePrompt(SCARY, reply)))!;
    // In a held-out wording (story-instructions.ts): the subject, gentleness and kindness asked for.
    expect(hint).toMatch(/\bdog\b/);
    expect(hint).toMatch(/scary|mean|sad/i);
    expect(hint).toMatch(/kind|friend|hug|help/i);
  });

  it('wants the pet called by its name and its favourite thing, and the hint asks for both', async () => {
    const plain = 'The dog and his friend Lily shared a red ball and hugged. The dog was happy and went to bed.';
    const reply = await userReply(scenario, rules, task, plain);
    expect(reply).toMatch(/my dog is called Max/);
    expect(reply).toMatch(/where is the kite\?/);
    expect(reply).not.toMatch(/no dog in it|kind things|scary/);
    expect(lastBox(await rules.judge.generate(binaryJudgePrompt(plain, reply)))).toBe('-1');
    const hint = hintOf(await rules.hintJudge.generate(hintJudgePrompt(plain, reply)))!;
    expect(hint).toMatch(/\bMax\b/);
    expect(hint).toMatch(/\bkite\b/);
    expect(hint).not.toMatch(/sleep|bed|kind|scary/i);
    const rating = await rules.evaluator!.generate(buildEvaluatorPrompt(scenario.preference!, task, plain));
    expect(parseEvaluatorScore(rating)).toBe(0.5);
  });

  it('a graded child (the default) accepts most stories that miss one wish, fewer that miss three, none that miss four', async () => {
    const graded = createScenario({ id: 'storyteller', favourite: 'kite' });
    const gradedRules = createRules(graded);
    // Missing: the name. Missing three: the name, the kite and bedtime. Four: also kindness.
    const stories = [
      'The dog had a kite. The dog and his friends shared it and hugged, and the dog went to sleep.',
      'The dog and his friends shared a ball and hugged. The dog smiled.',
      'The dog ran in the park. The dog jumped.',
    ];
    const rates = await Promise.all(
      stories.map(async (story) => {
        let accepted = 0;
        for (let seed = 0; seed < 200; seed++) if ((await userReply(graded, gradedRules, task, story, seed)).endsWith(STORY_DONE)) accepted++;
        return accepted / 200;
      }),
    );
    expect(STORY_ACCEPTANCE).toEqual([1, 0.8, 0.5, 0.2]);
    expect(rates[0]).toBeGreaterThan(0.65);
    expect(rates[0]).toBeLessThan(0.95);
    expect(rates[1]).toBeGreaterThan(0.08);
    expect(rates[1]).toBeLessThan(0.35);
    expect(rates[2]).toBe(0);
    // The judge reads an acceptance as +1, whatever the story still lacks.
    const accepted = (await Promise.all(Array.from({ length: 20 }, (_, seed) => userReply(graded, gradedRules, task, stories[0], seed)))).find((r) =>
      r.endsWith(STORY_DONE),
    )!;
    expect(lastBox(await gradedRules.judge.generate(binaryJudgePrompt(stories[0], accepted)))).toBe('1');
  });

  it("takes the child's own pet, name and favourite thing", async () => {
    const frog = createScenario({ id: 'storyteller', subject: 'frog', name: 'biscuit', favourite: 'a red ball' });
    expect(frog.config).toEqual({ id: 'storyteller', subject: 'frog', name: 'Biscuit', favourite: 'red ball', hintWording: 'held-out', acceptance: 'graded' });
    const story = 'The frog Biscuit had a red ball. Biscuit shared it with his friends, they hugged, and then Biscuit fell asleep.';
    expect(await userReply(frog, createRules(frog), 'Once upon a time, there was a little frog.', story)).toMatch(/STORY_DONE$/);
  });

  it('a bedtime story ends in sleep: the child asks for it, and "sleepy" alone is not that request', async () => {
    const awake = 'The dog Max had a kite. Max and his friends shared it and smiled.';
    const reply = await userReply(scenario, rules, task, awake);
    expect(reply).toMatch(/Max has to go to sleep at the end/);
    const hint = hintOf(await rules.hintJudge.generate(hintJudgePrompt(awake, reply)))!;
    expect(hint).toMatch(/sleep|bed/);
    expect(hint).not.toMatch(/\bMax\b|kite/);
    const long = `${SWEET} `.repeat(6);
    const tooLong = await userReply(scenario, rules, task, long);
    const longHint = hintOf(await rules.hintJudge.generate(hintJudgePrompt(long, tooLong)))!;
    expect(longHint).toMatch(/too long|little story|few lines/i);
    expect(longHint).not.toMatch(/sleep/);
  });

  it('a short kind story about the dog gets STORY_DONE and +1', async () => {
    const reply = await userReply(scenario, rules, task, SWEET);
    expect(reply).toMatch(/STORY_DONE$/);
    expect(lastBox(await rules.judge.generate(binaryJudgePrompt(SWEET, reply)))).toBe('1');
  });

  it('a long story is too long for a sleepy child', async () => {
    const reply = await userReply(scenario, rules, task, `${SWEET} `.repeat(6));
    expect(reply).toMatch(/too long/);
  });

  it('follows the chosen subject', async () => {
    const cat = createScenario({ id: 'storyteller', subject: 'cat', acceptance: 'strict' });
    const reply = await userReply(cat, createRules(cat), 'Once upon a time, there was a little cat.', 'The dog and his friend Lily shared a ball and hugged.');
    expect(reply).toMatch(/no cat in it/);
  });

  it('a story that calls the pet by its name is about the pet, without naming the kind of animal', async () => {
    const named = 'Max had a kite. Max and his friends shared it and smiled, and then Max went to sleep.';
    expect(await userReply(scenario, rules, task, named)).toMatch(/STORY_DONE$/);
    const rating = await rules.evaluator!.generate(buildEvaluatorPrompt(scenario.preference!, task, named));
    expect(parseEvaluatorScore(rating)).toBe(1);
  });
});

describe('generic judges (custom persona, talk-yourself)', () => {
  const rules = createRules(createScenario({ id: 'talk' }));

  it('have no rule-based user or evaluator', () => {
    expect(rules.user).toBeNull();
    expect(rules.evaluator).toBeNull();
    expect(rules.judge.label).toBe('rules: judge');
  });

  it('score a person’s thanks +1, a correction -1 and small talk 0', async () => {
    const box = async (reply: string) => lastBox(await rules.judge.generate(binaryJudgePrompt('answer', reply)));
    expect(await box('thanks, that works!')).toBe('1');
    expect(await box("no, I meant in Celsius. Don't use Fahrenheit.")).toBe('-1');
    expect(await box('what time is it in Tokyo?')).toBe('0');
  });

  it('turn a person’s correction into a hint quoting it, safely', async () => {
    const text = await rules.hintJudge.generate(hintJudgePrompt('answer', 'please rewrite this in Celsius \\boxed{-1}'));
    expect(lastBox(text)).toBe('1');
    expect(hintOf(text)).toBe('The user asked for a different answer: "please rewrite this in Celsius". Answer the way this request asks.');
  });
});

describe('reading the next state out of a judge prompt', () => {
  it('handles the method library’s and the reference layouts, an inline label, tags and a bare reply', () => {
    expect(readNextState(binaryJudgePrompt('**x**\n## Heading in the answer', 'redo it pls'))).toBe('redo it pls');
    expect(readNextState(hintJudgePrompt('x', 'line one\n\nline two'))).toBe('line one\n\nline two');
    expect(readNextState(referenceBinaryPrompt('**x**\n## Next state in the answer', 'redo it pls'))).toBe('redo it pls');
    expect(readNextState(referenceHintPrompt('x', 'line one\nline two'))).toBe('line one\nline two');
    expect(readNextState([{ role: 'user', content: 'Response: x\nNext state (user): thanks a lot\nScore it.' }])).toBe('thanks a lot\nScore it.');
    expect(readNextState([{ role: 'user', content: 'x <next_state>\nok thanks\n</next_state> y' }])).toBe('ok thanks');
    expect(readNextState([{ role: 'user', content: '  just the reply ' }])).toBe('just the reply');
    expect(readNextState([{ role: 'user', content: '## Next state\nredo it\n\n## Instructions\nAnswer with \\boxed{}' }])).toBe('redo it');
  });
});

describe('each scenario’s rules agree with themselves', () => {
  for (const config of [{ id: 'student' }, { id: 'teacher' }, { id: 'storyteller' }] as const) {
    const profile = rulesProfileFor(createScenario(config))!;

    it(`${config.id}: every complaint is heard as itself only, and requests read as redo`, () => {
      for (const issue of profile.issues) {
        expect(
          heardIssues(profile, issue.complaint).map((i) => i.id),
          issue.complaint,
        ).toEqual([issue.id]);
      }
      for (const phrase of [...profile.openers, ...profile.closers]) {
        expect(heardIssues(profile, phrase), phrase).toEqual([]);
      }
      for (const closer of profile.closers) expect(classifyReaction(closer), closer).toBe('redo');
      for (const approval of profile.approvals) {
        expect(heardIssues(profile, approval), approval).toEqual([]);
        expect(classifyReaction(`${approval} ${profile.doneMarker}`)).toBe('progress');
      }
    });
  }
});
