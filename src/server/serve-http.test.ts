import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import OpenAI, { APIError } from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EnginePolicyService, PolicyReply, PolicyRequest } from '../runtime/policy-service';
import { readRunFile, type RunFileItem } from '../storage/reader';
import { startTestServer, until, type TestServer } from '../../test/support/cli/serve';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.handle.stop();
  server = null;
});

/** A raw POST, so the test controls every byte and header. */
async function post(s: TestServer, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.handle.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  return {
    status: res.status,
    text,
    headers: res.headers,
    json: JSON.parse(text) as { error: { message: string; code: string | null; param: string | null } },
  };
}

/** Every error is one line of JSON in OpenAI's shape. */
function expectOneLineError(r: { text: string; json: { error: { message: string } } }) {
  expect(r.text.includes('\n')).toBe(false);
  expect(r.json.error.message.length).toBeGreaterThan(10);
}

describe('nextstate serve refuses bad input with a status and a one-line JSON error', () => {
  it('400 for malformed JSON and for a body outside the schema, 404 for an unknown model or route, 413 for an oversized body', async () => {
    server = await startTestServer(['--max-body-bytes', '4000']);
    const malformed = await post(server, '{"messages": [');
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.code).toBe('invalid_json');
    expectOneLineError(malformed);

    for (const [body, param] of [
      [{ messages: [] }, 'messages'],
      [{ messages: [{ role: 'wizard', content: 'hi' }] }, 'messages[0].role'],
      [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, 'messages[0].content[0]'],
      [{ messages: [{ role: 'user', content: 'hi' }], max_tokens: -1 }, 'max_tokens'],
      [{ messages: [{ role: 'user', content: 'hi' }], n: 2 }, 'n'],
      [{ messages: [{ role: 'user', content: 'hi' }], temperature: 'hot' }, 'temperature'],
      [{ messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function' }] }, 'tools[0]'],
    ] as const) {
      const r = await post(server, JSON.stringify(body));
      expect([r.status, r.json.error.param]).toEqual([400, param]);
      expectOneLineError(r);
    }
    const long = await post(server, JSON.stringify({ messages: [{ role: 'user', content: 'hello' }], max_tokens: 1 }), { 'X-Turn-Type': 'sideways' });
    expect([long.status, long.json.error.param]).toEqual([400, 'X-Turn-Type']);

    const unknown = await server.client.chat.completions.create({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] }).catch((e: APIError) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect((unknown as APIError).message).toMatch(/"gpt-5" is not served here; this server serves/);
    const route = await fetch(`${server.handle.url}/v1/embeddings`, { method: 'POST', body: '{}' });
    expect(route.status).toBe(404);

    const big = await post(server, JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(5000) }] }));
    expect([big.status, big.json.error.code]).toEqual([413, 'request_too_large']);
    expectOneLineError(big);
    // None of them reached the model.
    expect(server.handle.runFile.all).toEqual([]);
  });

  it('400 before any tokenizing for text past the prompt budget and for JSON deeper than a run file line may be; a request at the limits is served after', async () => {
    server = await startTestServer(['--max-tokens', '2']);
    const { tokenizer } = (server.handle.loop.policy as EnginePolicyService).policy;
    const rendered = vi.spyOn(tokenizer, 'chatPrompt');
    const encoded = vi.spyOn(tokenizer, 'encode');
    const hi = [{ role: 'user', content: 'hi' }];

    // The tiny model's 512 positions hold 4,096 characters: "hi", "function", "read" and 1 MB of description pass them.
    const described = await post(
      server,
      JSON.stringify({ messages: hi, tools: [{ type: 'function', function: { name: 'read', description: 'd'.repeat(1_000_000) } }] }),
    );
    expect([described.status, described.json.error.code, described.json.error.param]).toEqual([
      400,
      'context_length_exceeded',
      'tools[0].function.description',
    ]);
    expect(described.json.error.message).toBe(
      "tools[0].function.description brings the text to 1,000,014 characters, more than this model's 512 positions can hold (4,096 characters at most, 8 a token); shorten it or the text before it",
    );
    expectOneLineError(described);
    // A megabyte of stop string is over its own limit; four of the most each may have count with the messages.
    const stop = await post(server, JSON.stringify({ messages: hi, stop: ['s'.repeat(1_000_000)] }));
    expect([stop.status, stop.json.error.param, stop.json.error.message]).toEqual([400, 'stop[0]', 'stop[0] has 1000000 characters; the limit is 256']);
    const stops = await post(server, JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(3100) }], stop: Array(4).fill('s'.repeat(256)) }));
    // 3,100 + 4 × 256 = 4,124.
    expect([stops.status, stops.json.error.param]).toEqual([400, 'stop[3]']);
    expect(stops.json.error.message).toMatch(/^stop\[3\] brings the text to 4,124 characters/);

    // A schema of `levels` nested arrays: the body nests 4 levels more (itself, tools, the tool, its function).
    const nested = (levels: number) =>
      `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"deep","parameters":${'['.repeat(levels)}${']'.repeat(levels)}}}]}`;
    for (const levels of [300, 100_000]) {
      const deep = await post(server, nested(levels));
      expect([deep.status, deep.json.error.code]).toEqual([400, 'nested_too_deep']);
      expect(deep.json.error.message).toBe('request body nests deeper than 256 levels, the most a run file line may; send tool schemas with fewer levels');
      expectOneLineError(deep);
    }
    expect(rendered).not.toHaveBeenCalled();
    expect(encoded).not.toHaveBeenCalled();
    expect(server.handle.runFile.all).toEqual([]);

    // 256 levels in all: served, journaled, and the run file it writes reads back whole.
    const edge = await post(server, nested(252));
    expect(edge.status, edge.text).toBe(200);
    const file = server.file;
    await server.handle.stop();
    server = null;
    const items: RunFileItem[] = [];
    for await (const item of readRunFile(readFileSync(file))) items.push(item);
    const interaction = items.find((i) => i.kind === 'record' && i.record.kind === 'interaction');
    expect(JSON.stringify(interaction?.kind === 'record' && interaction.record.kind === 'interaction' && interaction.record.tools)).toContain('['.repeat(252));
    expect(items.at(-1)?.kind).toBe('end');
  });

  it('401 without the key or with a wrong one; the right key is served, on every route, /healthz too', async () => {
    server = await startTestServer([], { apiKey: 'sk-test-key' });
    const none = await post(server, JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
    expect([none.status, none.json.error.code]).toEqual([401, 'missing_api_key']);
    expectOneLineError(none);
    const wrong = await post(server, JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }), { authorization: 'Bearer sk-nope' });
    expect([wrong.status, wrong.json.error.code]).toEqual([401, 'invalid_api_key']);
    const models = await fetch(`${server.handle.url}/v1/models`);
    expect(models.status).toBe(401);
    // Health says which step trains and since when: the key's holder's business only.
    expect((await fetch(`${server.handle.url}/healthz`)).status).toBe(401);
    expect((await fetch(`${server.handle.url}/healthz`, { headers: { authorization: 'Bearer sk-test-key' } })).status).toBe(200);
    const ok = await server.client.chat.completions.create({ model: server.model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    expect(ok.choices).toHaveLength(1);
  });

  it('refuses to listen beyond loopback without a key, and never writes the key to the run file', async () => {
    await expect(startTestServer(['--host', '0.0.0.0'])).rejects.toThrow(/--api-key/);
    server = await startTestServer([], { apiKey: 'sk-secret-123' });
    await server.client.chat.completions.create({ model: server.model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    await server.handle.stop();
    expect(gunzipSync(readFileSync(server.file)).toString('utf8')).not.toContain('sk-secret-123');
    expect(readFileSync(`${server.file}.journal`, 'utf8')).not.toContain('sk-secret-123');
    server = null;
  });

  it('429 with Retry-After past the in-flight limit; a client that disconnects mid-stream cancels its generation', async () => {
    server = await startTestServer(['--max-in-flight', '1', '--max-tokens', '480']);
    const policy = server.handle.loop.policy;
    const generate = policy.generate.bind(policy);
    const seen: { requests: PolicyRequest[]; replies: PolicyReply[] }[] = [];
    policy.generate = async (requests, signal, hooks) => {
      const replies = await generate(requests, signal, hooks);
      seen.push({ requests, replies });
      return replies;
    };
    const abort = new AbortController();
    const res = await fetch(`${server.handle.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: server.model, messages: [{ role: 'user', content: 'Write a very long story.' }], max_tokens: 480, stream: true }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    // The first event (the role) is out: the request is in flight.
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('"role":"assistant"');
    // Then the reply's first tokens, while it is still being generated.
    let events = '';
    while (!events.includes('"content"')) events += new TextDecoder().decode((await reader.read()).value);
    expect(seen).toHaveLength(0);
    const refused = await post(server, JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expectOneLineError(refused);

    abort.abort();
    await until(() => seen.length === 1, 60_000, 'the cancelled generation to return');
    expect(seen[0].replies[0].finishReason).toBe('aborted');
    expect(seen[0].replies[0].tokenIds.length).toBeLessThan(480);
    // A cancelled request is not logged, and the server answers the next one.
    const next = await server.client.chat.completions.create({ model: server.model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    expect(next.choices[0].finish_reason).toBe('length');
    expect(server.handle.runFile.all.filter((r) => r.kind === 'interaction')).toHaveLength(1);
  });
});

describe('nextstate serve’s record feed, for the lab watching a live run', () => {
  it('streams the run and then each commit as it lands, from any record on; CORS to --allow-origin only', async () => {
    const LAB = 'http://localhost:5173';
    server = await startTestServer(['--max-tokens', '2', '--allow-origin', LAB]);
    const { client, model } = server;
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'first' }] });
    const preflight = await fetch(`${server.handle.url}/v1/nextstate/records`, { method: 'OPTIONS', headers: { origin: LAB } });
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, LAB]);
    // Another page may not read the conversations: refused, and without CORS its browser hides even that.
    const foreign = await fetch(`${server.handle.url}/v1/nextstate/records?from=1`, { headers: { origin: 'https://evil.example' } });
    expect([foreign.status, foreign.headers.get('access-control-allow-origin')]).toEqual([403, null]);
    expect(JSON.parse(await foreign.text()).error.message).toBe(
      'a page at https://evil.example may not read /v1/nextstate/records; start nextstate serve with --allow-origin https://evil.example to allow it',
    );
    const abort = new AbortController();
    const res = await fetch(`${server.handle.url}/v1/nextstate/records?from=1`, { headers: { origin: LAB }, signal: abort.signal });
    expect(res.headers.get('access-control-allow-origin')).toBe(LAB);
    const events: { type: string; from?: number; records?: { kind: string; messages?: { content: string }[] }[]; label?: string }[] = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      const body = res.body!.getReader();
      for (let chunk = await body.read(); !chunk.done; chunk = await body.read()) {
        buffer += decoder.decode(chunk.value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (event.startsWith('data: ')) events.push(JSON.parse(event.slice(6)));
        }
      }
    })().catch(() => {});
    await until(() => events.length >= 2, 10_000, 'the run and its first record');
    expect(events[0]).toMatchObject({ type: 'run', label: expect.stringContaining('serve') });
    expect(events[1]).toMatchObject({ type: 'records', from: 1, records: [{ kind: 'interaction', messages: [{ content: 'first' }] }] });
    await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'second' }] });
    await until(() => events.length >= 3, 10_000, 'the next commit');
    expect(events[2]).toMatchObject({ type: 'records', from: 2, records: [{ kind: 'interaction', messages: [{ content: 'second' }] }] });
    // A request without a page's origin (an agent) gets no CORS.
    const chat = await fetch(`${server.handle.url}/v1/chat/completions`, { method: 'POST', body: '{' });
    expect(chat.headers.get('access-control-allow-origin')).toBeNull();
    // A page of another site posting text/plain to this keyless server is refused, not served.
    const page = await fetch(`${server.handle.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'text/plain' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'from a page' }] }),
    });
    expect(page.status).toBe(403);
    abort.abort();
    await reading;
    const late = await fetch(`${server.handle.url}/v1/nextstate/records?from=2`);
    const reader = late.body!.getReader();
    let text = '';
    while (!text.includes('"from":2')) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).not.toContain('"content":"first"');
    // Stopping the server ends the feed instead of waiting for the watcher.
    await server.handle.stop();
    server = null;
    let ended = false;
    for (let i = 0; i < 10 && !ended; i++) ended = (await reader.read()).done;
    expect(ended).toBe(true);
  });
});

describe('nextstate serve --allow-origin, for the lab driving the server as its policy', () => {
  it('answers the pages of the origins it names with CORS on chat and models, and no other page', async () => {
    await expect(startTestServer(['--allow-origin', 'http://localhost:5173/lab'])).rejects.toThrow(
      /--allow-origin: "http:\/\/localhost:5173\/lab" is not an origin/,
    );
    const LAB = 'http://localhost:5173';
    server = await startTestServer(['--max-tokens', '2', '--allow-origin', `${LAB}, https://lab.example`], { apiKey: 'sk-cors' });
    const preflight = await fetch(`${server.handle.url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: LAB, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-session-id' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(LAB);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-session-id');
    const body = JSON.stringify({ model: server.model, messages: [{ role: 'user', content: 'hi' }] });
    const answered = await post(server, body, { origin: LAB, authorization: 'Bearer sk-cors', 'x-session-id': 'lab-1', 'x-turn-type': 'main' });
    expect([answered.status, answered.headers.get('access-control-allow-origin')]).toEqual([200, LAB]);
    // Its errors reach the page too, so it can say what to do.
    const refused = await post(server, body, { origin: 'https://lab.example' });
    expect([refused.status, refused.headers.get('access-control-allow-origin')]).toEqual([401, 'https://lab.example']);
    const models = await fetch(`${server.handle.url}/v1/models`, { headers: { origin: LAB, authorization: 'Bearer sk-cors' } });
    expect(models.headers.get('access-control-allow-origin')).toBe(LAB);
    // Another page gets no CORS: its browser keeps the answer from it.
    // Nor is it served: a form or a text/plain fetch needs no preflight, so only this refusal
    // keeps another site from training the policy, with or without a key.
    const other = await post(server, body, { origin: 'https://evil.example', authorization: 'Bearer sk-cors' });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.status).toBe(403);
    expect(JSON.parse(other.text).error.message).toBe(
      'a page at https://evil.example may not send chat requests; start nextstate serve with --allow-origin https://evil.example to allow it',
    );
    const otherPreflight = await fetch(`${server.handle.url}/v1/chat/completions`, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    expect(otherPreflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});
