import { describe, it, expect } from 'vitest';
import { buildBinaryJudgePrompt, buildHintJudgePrompt } from './judge';

describe('buildBinaryJudgePrompt', () => {
  it('shows the action and the next state with its role', () => {
    const msgs = buildBinaryJudgePrompt('x = 4', { role: 'user', content: 'Redo it without lists.' });
    expect(msgs.map((m) => m.role)).toEqual(['system', 'user']);
    expect(msgs[1].content).toBe(
      '## Assistant output (turn t)\nx = 4\n\n' +
        "## Next state (turn t+1, role: user, the user's reply)\nRedo it without lists.\n\n" +
        'Classify the assistant output. Think, then answer \\boxed{1}, \\boxed{-1} or \\boxed{0}.',
    );
  });

  it('names the three classes and the boxed answers', () => {
    const system = buildBinaryJudgePrompt('a', { role: 'user', content: 'b' })[0].content;
    for (const needle of ['progress', 'correction / redo', 'ambiguous', '\\boxed{1}', '\\boxed{-1}', '\\boxed{0}']) {
      expect(system).toContain(needle);
    }
  });

  it('draws the reference judge’s class boundaries: an unrelated question is ambiguous, a change request a correction', () => {
    const lines = buildBinaryJudgePrompt('a', { role: 'user', content: 'b' })[0].content.split('\n');
    const line = (start: string) => lines.find((l) => l.startsWith(start))!;
    expect(line('- progress')).not.toMatch(/question/);
    expect(line('- ambiguous')).toMatch(/unrelated/);
    expect(line('- correction / redo')).toMatch(/changed/);
    expect(lines.find((l) => l.startsWith('A request to change the answer'))).toMatch(/\\boxed\{-1\} for it, not \\boxed\{0\}/);
  });

  const roles: ['user' | 'tool' | 'system' | 'assistant', string][] = [
    ['user', "role: user, the user's reply"],
    ['tool', 'role: tool, the tool / environment result'],
    ['system', 'role: system, a message with role "system"'],
    ['assistant', 'role: assistant, a message with role "assistant"'],
  ];
  it.each(roles)('labels a %s next state', (role, label) => {
    expect(buildBinaryJudgePrompt('a', { role, content: 'b' })[1].content).toContain(label);
  });

  it('passes a 100 kB action through unchanged', () => {
    const action = 'y'.repeat(100_000);
    expect(buildBinaryJudgePrompt(action, { role: 'tool', content: 'ok' })[1].content).toContain(action);
  });
});

describe('buildHintJudgePrompt', () => {
  it('asks for a box and a hint block', () => {
    const msgs = buildHintJudgePrompt('x = 4', { role: 'tool', content: 'Error: division by zero' });
    expect(msgs.map((m) => m.role)).toEqual(['system', 'user']);
    for (const needle of ['[HINT_START]', '[HINT_END]', '\\boxed{1}', '\\boxed{-1}', '1-3 sentences']) {
      expect(msgs[0].content).toContain(needle);
    }
    expect(msgs[1].content).toBe(
      '## Assistant output (turn t)\nx = 4\n\n' +
        '## Next state (turn t+1, role: tool, the tool / environment result)\nError: division by zero\n\n' +
        'Give your decision and, only if it is \\boxed{1}, the hint in the required format.',
    );
  });

  it("says, as the reference's hint judge does, that a successful tool result is not hindsight", () => {
    const line = buildHintJudgePrompt('a', { role: 'tool', content: 'b' })[0]
      .content.split('\n')
      .find((l) => l.startsWith('A tool result'));
    expect(line).toBe(
      'A tool result exists because the output called the tool, so it was not there to be known before: ' +
        'a result without an error shows the call was right and is not such information.',
    );
  });
});
