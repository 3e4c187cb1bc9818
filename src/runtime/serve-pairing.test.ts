import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../rl/messages';
import { SessionPairing } from './serve-pairing';

const user = (content: string): ChatMessage => ({ role: 'user', content });
const said = (content: string): ChatMessage => ({ role: 'assistant', content });

describe('SessionPairing', () => {
  it('pairs a request that extends a session’s last request and reply, whatever its system prompt, and nothing else', () => {
    const p = new SessionPairing();
    const first = [{ role: 'system' as const, content: 'time: 10:00' }, user('hi')];
    p.remember('a', first, said('hello'));
    expect(p.match([{ role: 'system', content: 'time: 10:01' }, user('hi'), said('hello'), user('more')])?.session).toBe('a');
    expect(p.match([user('hi'), said('hello  '), user('more')])?.session).toBe('a');
    expect(p.match([user('hi'), said('goodbye'), user('more')])).toBeNull();
    expect(p.match([user('hi')])).toBeNull();
  });

  it('pairs a request that dropped the context an agent appended to the previous one, and says where the reply is', () => {
    const p = new SessionPairing();
    const context = user('<<<INTERNAL CONTEXT>>> exec sessions: none');
    p.remember('a', [{ role: 'system', content: 'sys' }, user('write a poem'), context], said('roses'));
    expect(p.match([{ role: 'system', content: 'sys' }, user('write a poem'), said('roses'), user('redo it'), context])).toEqual({ session: 'a', replyAt: 2 });
    expect(p.match([user('write a poem'), context, said('roses'), user('redo it')])).toEqual({ session: 'a', replyAt: 2 });
    // Only user messages at the end count as appended context: a tool result is the conversation.
    p.remember('b', [user('read'), { role: 'tool', content: 'data' }], said('done'));
    expect(p.match([user('read'), said('done'), user('next')])).toBeNull();
  });

  it('compares tool calls by name and arguments, not by id or spacing', () => {
    const p = new SessionPairing();
    const call = (id: string, args: string): ChatMessage => ({
      role: 'assistant',
      content: '',
      tool_calls: [{ id, type: 'function', function: { name: 'read', arguments: args } }],
    });
    p.remember('a', [user('read it')], call('call_1', '{"path":"a.txt"}'));
    const tool: ChatMessage = { role: 'tool', content: 'file text', tool_call_id: 'x' };
    expect(p.match([user('read it'), call('renamed', '{ "path": "a.txt" }'), tool])?.session).toBe('a');
    expect(p.match([user('read it'), call('call_1', '{"path":"b.txt"}'), tool])).toBeNull();
  });

  it('follows the newest turn only, forgets on request, and stays bounded', () => {
    const p = new SessionPairing({ maxSessions: 2 });
    p.remember('a', [user('1')], said('x'));
    p.remember('a', [user('1'), said('x'), user('2')], said('y'));
    // A replay of the older turn is a new conversation (a branch), not the session's next turn.
    expect(p.match([user('1'), said('x'), user('again')])).toBeNull();
    expect(p.match([user('1'), said('x'), user('2'), said('y'), user('3')])?.session).toBe('a');
    p.remember('b', [user('b')], said('b'));
    p.remember('c', [user('c')], said('c'));
    expect(p.size).toBe(2);
    expect(p.match([user('1'), said('x'), user('2'), said('y'), user('3')])).toBeNull();
    p.forget('b');
    expect(p.match([user('b'), said('b'), user('more')])).toBeNull();
    expect(p.match([user('c'), said('c'), user('more')])?.session).toBe('c');
  });
});
