import { describe, expect, it } from 'vitest';
import { replyMessage, usesToolCallTags } from './tool-calls';

describe('tool calls in a served reply', () => {
  it('takes <tool_call> blocks out as OpenAI tool_calls, with object or string arguments, and keeps the prose', () => {
    const text =
      'Let me look.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.txt"}}\n</tool_call>\n<tool_call>\n{"name": "ls", "arguments": "{}"}\n</tool_call>';
    expect(replyMessage(text, true, 'call_x')).toEqual({
      role: 'assistant',
      content: 'Let me look.',
      tool_calls: [
        { id: 'call_x_0', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt"}' } },
        { id: 'call_x_1', type: 'function', function: { name: 'ls', arguments: '{}' } },
      ],
    });
  });

  it('reads a block cut off by the token limit, leaves a block that is not a call in the text, and parses nothing when told not to', () => {
    expect(replyMessage('<tool_call>\n{"name": "exec", "arguments": {"cmd": "ls"}}', true, 'c').tool_calls).toEqual([
      { id: 'c_0', type: 'function', function: { name: 'exec', arguments: '{"cmd":"ls"}' } },
    ]);
    const broken = 'ok <tool_call>{"name": </tool_call>';
    expect(replyMessage(broken, true, 'c')).toEqual({ role: 'assistant', content: broken });
    const call = '<tool_call>{"name": "ls", "arguments": {}}</tool_call>';
    expect(replyMessage(call, false, 'c')).toEqual({ role: 'assistant', content: call });
  });

  it('keeps the prose as the model began it and drops only the whitespace before a call, so a stream can send the prose first', () => {
    const text = '  Let me look.  \n<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>\n';
    expect(replyMessage(text, true, 'c').content).toBe('  Let me look.');
  });

  it('knows a template that uses the tag', () => {
    expect(usesToolCallTags('{%- for tool in tools %}<tool_call>')).toBe(true);
    expect(usesToolCallTags('{{ messages }}')).toBe(false);
    expect(usesToolCallTags(null)).toBe(false);
  });
});
