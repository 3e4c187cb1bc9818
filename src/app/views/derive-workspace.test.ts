import { describe, expect, it } from 'vitest';
import { ANSWER, HOMEWORK, workspaceRun } from '../../../test/support/views/testing-workspace';
import { validateRecord } from '../../rl/validate';
import { conversations } from './derive-conversations';
import { replyParts, workspaces } from './derive-workspace';

describe('workspace views', () => {
  const records = workspaceRun().map((r, i) => validateRecord(JSON.parse(JSON.stringify(r)), `record ${i}`));

  it('give each file as the run left it and every change that led there', () => {
    expect(workspaces(records)).toEqual([
      {
        workspace: 's0',
        files: [
          {
            path: 'homework/0.txt',
            content: HOMEWORK + ANSWER,
            changes: [
              { op: 'write', session: 's0', turn: null, version: 0, content: HOMEWORK },
              { op: 'append', session: 's0', turn: 3, version: 0, content: HOMEWORK + ANSWER },
            ],
          },
        ],
      },
    ]);
  });

  it('show a turn’s tool results and its calls; a reply without tools is all text', () => {
    const [turns] = conversations(records).map((s) => s.turns);
    expect(turns.map((t) => [t.toolResults, t.said, t.calls.map((c) => c.name)])).toEqual([
      [[], '', ['read']],
      [[HOMEWORK], ANSWER, []],
      [[], '', ['append']],
    ]);
    expect(turns[0].calls[0].arguments).toBe('{"path":"homework/0.txt"}');
    expect(replyParts('Sure.\n<tool_call>{"name": "read", "arguments": {"path": "a.txt"}}</tool_call>')).toEqual({
      text: 'Sure.',
      calls: [{ name: 'read', arguments: '{"path":"a.txt"}' }],
    });
  });

  it('leave a <tool_call> tag in a chat without tools as text', () => {
    const { tools: _unused, ...chat } = records[1] as Extract<(typeof records)[number], { kind: 'interaction' }>;
    void _unused;
    const [t] = conversations([chat])[0].turns;
    expect(t.calls).toEqual([]);
    expect(t.said).toBe(chat.response);
  });
});
