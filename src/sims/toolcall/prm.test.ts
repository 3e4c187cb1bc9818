import { describe, expect, it } from 'vitest';
import { parseBoxedScore } from '../../rl/boxed';
import { InvalidArgumentError } from '../../rl/errors';
import type { ChatMessage } from '../../rl/messages';
import type { GenerateOptions, TextGenerator } from '../../generators/generator';
import { runToolEpisode } from './environment';
import { STEP_JUDGE_CLOSING, buildStepJudgePrompt, readStepJudgePrompt } from '../../rl/step-judge';
import { scoreTrajectory, stepJudgeInputs } from './prm';
import { RulesStepJudge } from './rules-judge';
import { calculatorCall, scriptedPolicy } from '../../../test/support/toolcall/testing';

const PROBLEM = { question: 'Two boxes of 12 eggs and 5 more eggs. How many eggs?', answer: '2 * 12 + 5 = 29\n#### 29' };

const episode = (outputs: string[]) => runToolEpisode(PROBLEM, scriptedPolicy(outputs));

/** A judge that records its calls and answers from a list, in order. */
function recordingJudge(replies: string[]): TextGenerator & { calls: { messages: ChatMessage[]; opts?: GenerateOptions }[] } {
  const calls: { messages: ChatMessage[]; opts?: GenerateOptions }[] = [];
  return {
    label: 'scripted judge',
    kind: 'rules',
    calls,
    async generate(messages, opts) {
      calls.push({ messages, opts });
      return replies[(calls.length - 1) % replies.length];
    },
  };
}

describe('the step-judge prompt of a trajectory', () => {
  it('shows the problem, the history, the step and its tool results, and asks for \\boxed{1} or \\boxed{-1}', async () => {
    const t = await episode([`Boxes first. ${calculatorCall('2 * 12')}`, `${calculatorCall('24 + 5')}`, 'The answer is 29.']);
    const inputs = stepJudgeInputs(t);
    expect(inputs.map((i) => [i.stepIndex, i.history.length, i.toolResults])).toEqual([
      [0, 0, ['24']],
      [1, 2, ['29']],
      [2, 4, []],
    ]);
    // History starts after the system prompt and the question.
    expect(inputs[1].history).toEqual(t.messages.slice(2, 4));

    const [system, user] = buildStepJudgePrompt(inputs[1]);
    expect(system.role).toBe('system');
    for (const criterion of [/correct/, /well-formed/, /appropriate/, /forward/, /\\boxed\{1\}/, /\\boxed\{-1\}/]) {
      expect(system.content).toMatch(criterion);
    }
    expect(user.role).toBe('user');
    expect(user.content).toBe(
      `## Problem\n${PROBLEM.question}\n\n` +
        `## Trajectory so far\n[assistant]\n${t.steps[0].output.text}\n\n[tool]\n24\n\n` +
        `## Current step (step 1, assistant output)\n${calculatorCall('24 + 5')}\n\n` +
        '## Tool result (role: tool)\n<tool_response>\n29\n</tool_response>\n\n' +
        STEP_JUDGE_CLOSING,
    );
    const finalPrompt = buildStepJudgePrompt(inputs[2])[1].content;
    expect(finalPrompt).toContain('(none: the step made no tool call, so it is the final answer)');
    expect(buildStepJudgePrompt(inputs[0])[1].content).toContain('(nothing yet: this is the first step)');
  });
});

describe('RulesStepJudge', () => {
  const judge = new RulesStepJudge();
  const vote = async (output: string, toolResults: string[]) =>
    parseBoxedScore(await judge.generate(buildStepJudgePrompt({ question: 'q', stepIndex: 0, history: [], output, toolResults })));

  it('is labelled as rules', () => {
    expect(judge.kind).toBe('rules');
    expect(judge.label).toMatch(/rules/);
  });

  it('gives +1 only when every call ran and returned a number', async () => {
    expect(await vote(calculatorCall('2 * 12'), ['24'])).toBe(1);
    expect(await vote('two calls', ['24', '-0.5'])).toBe(1);
    expect(await vote('tiny', ['2.5e-10'])).toBe(1);
    expect(await vote('bad', ['Error: Division by zero in 5 / 0'])).toBe(-1);
    expect(await vote('mixed', ['24', 'Error: Tool call 2: There is no tool named "calc"'])).toBe(-1);
    expect(await vote('odd', ['NaN'])).toBe(-1);
  });

  it('gives a final answer +1 when it states a number', async () => {
    expect(await vote('The answer is 29.', [])).toBe(1);
    expect(await vote('I give up.', [])).toBe(-1);
  });

  it('is deterministic', async () => {
    const prompt = buildStepJudgePrompt({ question: 'q', stepIndex: 0, history: [], output: 'x', toolResults: ['3'] });
    expect(await judge.generate(prompt)).toBe(await judge.generate(prompt));
  });
});

describe('scoreTrajectory', () => {
  const outputs = [calculatorCall('2 * 12'), calculatorCall('24 / 0'), calculatorCall('24 + 5'), 'The answer is 29.'];

  it('integrated: r_t = o + mean of the valid votes, raw vote texts kept', async () => {
    const t = await episode(outputs);
    expect(t.outcome).toBe(1);
    // 4 steps x 3 votes, in step order: step 0 [1, 1, -1], step 1 [-1, -1, fail], step 2 [1, 0 (fails), 1], step 3 [fail x3].
    const replies = [
      '\\boxed{1}',
      '\\boxed{1}',
      '\\boxed{-1}',
      '\\boxed{-1}',
      'x \\boxed{-1}',
      'none',
      '\\boxed{1}',
      '\\boxed{0}',
      '\\boxed{1}',
      'a',
      'b',
      'c',
    ];
    const judge = recordingJudge(replies);
    const scored = await scoreTrajectory(t, judge, { votes: 3, mode: 'integrated', seed: 100 });

    expect(scored.steps.map((s) => s.votes)).toEqual([
      [1, 1, -1],
      [-1, -1, null],
      [1, null, 1],
      [null, null, null],
    ]);
    // o = 1: 1 + 1/3; 1 + (-1); 1 + 1; no valid vote -> o.
    expect(scored.rewards[0]).toBeCloseTo(4 / 3, 12);
    expect(scored.rewards.slice(1)).toEqual([0, 2, 1]);
    expect(scored.steps.map((s) => s.reward)).toEqual(scored.rewards);
    expect(scored.steps[1].texts).toEqual(['\\boxed{-1}', 'x \\boxed{-1}', 'none']);
    expect(scored.outcome).toBe(1);
    expect(scored.mode).toBe('integrated');

    expect(judge.calls).toHaveLength(12);
    expect(judge.calls.map((c) => c.opts?.seed)).toEqual([100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111]);
    expect(judge.calls.every((c) => c.opts?.temperature === 0.6)).toBe(true);
    expect(readStepJudgePrompt(judge.calls[3].messages).toolResults[0]).toMatch(/^Error: Division by zero/);
  });

  it('outcome only: r_t = o for every step, without calling the judge', async () => {
    const t = await runToolEpisode(PROBLEM, scriptedPolicy([calculatorCall('2 * 12'), 'The answer is 24.']));
    const judge = recordingJudge(['\\boxed{1}']);
    const scored = await scoreTrajectory(t, judge, { votes: 3, mode: 'outcome' });
    expect(scored.rewards).toEqual([-1, -1]);
    expect(scored.steps).toEqual([
      { step: 0, votes: [], texts: [], reward: -1 },
      { step: 1, votes: [], texts: [], reward: -1 },
    ]);
    expect(judge.calls).toHaveLength(0);
  });

  it("a wrong answer's o is shaped by its rounds of tool calls under 'tool-calls', as the reference's reward function", async () => {
    // One round of calls, then a wrong answer: o = min(-0.6, -1 + (1 - 2) / 2 * 0.1) = -1.05.
    const t = await runToolEpisode(PROBLEM, scriptedPolicy([calculatorCall('2 * 12'), 'The answer is 24.']));
    const judge = recordingJudge(['\\boxed{1}', '\\boxed{-1}']);
    const outcome = await scoreTrajectory(t, judge, { votes: 1, mode: 'outcome', wrongAnswer: 'tool-calls' });
    expect(outcome.outcome).toBe(-1);
    outcome.rewards.forEach((r) => expect(r).toBeCloseTo(-1.05, 12));
    const integrated = await scoreTrajectory(t, judge, { votes: 1, mode: 'integrated', wrongAnswer: 'tool-calls' });
    expect(integrated.rewards[0]).toBeCloseTo(-1.05 + 1, 12);
    expect(integrated.rewards[1]).toBeCloseTo(-1.05 - 1, 12);
  });

  it('with the rules judge gives the expected rewards on a trajectory with a failed call', async () => {
    const scored = await scoreTrajectory(await episode(outputs), new RulesStepJudge(), { votes: 2, mode: 'integrated' });
    expect(scored.rewards).toEqual([2, 0, 2, 2]);
  });

  it('refuses a vote count that is not a positive integer', async () => {
    const t = await episode(['29']);
    await expect(scoreTrajectory(t, new RulesStepJudge(), { votes: 0, mode: 'integrated' })).rejects.toThrow(InvalidArgumentError);
  });
});
