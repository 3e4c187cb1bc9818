import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../../rl/messages';
import { replyMessage } from '../../rl/tool-calls';
import { homeworkFileText, homeworkPath, prepareHomework } from './homework';
import { runWorkspaceCall, WORKSPACE_TOOLS } from './tools';
import { checkWorkspacePath, MemoryWorkspace, WORKSPACE_LIMITS, WorkspacePathError } from './workspace';

const call = (name: string, args: object | string): ToolCall => ({
  id: 'c',
  type: 'function',
  function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
});

describe('workspace paths', () => {
  it('keeps plain relative paths and refuses any that could leave the workspace', () => {
    expect(checkWorkspacePath('homework/0.txt')).toBe('homework/0.txt');
    expect(checkWorkspacePath(' ./homework/0.txt ')).toBe('homework/0.txt');
    for (const bad of ['', '/etc/passwd', '~/x', '../x', 'homework/../../x', 'a//b', 'a b.txt', 'a\\b', 'x'.repeat(WORKSPACE_LIMITS.pathChars + 1)]) {
      expect(() => checkWorkspacePath(bad), bad).toThrow(WorkspacePathError);
    }
  });
});

describe('the homework file and the tools', () => {
  it('writes problem i as homework/i.txt with an empty Solution section, as the reference does', async () => {
    const ws = new MemoryWorkspace();
    const change = await prepareHomework(ws, homeworkPath(3), { question: 'What is 2 + 2?' });
    expect(change).toEqual({ path: 'homework/3.txt', op: 'write', content: 'Problem:\nWhat is 2 + 2?\n\nSolution:\n' });
    expect(await ws.read('homework/3.txt')).toBe(homeworkFileText({ question: 'What is 2 + 2?' }));
  });

  it('lists read, write and append in the OpenAI function format', () => {
    expect(WORKSPACE_TOOLS.map((t) => (t as { function: { name: string } }).function.name)).toEqual(['read', 'write', 'append']);
    for (const t of WORKSPACE_TOOLS as { type: string; function: { parameters: { required: string[] } } }[]) {
      expect(t.type).toBe('function');
      expect(t.function.parameters.required).toContain('path');
    }
  });

  it('reads, appends and writes, returning the change with the whole file after it', async () => {
    const ws = new MemoryWorkspace();
    await prepareHomework(ws, 'homework/0.txt', { question: 'Q?' });
    const read = await runWorkspaceCall(ws, call('read', { path: 'homework/0.txt' }));
    expect(read).toMatchObject({ ok: true, content: 'Problem:\nQ?\n\nSolution:\n', change: null });
    const appended = await runWorkspaceCall(ws, call('append', { path: 'homework/0.txt', content: 'It is 4.' }));
    expect(appended.ok).toBe(true);
    expect(appended.content).toBe('Appended 8 characters to the end of homework/0.txt. It now holds 31 characters.');
    expect(appended.change).toEqual({ path: 'homework/0.txt', op: 'append', content: 'Problem:\nQ?\n\nSolution:\nIt is 4.' });
    const written = await runWorkspaceCall(ws, call('write', { path: 'notes.txt', content: '' }));
    expect(written.change).toEqual({ path: 'notes.txt', op: 'write', content: '' });
    expect((await runWorkspaceCall(ws, call('read', { path: 'notes.txt' }))).content).toBe('(notes.txt is empty)');
    expect(await ws.list()).toEqual(['homework/0.txt', 'notes.txt']);
  });

  it('answers a call it cannot run with an error result the policy can act on, and changes nothing', async () => {
    const ws = new MemoryWorkspace();
    await ws.write('homework/0.txt', 'x');
    const cases: [ToolCall, RegExp][] = [
      [call('read', { path: 'homework/1.txt' }), /^Error: homework\/1\.txt does not exist\. The workspace holds homework\/0\.txt\.$/],
      [call('delete', { path: 'homework/0.txt' }), /^Error: There is no tool named "delete"; the tools are read, write, append\.$/],
      [call('append', { path: 'homework/0.txt' }), /^Error: append needs "content" as a string\.$/],
      [call('read', { path: 'homework/0.txt', mode: 'r' }), /^Error: read takes only path, not "mode"\.$/],
      [call('write', '{"path": '), /^Error: The arguments of write are not a JSON object/],
      [call('write', { path: '../escape.txt', content: 'x' }), /^Error: The path climbs out of the workspace/],
      [call('append', { path: 'homework/0.txt', content: 'y'.repeat(WORKSPACE_LIMITS.fileChars) }), /^Error: homework\/0\.txt would hold 100001 characters/],
    ];
    for (const [c, message] of cases) {
      const r = await runWorkspaceCall(ws, c);
      expect(r.ok, c.function.name).toBe(false);
      expect(r.change).toBeNull();
      expect(r.content).toMatch(message);
    }
    expect(await ws.list()).toEqual(['homework/0.txt']);
    expect(await ws.read('homework/0.txt')).toBe('x');
  });

  it('runs calls as the chat template writes them, through the reader the server uses', async () => {
    const ws = new MemoryWorkspace();
    await ws.write('homework/0.txt', 'Problem:\nQ?\n\nSolution:\n');
    const text = 'I will read it.\n<tool_call>\n{"name": "read", "arguments": {"path": "homework/0.txt"}}\n</tool_call>';
    const [parsed] = replyMessage(text, true, 'call').tool_calls!;
    expect((await runWorkspaceCall(ws, parsed)).content).toContain('Solution:');
  });
});
