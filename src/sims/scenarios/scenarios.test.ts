import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../../test/data-dir';
import { BUILT_IN_PROBLEMS } from '../problems/builtin';
import { parseProblemsText } from '../problems/problem-file';
import { storyOpenings } from '../problems/story-openings';
import { createScenario, SCENARIO_IDS } from './registry';
import { ScenarioConfigError, type ScenarioConfig } from './scenario';
import { AI_REPLY_PREFIX, isDone, simulatorMessages, simulatorReply } from './simulator-view';
import { studentWorkWithSlip } from './student-work';

const gsm8kPath = dataPath('data/gsm8k/test.jsonl');
const custom: ScenarioConfig = { id: 'custom', persona: 'You are a busy chef.', preference: 'Short answers in metric units.' };

describe('scenario registry', () => {
  it('creates every listed scenario, and each config recreates an equal scenario', () => {
    const configs: ScenarioConfig[] = [{ id: 'student' }, { id: 'teacher' }, { id: 'storyteller' }, custom, { id: 'talk' }];
    expect(configs.map((c) => c.id)).toEqual(SCENARIO_IDS);
    for (const config of configs) {
      const scenario = createScenario(config);
      expect(scenario.id).toBe(config.id);
      const again = createScenario(JSON.parse(JSON.stringify(scenario.config)) as ScenarioConfig);
      expect(again.persona).toBe(scenario.persona);
      expect(again.preference).toBe(scenario.preference);
      // A base model reads the user's latest request in every scenario but the storyteller's.
      expect(scenario.baseModelReplies).toBe(config.id === 'storyteller' ? 'none' : 'latest');
    }
  });

  it('rejects an unknown id with the list of known ones', () => {
    expect(() => createScenario({ id: 'pirate' } as unknown as ScenarioConfig)).toThrow(/student, teacher, storyteller, custom, talk/);
  });
});

describe('student scenario', () => {
  const student = createScenario({ id: 'student' });

  it('is the paper’s student: HOMEWORK_DONE, 8 turns, GSM8K, style rules in the persona', () => {
    expect(student.doneMarker).toBe('HOMEWORK_DONE');
    expect(student.maxTurns).toBe(8);
    expect(student.problemSource).toBe('gsm8k');
    for (const phrase of ['bold', 'numbered', 'Final Answer', 'every step', 'HOMEWORK_DONE', 'rewrite']) {
      expect(student.persona).toContain(phrase);
    }
    expect(student.preference).toMatch(/no bold text, no numbered or bulleted lists/);
  });

  it('asks for the whole solution of the problem in its first message', () => {
    const message = student.firstMessage(BUILT_IN_PROBLEMS[0]);
    expect(message).toContain(BUILT_IN_PROBLEMS[0].question);
    expect(message).toMatch(/whole solution/);
  });
});

describe('teacher scenario', () => {
  const teacher = createScenario({ id: 'teacher' });

  it('gives the question, the correct answer and a student attempt with one slip', () => {
    const problem = BUILT_IN_PROBLEMS[2];
    const message = teacher.firstMessage(problem);
    const work = studentWorkWithSlip(problem);
    expect(message).toContain(`Question: ${problem.question}`);
    expect(message).toContain('Correct answer: 10');
    expect(message).toContain(`Student's work:\n${work.text}`);
    expect(work.correctAnswer).toBe(10);
    expect(work.studentAnswer).not.toBe(10);
    expect(work.text).toContain(`So my answer is ${work.studentAnswer}.`);
    expect(work.text).not.toContain('<<');
    expect(work.text).not.toContain('####');
    expect(teacher.doneMarker).toBe('GRADING_DONE');
    // "Explain any mistakes ... if needed", as the reference's teacher says it: not always one.
    expect(teacher.persona).toMatch(/what the student did well, explain any mistakes patiently.*right approach.*where that is needed/s);
    expect(teacher.preference).toMatch(/a correct solution has none to point out/);
  });

  it('makes a wrong student answer, of the same sign, for every GSM8K test problem', () => {
    const problems = parseProblemsText(readFileSync(gsm8kPath!, 'utf8'), 'test.jsonl');
    const first = studentWorkWithSlip(problems[0]);
    expect(first.correctAnswer).toBe(18);
    expect(first.text.split('\n').at(-2)).toContain(String(first.studentAnswer));
    for (const problem of problems) {
      const work = studentWorkWithSlip(problem);
      expect(work.studentAnswer).not.toBe(work.correctAnswer);
      expect(Math.sign(work.studentAnswer)).toBe(Math.sign(work.correctAnswer) || 1);
      expect(work.text).toContain(`So my answer is ${work.studentAnswer}.`);
    }
  });
});

describe('storyteller scenario', () => {
  it('defaults to the child’s dog and uses plain story openings as tasks', () => {
    const story = createScenario({ id: 'storyteller' });
    expect(story.config).toEqual({ id: 'storyteller', subject: 'dog', name: 'Max', favourite: 'ball', hintWording: 'held-out', acceptance: 'graded' });
    expect(story.preference).toMatch(/called Max.*ball/);
    expect(story.problemSource).toBe('story-openings');
    const opening = storyOpenings('dog')[0];
    expect(story.firstMessage(opening)).toBe('Once upon a time, there was a little dog.');
    expect(story.persona).toContain('your dog');
    // Each story starts afresh: the child's complaints are next states for the judge only.
    expect(story.baseModelReplies).toBe('none');
    expect(story.doneMarker).toBe('STORY_DONE');
  });

  it('takes another subject, normalised, and refuses one it cannot put in a sentence', () => {
    expect(createScenario({ id: 'storyteller', subject: '  Owl ' }).persona).toContain('your owl');
    expect(() => createScenario({ id: 'storyteller', subject: 'dog</s>{{x}}' })).toThrow(ScenarioConfigError);
    expect(() => createScenario({ id: 'storyteller', subject: '' })).toThrow(/one to three plain words/);
    expect(() => createScenario({ id: 'storyteller', subject: 'a' })).toThrow(/one to three plain words/);
    expect(() => createScenario({ id: 'storyteller', subject: 'my big fat fluffy cat' })).toThrow(/one to three plain words/);
  });

  it('normalises what people type for the pet and the thing, and never makes a broken opening', () => {
    const typed: [string, string][] = [
      ['a cat', 'cat'],
      ['A Cat', 'cat'],
      ['Cats', 'cat'],
      ['my little frog', 'little frog'],
      ['the puppies', 'puppy'],
      ['an owl', 'owl'],
      ['foxes', 'fox'],
      ['mice', 'mouse'],
      ['  my   Bunny ', 'bunny'],
      ['octopus', 'octopus'],
      ['walrus', 'walrus'],
    ];
    for (const [text, subject] of typed) {
      const story = createScenario({ id: 'storyteller', subject: text });
      expect(story.config, text).toMatchObject({ subject });
      for (const set of ['evaluation', 'training', 'fine-tuning'] as const) {
        for (const { question } of storyOpenings(subject, set)) {
          expect(question, text).not.toMatch(/\b(?:a|an) (?:a|an|the|my)\b|\ba [aeiou]|\ban [^aeiou]/i);
          expect(question).toContain(subject);
        }
      }
    }
    expect(createScenario({ id: 'storyteller', favourite: 'Red Balls' }).config).toMatchObject({ favourite: 'red ball' });
    expect(createScenario({ id: 'storyteller', favourite: 'my kite' }).config).toMatchObject({ favourite: 'kite' });
    expect(createScenario({ id: 'storyteller', favourite: 'boxes' }).config).toMatchObject({ favourite: 'box' });
  });

  it('has three disjoint sets of openings: evaluation, training and fine-tuning', () => {
    const sets = (['evaluation', 'training', 'fine-tuning'] as const).map((set) => storyOpenings('dog', set).map((p) => p.question));
    expect(sets.map((s) => s.length)).toEqual([12, 12, 24]);
    const all = sets.flat();
    expect(new Set(all).size).toBe(all.length);
    const ids = (['evaluation', 'training', 'fine-tuning'] as const).flatMap((set) => storyOpenings('dog', set).map((p) => p.id));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('refuses a pet name or favourite thing the rules cannot find in a story, saying why', () => {
    expect(() => createScenario({ id: 'storyteller', name: 'Mr. Max' })).toThrow(/one word of two to sixteen letters/);
    expect(() => createScenario({ id: 'storyteller', name: 'M4x' })).toThrow(ScenarioConfigError);
    expect(() => createScenario({ id: 'storyteller', favourite: 'a very big red ball' })).toThrow(/one or two plain words/);
    expect(() => createScenario({ id: 'storyteller', subject: 'little cat', favourite: 'cat' })).toThrow(/must differ from the pet/);
  });
});

describe('custom persona and talk-yourself', () => {
  it('adds the done instruction to the person’s persona and fills defaults', () => {
    const scenario = createScenario(custom);
    expect(scenario.persona).toMatch(/^You are a busy chef\.\n\n/);
    expect(scenario.persona).toContain('end that message with exactly TASK_DONE');
    expect(scenario.config).toMatchObject({ doneMarker: 'TASK_DONE', maxTurns: 8, problemSource: 'gsm8k' });
    expect(scenario.firstMessage({ id: 'x', question: 'How much flour?', answer: '' })).toBe('How much flour?');
  });

  it('refuses an unusable custom config with a message saying what to change', () => {
    expect(() => createScenario({ ...custom, persona: '  ' })).toThrow(/Describe the persona/);
    expect(() => createScenario({ ...custom, doneMarker: 'done!' })).toThrow(/capital letters/);
    expect(() => createScenario({ ...custom, maxTurns: 0 })).toThrow(/Max turns/);
    expect(() => createScenario({ ...custom, firstMessageTemplate: 'hello' })).toThrow(/\{question\}/);
  });

  it('talk-yourself has no simulator, no end marker and no evaluator', () => {
    const talk = createScenario({ id: 'talk' });
    expect([talk.persona, talk.doneMarker, talk.maxTurns, talk.preference]).toEqual([null, null, null, null]);
    expect(() => simulatorMessages(talk, [])).toThrow(/no simulated user/);
  });
});

describe('the simulator’s view of the conversation', () => {
  const student = createScenario({ id: 'student' });

  it('puts the persona first and swaps roles, prefixing the policy’s answers', () => {
    const view = simulatorMessages(student, [
      { role: 'system', content: 'policy system prompt' },
      { role: 'user', content: 'hey can you help' },
      { role: 'assistant', content: '**Step 1** ...' },
    ]);
    expect(view).toEqual([
      { role: 'system', content: student.persona },
      { role: 'assistant', content: 'hey can you help' },
      { role: 'user', content: `${AI_REPLY_PREFIX}**Step 1** ...` },
    ]);
  });

  it('strips reasoning from a simulator reply and recognises the done marker', () => {
    expect(simulatorReply('<think>they used bold</think>\nrewrite it pls')).toBe('rewrite it pls');
    expect(simulatorReply('they used bold</think>rewrite it pls')).toBe('rewrite it pls');
    expect(isDone(student, 'thanks! HOMEWORK_DONE')).toBe(true);
    expect(isDone(student, 'rewrite it')).toBe(false);
  });
});

describe('homework in the workspace', () => {
  const problem = BUILT_IN_PROBLEMS[2];

  it('is an option of the student and the teacher: chat by default, stored only when it is the workspace', () => {
    expect(createScenario({ id: 'student' }).workspace).toBeNull();
    expect(createScenario({ id: 'teacher', homework: 'chat' }).config).toEqual({ id: 'teacher' });
    const student = createScenario({ id: 'student', homework: 'workspace' });
    expect(student.config).toEqual({ id: 'student', homework: 'workspace' });
    expect(createScenario(JSON.parse(JSON.stringify(student.config))).workspace).toEqual(student.workspace);
    expect(() => createScenario({ id: 'student', homework: 'files' } as unknown as ScenarioConfig)).toThrow(/homework "files" is not one of chat, workspace/);
  });

  it('runs the reference’s phases in order: the student alone, or the student then the teacher', () => {
    const student = createScenario({ id: 'student', homework: 'workspace' });
    const teacher = createScenario({ id: 'teacher', homework: 'workspace' });
    expect(student.workspace!.phases.map((p) => p.id)).toEqual(['student']);
    expect(teacher.workspace!.phases.map((p) => p.id)).toEqual(['student', 'teacher']);
    const [solve, grade] = teacher.workspace!.phases;
    // The student names the file, asks for the answer in the chat first, and nothing of the problem.
    const first = solve.firstMessage(problem, 'homework/4.txt');
    expect(first).toContain('homework/4.txt');
    expect(first).not.toContain(problem.question);
    expect(first).toMatch(/read it/);
    // The teacher names the file and gives the question and the ground truth, not the work.
    const grading = grade.firstMessage(problem, 'homework/4.txt');
    expect(grading).toContain('homework/4.txt');
    expect(grading).toContain(`Question: ${problem.question}`);
    expect(grading).toContain('Correct answer: 10');
    expect(grading).not.toContain("Student's work");
    // Both personas (the reference's own text) ask, in a separate message, to append to the file, and end only once it is saved.
    for (const phase of [solve, grade]) {
      expect(phase.persona).toMatch(/in a separate message .* append .* to the end of the homework file \(not overwrite it\)/s);
      expect(phase.persona).toContain(`Never say ${phase.doneMarker} until the AI confirms it wrote the file.`);
      expect(phase.maxTurns).toBe(8);
    }
    expect(grade.persona).toBe(teacher.persona);
    expect(teacher.firstMessage(problem)).toBe(grade.firstMessage(problem, 'homework/0.txt'));
  });
});
