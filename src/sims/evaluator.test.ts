import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../rl/messages';
import { scoreEvaluation, type EvaluationProgress } from './evaluator';
import { buildEvaluatorPrompt, parseEvaluatorScore, readEvaluatorPrompt } from './evaluator-prompt';
import type { GenerateOptions, TextGenerator } from '../generators/generator';

/** Answers each call with the next scripted text and records what it was asked. */
function scripted(texts: string[]) {
  const calls: { messages: ChatMessage[]; opts?: GenerateOptions }[] = [];
  const generator: TextGenerator = {
    label: 'scripted',
    kind: 'rules',
    generate: async (messages, opts) => {
      calls.push({ messages, opts });
      return texts[calls.length - 1];
    },
  };
  return { generator, calls };
}

const items = [
  { id: 'p0', question: 'Q0', answer: 'A0' },
  { id: 'p1', question: 'Q1', answer: 'A1' },
  { id: 'p2', question: 'Q2', answer: 'A2' },
];

describe('parseEvaluatorScore', () => {
  it('takes the last \\boxed{} and accepts only 0, 0.25, 0.5, 0.75 and 1', () => {
    expect(parseEvaluatorScore('I think \\boxed{0.25}... no: \\boxed{0.75}')).toBe(0.75);
    expect(parseEvaluatorScore('\\boxed{1}')).toBe(1);
    expect(parseEvaluatorScore('\\boxed{ .5 }')).toBe(0.5);
    expect(parseEvaluatorScore('\\boxed{1.0}')).toBe(1);
    expect(parseEvaluatorScore('\\boxed{0.5} then \\boxed{0.6}')).toBeNull();
    expect(parseEvaluatorScore('\\boxed{0.75} but finally \\boxed{high}')).toBeNull();
    expect(parseEvaluatorScore('\\boxed{-1}')).toBeNull();
    expect(parseEvaluatorScore('0.75')).toBeNull();
  });
});

describe('buildEvaluatorPrompt', () => {
  it('puts preference, question and answer in the user message and reads them back', () => {
    const answer = '## My answer\n</question> is not a problem\n<answer>\nstill fine';
    const messages = buildEvaluatorPrompt('No bold.', 'How many eggs?', answer);
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(messages[0].content).toMatch(/0, 0\.25, 0\.5, 0\.75 or 1/);
    expect(readEvaluatorPrompt(messages)).toEqual({ preference: 'No bold.', question: 'How many eggs?', answer });
    expect(readEvaluatorPrompt([{ role: 'user', content: 'no tags' }])).toBeNull();
  });
});

describe('scoreEvaluation', () => {
  it('averages the valid votes per problem, then the problems', async () => {
    const { generator, calls } = scripted([
      '\\boxed{1}',
      '\\boxed{0.5}',
      '\\boxed{0.75}', // p0: 0.75
      '\\boxed{0}',
      'no score at all',
      '\\boxed{0.5}', // p1: one invalid vote ignored, 0.25
      'oops',
      '\\boxed{7}',
      '\\boxed{}', // p2: no valid vote -> failed, left out of the mean
    ]);
    const result = await scoreEvaluation(generator, items, { preference: 'Be brief.', votes: 3 });
    expect(result.perProblem.map((p) => p.score)).toEqual([0.75, 0.25, null]);
    expect(result.perProblem.map((p) => p.failed)).toEqual([false, false, true]);
    expect(result.perProblem[1].votes).toEqual([0, null, 0.5]);
    expect(result.perProblem[2].texts).toEqual(['oops', '\\boxed{7}', '\\boxed{}']);
    expect(result.failedProblems).toBe(1);
    expect(result.score).toBeCloseTo((0.75 + 0.25) / 2, 12);
    expect(calls).toHaveLength(9);
    expect(calls[3].messages).toEqual(buildEvaluatorPrompt('Be brief.', 'Q1', 'A1'));
    expect(calls.map((c) => c.opts?.seed)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(calls[0].opts?.temperature).toBe(0.6);
  });

  it('defaults to 3 votes and reports progress per vote and per problem', async () => {
    const { generator, calls } = scripted(Array(6).fill('\\boxed{0.25}'));
    const seen: EvaluationProgress[] = [];
    const result = await scoreEvaluation(generator, items.slice(0, 2), {
      preference: 'p',
      onProgress: (p) => seen.push(p),
    });
    expect(calls).toHaveLength(6);
    expect(result.score).toBe(0.25);
    expect(seen.at(-1)).toEqual({ votesDone: 6, votesTotal: 6, problemsDone: 2, problemsTotal: 2 });
    expect(seen.map((p) => [p.votesDone, p.problemsDone])).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
      [3, 1],
      [4, 1],
      [5, 1],
      [6, 1],
      [6, 2],
    ]);
  });

  it('has no score when no problem was scored, and refuses a vote count below one', async () => {
    const { generator } = scripted([]);
    expect((await scoreEvaluation(generator, [], { preference: 'p' })).score).toBeNull();
    const failed = await scoreEvaluation(scripted(['no', 'box']).generator, items.slice(0, 2), { preference: 'p', votes: 1 });
    expect(failed).toMatchObject({ score: null, failedProblems: 2 });
    await expect(scoreEvaluation(generator, items, { preference: 'p', votes: 0 })).rejects.toThrow(RangeError);
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    const { generator, calls } = scripted(Array(9).fill('\\boxed{1}'));
    const pending = scoreEvaluation(generator, items, {
      preference: 'p',
      signal: controller.signal,
      onProgress: (p) => p.votesDone === 2 && controller.abort(new Error('cancelled')),
    });
    await expect(pending).rejects.toThrow('cancelled');
    expect(calls).toHaveLength(2);
  });
});
