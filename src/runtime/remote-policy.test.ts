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

/** A policy server that answers with `reply` (a whole chat.completion body), and the bodies it was sent. */
function answering(reply: object) {
  const bodies: Record<string, unknown>[] = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    bodies.push(JSON.parse(String(init.body)));
    return new Response(JSON.stringify(reply), { headers: { 'content-type': 'application/json' } });
  }) as typeof globalThis.fetch;
  return { bodies, policy: new RemotePolicyService({ url: 'http://127.0.0.1:1/v1', model: 'm' }, { fetch, sessionPrefix: 'r-' }) };
}

const tokens = (texts: string[], logprob = -0.5) => ({ content: texts.map((token) => ({ token, logprob, bytes: [], top_logprobs: [] })) });

describe('a remote policy’s token ids', () => {
  it('are asked for as vLLM’s clients ask, and recorded with their log-probs, texts and the prompt’s ids', async () => {
    const { policy, bodies } = answering({
      prompt_token_ids: [1, 2, 3],
      choices: [{ message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop', token_ids: [40, 41], logprobs: tokens(['Hi', ' there']) }],
      nextstate: { version: 2, vocabSize: 100 },
    });
    const [reply] = await policy.generate([request]);
    expect(bodies[0]).toMatchObject({ return_token_ids: true, logprobs: true });
    expect(reply).toMatchObject({
      text: 'Hi there',
      tokenIds: [40, 41],
      logprobs: [-0.5, -0.5],
      tokenTexts: ['Hi', ' there'],
      promptIds: [1, 2, 3],
      version: 2,
    });
    // vLLM's completions put the prompt's ids on the choice: read there too.
    const onChoice = answering({
      choices: [{ message: { content: 'x' }, token_ids: [7], prompt_token_ids: [5], logprobs: tokens(['x']) }],
    });
    expect((await onChoice.policy.generate([request]))[0]).toMatchObject({ tokenIds: [7], promptIds: [5] });
  });

  it('are left out, as before, by a server that sends none, or ids without their log-probs', async () => {
    for (const choice of [{}, { token_ids: [4, 5] }]) {
      const { policy } = answering({ choices: [{ message: { content: 'ok' }, ...choice }] });
      const [reply] = await policy.generate([request]);
      expect(reply).toMatchObject({ text: 'ok', tokenIds: [], logprobs: [], tokenTexts: [] });
      expect(reply.promptIds).toBeUndefined();
    }
  });

  it('are refused in one line when they are not ids of the vocabulary, or do not match their log-probs', async () => {
    const cases: [object, RegExp][] = [
      [
        { token_ids: [1, 100], logprobs: tokens(['a', 'b']) },
        /choices\[0\]\.token_ids\[1\] is 100, not a token id: an integer from 0 below the vocabulary size it reports, 100/,
      ],
      [{ token_ids: [1, 2.5], logprobs: tokens(['a', 'b']) }, /token_ids\[1\] is 2\.5/],
      [{ token_ids: 'abc', logprobs: tokens(['a']) }, /token_ids is not a list of token ids/],
      [{ token_ids: [1, 2], logprobs: tokens(['a']) }, /token_ids has 2 ids but choices\[0\]\.logprobs\.content has 1 tokens/],
      [{ token_ids: [1], logprobs: tokens(['a'], Number.NaN) }, /logprobs\.content\[0\]\.logprob is not a finite number/],
      [{ token_ids: [1], logprobs: tokens(['a']), prompt_token_ids: [-1] }, /choices\[0\]\.prompt_token_ids\[0\] is -1/],
    ];
    for (const [choice, message] of cases) {
      const { policy } = answering({ choices: [{ message: { content: 'ab' }, ...choice }], nextstate: { version: 0, vocabSize: 100 } });
      const e = (await policy.generate([request]).catch((x: unknown) => x)) as Error;
      expect(e.message).toMatch(message);
      expect(e.message).not.toContain('\n');
    }
  });
});
