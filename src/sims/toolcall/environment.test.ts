import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../rl/errors';
import { Gsm8kAnswerError } from '../problems/gsm8k-answer';
import { PolicyOutputError, TOOL_SYSTEM_PROMPT, runToolEpisode } from './environment';
import { calculatorCall, scriptedPolicy } from '../../../test/support/toolcall/testing';

const MAYA = {
  question: 'Maya bakes 4 trays of 18 cookies and gives 24 away. How many cookies are left?',
  answer: 'She bakes 4 * 18 = <<4*18=72>>72 cookies.\n72 - 24 = <<72-24=48>>48 are left.\n#### 48',
};

describe('runToolEpisode', () => {
  it('runs two tool calls, then a final answer: o = +1 with the right messages', async () => {
    const outputs = [
      `First the cookies baked.\n${calculatorCall('4 * 18')}`,
      `Now subtract the ones given away.\n${calculatorCall('72 - 24')}`,
      'Maya has 48 cookies left. The answer is 48.',
    ];
    const policy = scriptedPolicy(outputs);
    const t = await runToolEpisode(MAYA, policy);

    expect(t.outcome).toBe(1);
    expect(t.end).toBe('answered');
    expect(t.expected).toBe(48);
    expect(t.finalText).toBe(outputs[2]);
    expect(t.finalAnswer).toEqual({ value: 48, source: 'answer-phrase' });
    expect(t.messages).toEqual([
      { role: 'system', content: TOOL_SYSTEM_PROMPT },
      { role: 'user', content: MAYA.question },
      { role: 'assistant', content: outputs[0] },
      { role: 'tool', content: '72' },
      { role: 'assistant', content: outputs[1] },
      { role: 'tool', content: '48' },
      { role: 'assistant', content: outputs[2] },
    ]);

    expect(t.steps.map((s) => [s.index, s.final, s.messages.length, s.toolMessages.map((m) => m.content)])).toEqual([
      [0, false, 2, ['72']],
      [1, false, 4, ['48']],
      [2, true, 6, []],
    ]);
    expect(t.steps[1].messages).toEqual(t.messages.slice(0, 4));
    expect(t.steps[0].results[0]).toMatchObject({ index: 0, call: { expression: '4 * 18' }, outcome: { ok: true, value: 72 } });
    // The policy saw exactly what each step records, and got copies it cannot corrupt the record through.
    expect(policy.seen).toEqual(t.steps.map((s) => s.messages));
    policy.seen[0][1].content = 'tampered';
    expect(t.steps[0].messages[1].content).toBe(MAYA.question);
  });

  it('gives o = -1 at the step limit, with no final answer', async () => {
    const policy = scriptedPolicy([calculatorCall('1 + 1')]);
    const t = await runToolEpisode(MAYA, policy, { maxSteps: 3 });
    expect(t.outcome).toBe(-1);
    expect(t.end).toBe('step-limit');
    expect(t.steps).toHaveLength(3);
    expect(t.steps.every((s) => !s.final)).toBe(true);
    expect(t.finalAnswer).toBeNull();
    expect(t.finalText).toBeNull();
    expect(policy.seen).toHaveLength(3);
    // The last step's tool result is still recorded: the PRM judges that step with it.
    expect(t.messages.at(-1)).toEqual({ role: 'tool', content: '2' });
  });

  it('defaults to 8 steps', async () => {
    const t = await runToolEpisode(MAYA, scriptedPolicy([calculatorCall('1 + 1')]));
    expect(t.steps).toHaveLength(8);
    expect(t.outcome).toBe(-1);
  });

  it('gives o = -1 for a wrong or unreadable final answer, and compares numerically', async () => {
    expect((await runToolEpisode(MAYA, scriptedPolicy(['The answer is 47.']))).outcome).toBe(-1);
    expect((await runToolEpisode(MAYA, scriptedPolicy(['I am not sure.']))).finalAnswer).toBeNull();
    const books = { question: 'How many books?', answer: '1250 - 225 + 40 = <<1065>>1065\n#### 1,065' };
    const t = await runToolEpisode(books, scriptedPolicy(['So there are \\boxed{1,065.0} books.']));
    expect(t.outcome).toBe(1);
    expect(t.finalAnswer).toEqual({ value: 1065, source: 'boxed' });
  });

  it('answers every block of a step in order, errors included, and treats malformed calls as a tool step', async () => {
    const step0 = `${calculatorCall('4 * 18')}\n<tool_call>{"name": "calc", "arguments": {"expression": "1"}}</tool_call>\n` + `${calculatorCall('72 / 0')}`;
    const t = await runToolEpisode(MAYA, scriptedPolicy([step0, 'The answer is 48']));
    const tools = t.steps[0].toolMessages.map((m) => m.content);
    expect(tools).toHaveLength(3);
    expect(tools[0]).toBe('72');
    expect(tools[1]).toMatch(/^Error: Tool call 2: There is no tool named "calc"/);
    expect(tools[2]).toMatch(/^Error: Division by zero in 72 \/ 0/);
    expect(t.messages.slice(2, 6).map((m) => m.role)).toEqual(['assistant', 'tool', 'tool', 'tool']);
    expect(t.steps[0].final).toBe(false);
    expect(t.outcome).toBe(1);
  });

  it('runs at most maxCallsPerStep calls of one output', async () => {
    const many = Array.from({ length: 4 }, (_, i) => calculatorCall(`${i} + 1`)).join('\n');
    const t = await runToolEpisode(MAYA, scriptedPolicy([many, '48']), { maxCallsPerStep: 2 });
    const tools = t.steps[0].toolMessages.map((m) => m.content);
    expect(tools.slice(0, 2)).toEqual(['1', '2']);
    expect(tools[2]).toMatch(/^Error: Tool call 3 was not run: at most 2 calls are run per step/);
    expect(tools[3]).toMatch(/^Error: Tool call 4 was not run/);
    expect(t.steps[0].results.map((r) => r.call?.expression)).toEqual(['0 + 1', '1 + 1', '2 + 1', '3 + 1']);
  });

  it('uses a custom system prompt', async () => {
    const t = await runToolEpisode(MAYA, scriptedPolicy(['48']), { systemPrompt: 'Be brief.' });
    expect(t.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
  });

  it('refuses a problem without "#### N" before calling the policy', async () => {
    const policy = scriptedPolicy(['48']);
    await expect(runToolEpisode({ question: 'q', answer: 'no final line' }, policy)).rejects.toThrow(Gsm8kAnswerError);
    expect(policy.seen).toHaveLength(0);
  });

  it('refuses bad settings and bad policy output', async () => {
    await expect(runToolEpisode(MAYA, scriptedPolicy(['48']), { maxSteps: 0 })).rejects.toThrow(InvalidArgumentError);
    await expect(runToolEpisode(MAYA, scriptedPolicy(['48']), { maxCallsPerStep: 1.5 })).rejects.toThrow(/maxCallsPerStep is 1.5/);
    const broken = async () => ({ text: 42 as unknown as string });
    await expect(runToolEpisode(MAYA, broken)).rejects.toThrow(PolicyOutputError);
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    const policy = async () => {
      controller.abort(new Error('stopped by the test'));
      return { text: calculatorCall('1 + 1') };
    };
    await expect(runToolEpisode(MAYA, policy, { signal: controller.signal })).rejects.toThrow('stopped by the test');
  });

  it('passes extra policy fields through to the trajectory', async () => {
    const policy = async () => ({ text: '48', logprobs: [-0.5] });
    const t = await runToolEpisode(MAYA, policy);
    expect(t.steps[0].output.logprobs).toEqual([-0.5]);
  });
});
