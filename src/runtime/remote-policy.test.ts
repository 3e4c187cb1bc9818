import { describe, expect, it } from 'vitest';
import { replyMessage } from '../rl/tool-calls';
import { RemotePolicyService } from './remote-policy';

/** A policy server that answers every request with `message`, and the bodies it was sent. */
function server(message: object) {
  const bodies: Record<string, unknown>[] = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    bodies.push(JSON.parse(String(init.body)));
    return new Response(JSON.stringify({ choices: [{ message: { role: 'assistant', ...message }, finish_reason: 'tool_calls' }] }), {
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof globalThis.fetch;
  return { bodies, policy: new RemotePolicyService({ url: 'http://127.0.0.1:1/v1', model: 'm' }, { fetch, sessionPrefix: 'r-' }) };
}

const request = {
  messages: [{ role: 'user' as const, content: 'read homework/0.txt' }],
  tools: [{ type: 'function', function: { name: 'read' } }],
  maxNewTokens: 8,
  sampling: { temperature: 1, topP: 1, topK: 0 },
  seed: 1,
};

describe('a remote policy’s tool calls', () => {
  it('come back into the reply’s text as the model wrote them, when the server parsed them out', async () => {
    const calls = [{ id: 'call_0', type: 'function', function: { name: 'read', arguments: '{"path":"homework/0.txt"}' } }];
    const { policy, bodies } = server({ content: 'Let me look.', tool_calls: calls });
    const [reply] = await policy.generate([request]);
    expect(bodies[0].tools).toEqual(request.tools);
    expect(reply.text).toBe('Let me look.\n<tool_call>\n{"name":"read","arguments":{"path":"homework/0.txt"}}\n</tool_call>');
    expect(replyMessage(reply.text, true, 'call').tool_calls).toEqual(calls);
  });

  it('refuses tool calls that are not function calls, in one line', async () => {
    const { policy } = server({ content: '', tool_calls: [{ function: { name: 'read', arguments: { path: 'x' } } }] });
    await expect(policy.generate([request])).rejects.toThrow(/tool_calls is not a list of function calls with a name and string arguments/);
  });
});
