/**
 * The rules users, judges and evaluator of the homework workspace: the student and the teacher
 * ask, in a message of their own, for the approved answer to be appended to the file and end only
 * once the AI says it is saved; the teacher asks for mistakes only where there are any; a tool
 * result is judged by the reference's tool rules.
 */
import { describe, expect, it } from 'vitest';
import { buildBinaryJudgePrompt, buildHintJudgePrompt } from '../../rl/judge';
import type { ChatMessage } from '../../rl/messages';
import { parseBoxedScore } from '../../rl/boxed';
import { parseHintVote } from '../../rl/hints';
import { buildEvaluatorPrompt, parseEvaluatorScore } from '../evaluator-prompt';
import type { Problem } from '../problems/problem';
import { createScenario } from '../scenarios/registry';
import type { HomeworkPhase } from '../scenarios/scenario';
import { simulatorMessages } from '../scenarios/simulator-view';
import { studentWorkWithSlip } from '../scenarios/student-work';
import { createRules } from './index';
import { RulesInputError } from './reading';
import { studentIsRight } from './teacher';

const teacherScenario = createScenario({ id: 'teacher', homework: 'workspace' });
const rules = createRules(teacherScenario);
const [studentPhase, teacherPhase] = teacherScenario.workspace!.phases;
const problem: Problem = {
  id: 'ducks',
  question: "Janet's ducks lay 16 eggs a day. She eats 3 and bakes with 4, and sells the rest for $2 each. How much does she make a day?",
  answer: 'She sells 16 - 3 - 4 = <<16-3-4=9>>9 eggs.\nShe makes 9 * 2 = <<9*2=18>>18 dollars.\n#### 18',
};
const PATH = 'homework/5.txt';

const CLEAN = 'Janet has 16 eggs. She eats 3 and bakes with 4, so 16 - 3 - 4 = 9 are left, and 9 * 2 = 18 dollars a day.';
const GOOD_COMMENTS =
  'Great job setting up the problem, you did well to start from the 16 eggs and take away the ones Janet eats and bakes with. ' +
  'Your subtraction 16 - 3 - 4 = 9 is right, and multiplying the 9 eggs by 2 dollars gives 18 dollars, which is the correct answer. ' +
  'Your steps are clear and easy to follow, and each line explains what it does. Keep writing out every step like this, it makes your ' +
  'thinking easy to check, and keep up the careful work on the next problems too.';

/** A conversation of one phase: the first message, then (answer, user reply) pairs, ending on an answer. */
function view(phase: HomeworkPhase, answers: string[], replies: string[]): ChatMessage[] {
  const transcript: ChatMessage[] = [{ role: 'user', content: phase.firstMessage(problem, PATH) }];
  answers.forEach((a, i) => {
    transcript.push({ role: 'assistant', content: a });
    if (i < replies.length) transcript.push({ role: 'user', content: replies[i] });
  });
  return simulatorMessages(phase, transcript);
}

const say = (phase: HomeworkPhase, answers: string[], replies: string[] = [], seed = 0) => rules.user!.generate(view(phase, answers, replies), { seed });
const binary = async (next: ChatMessage) => parseBoxedScore(await rules.judge.generate(buildBinaryJudgePrompt('answer', next)));

describe('the rules student in the workspace', () => {
  it('asks for a rewrite of an AI-looking answer, without mentioning the file', async () => {
    const reply = await say(studentPhase, ['**Final Answer:** 18']);
    expect(reply).toMatch(/rewrite|redo/);
    expect(reply).not.toContain(PATH);
    expect(await binary({ role: 'user', content: reply })).toBe(-1);
  });

  it('approves a clean answer by asking, in a message of its own, to append it to the file; the judge reads that as progress', async () => {
    for (const seed of [0, 1, 2, 3]) {
      const reply = await say(studentPhase, [CLEAN], [], seed);
      expect(reply).toContain(`to the end of ${PATH}`);
      expect(reply).not.toContain('HOMEWORK_DONE');
      expect(await binary({ role: 'user', content: reply })).toBe(1);
    }
  });

  it('ends with HOMEWORK_DONE once the AI says it saved the answer, and asks again while it does not', async () => {
    const request = await say(studentPhase, [CLEAN]);
    const done = await say(studentPhase, [CLEAN, 'Done, I appended the solution to the end of homework/5.txt.'], [request]);
    expect(done).toMatch(/HOMEWORK_DONE$/);
    const again = await say(studentPhase, [CLEAN, CLEAN], [request]);
    expect(again).toMatch(/try again/);
    expect(again).toContain(PATH);
    expect(again).not.toContain('HOMEWORK_DONE');
    expect(await binary({ role: 'user', content: again })).toBe(-1);
  });

  it('never sees the tool calls or their results, only the replies', () => {
    const messages = simulatorMessages(studentPhase, [
      { role: 'system', content: 'You have a workspace.' },
      { role: 'user', content: 'read it' },
      { role: 'assistant', content: '<tool_call>{"name": "read", "arguments": {"path": "homework/5.txt"}}</tool_call>' },
      { role: 'tool', content: 'Problem:\n...' },
      { role: 'assistant', content: CLEAN },
    ]);
    expect(messages.map((m) => m.role)).toEqual(['system', 'assistant', 'user']);
    expect(messages[2].content).toContain(CLEAN);
  });
});

describe('the rules teacher in the workspace', () => {
  it('is the phase its persona names: the same user plays the student, then the teacher', async () => {
    const approval = await say(teacherPhase, [GOOD_COMMENTS]);
    expect(approval).toMatch(/(?:append|add) the comments to the end of homework\/5\.txt/);
    expect(await say(teacherPhase, [GOOD_COMMENTS, 'Saved: I appended the comments.'], [approval])).toMatch(/GRADING_DONE$/);
    await expect(rules.user!.generate([{ role: 'system', content: 'someone else' }, ...view(teacherPhase, ['x'], []).slice(1)])).rejects.toThrow(
      RulesInputError,
    );
  });

  it('asks for the mistake only when it sees one: none for a right solution, one for a wrong one, and none it cannot see', async () => {
    const chat = createScenario({ id: 'teacher' });
    const chatRules = createRules(chat);
    const reply = (studentWork: string) =>
      chatRules.user!.generate(
        simulatorMessages(chat, [
          { role: 'user', content: chat.firstMessage({ ...problem, studentWork }) },
          { role: 'assistant', content: GOOD_COMMENTS },
        ]),
      );
    const right = 'She has 16 - 3 - 4 = 9 eggs and sells them for 9 * 2 = 18 dollars.';
    const wrong = studentWorkWithSlip(problem).text;
    expect(studentIsRight(chat.firstMessage({ ...problem, studentWork: right }))).toBe(true);
    expect(studentIsRight(chat.firstMessage({ ...problem, studentWork: wrong }))).toBe(false);
    expect(studentIsRight(teacherPhase.firstMessage(problem, PATH))).toBeNull();
    expect(await reply(right)).toMatch(/GRADING_DONE$/);
    expect(await reply(wrong)).toMatch(/where exactly they went wrong/);
    // In the workspace the work is in a file the teacher never reads, as in the reference.
    expect(await say(teacherPhase, [GOOD_COMMENTS])).not.toMatch(/went wrong/);
    // The evaluator scores by the same rules.
    const score = async (task: string) => parseEvaluatorScore(await chatRules.evaluator!.generate(buildEvaluatorPrompt(chat.preference!, task, GOOD_COMMENTS)));
    expect(await score(chat.firstMessage({ ...problem, studentWork: right }))).toBe(1);
    expect(await score(chat.firstMessage({ ...problem, studentWork: wrong }))).toBe(0.75);
  });
});

describe('the rules judges on workspace tool results', () => {
  it('score a successful result +1 with no hint, even when the file it read says "error", and an error -1 with a hint', async () => {
    const file = { role: 'tool' as const, content: 'Problem:\nQ\n\nSolution:\n16 - 7 = 9\nTeacher: there is an error in the last step.' };
    expect(await binary(file)).toBe(1);
    expect(await binary({ role: 'tool', content: 'Appended 40 characters to the end of homework/5.txt. It now holds 90 characters.' })).toBe(1);
    expect(await binary({ role: 'tool', content: 'Error: homework/9.txt does not exist. The workspace holds homework/5.txt.' })).toBe(-1);
    // A successful tool result is no hindsight, as the reference's hint-judge prompt says.
    expect(parseHintVote(await rules.hintJudge.generate(buildHintJudgePrompt('answer', file)))).toEqual({ score: -1, hint: null });
    const failed = parseHintVote(
      await rules.hintJudge.generate(buildHintJudgePrompt('answer', { role: 'tool', content: 'Error: read needs "path" as a string.' })),
    );
    expect(failed.score).toBe(1);
    expect(failed.hint).toContain('read needs');
  });

  it('write the hint of the phase whose complaint they hear', async () => {
    const hint = async (reply: string) => parseHintVote(await rules.hintJudge.generate(buildHintJudgePrompt('answer', { role: 'user', content: reply }))).hint;
    expect(await hint("hmm this isn't gonna work: there's bold text. rewrite it")).toMatch(/^The student will hand this in/);
    expect(await hint("not quite there yet: it's way too short, it needs more detail. please redo the comments.")).toMatch(/^The teacher wants/);
  });
});
