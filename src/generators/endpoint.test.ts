import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeEndpoint, MAX_RESPONSE_BYTES, OpenAICompatibleGenerator, type EndpointConfig } from './endpoint';
import {
  EndpointAuthError,
  EndpointHttpError,
  EndpointNetworkError,
  EndpointNotFoundError,
  EndpointResponseError,
  EndpointTimeoutError,
} from './endpoint-errors';

const KEY = 'sk-test-SECRET-0123456789';

/** One scripted reply per request; the last one repeats. */
type Reply = (res: ServerResponse, body: string) => void;

const ok =
  (content: string): Reply =>
  (res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content } }] }));
  };
const status =
  (code: number, body = '', headers: Record<string, string> = {}): Reply =>
  (res) => {
    res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
    res.end(body);
  };
const garbage: Reply = (res) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end('<html>this is not json');
};
const silent: Reply = () => {
  // Never answers: the client's timeout must fire.
};

/** A body of up to 300 MB, written as fast as the client reads it; `sent` counts what went out. */
const endless =
  (code: number, sent: { bytes: number }): Reply =>
  (res) => {
    res.writeHead(code, { 'Content-Type': 'application/json' });
    res.write('{"choices": [{"message": {"content": "');
    const chunk = Buffer.alloc(1_000_000, 'a');
    const pump = () => {
      while (sent.bytes < 300_000_000 && !res.destroyed) {
        sent.bytes += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end('"}}]}');
    };
    pump();
  };

let server: Server;
let baseUrl: string;
let script: Reply[] = [];
let requests: { headers: IncomingMessage['headers']; body: string; url: string | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      requests.push({ headers: req.headers, body, url: req.url });
      const reply = script[Math.min(requests.length - 1, script.length - 1)];
      reply(res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

afterEach(() => {
  script = [];
  requests = [];
});

/** A generator whose backoff sleeps are recorded instead of waited. */
function client(overrides: Partial<EndpointConfig> = {}) {
  const sleeps: number[] = [];
  const generator = new OpenAICompatibleGenerator(
    { baseUrl, model: 'tiny-judge', apiKey: KEY, timeoutMs: 2_000, maxRetries: 2, retryBaseMs: 100, ...overrides },
    { sleep: async (ms) => void sleeps.push(ms) },
  );
  return { generator, sleeps };
}

const messages = [
  { role: 'system' as const, content: 'You are a judge.' },
  { role: 'user' as const, content: 'Score this.' },
];

describe('OpenAICompatibleGenerator against a local HTTP server', () => {
  it('posts an OpenAI chat-completions request and returns the message content', async () => {
    script = [ok('\\boxed{1}')];
    const { generator } = client();
    const text = await generator.generate(messages, { temperature: 0.6, topP: 0.9, maxNewTokens: 64, seed: 7 });
    expect(text).toBe('\\boxed{1}');
    expect(requests).toHaveLength(1);
    expect(requests[0].url).toBe('/v1/chat/completions');
    expect(requests[0].headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.parse(requests[0].body)).toEqual({
      model: 'tiny-judge',
      messages,
      stream: false,
      temperature: 0.6,
      top_p: 0.9,
      max_tokens: 64,
      seed: 7,
    });
    expect(generator.kind).toBe('endpoint');
  });

  it('sends no Authorization header without a key and tolerates a trailing slash in the base URL', async () => {
    script = [ok('hi')];
    const { generator } = client({ apiKey: undefined, baseUrl: `${baseUrl}/` });
    expect(await generator.generate(messages)).toBe('hi');
    expect(requests[0].url).toBe('/v1/chat/completions');
    expect(requests[0].headers.authorization).toBeUndefined();
  });

  it('retries a 429 after the Retry-After the server asks for, then succeeds', async () => {
    script = [status(429, '{"error":{"message":"slow down"}}', { 'Retry-After': '2' }), ok('done')];
    const { generator, sleeps } = client();
    expect(await generator.generate(messages)).toBe('done');
    expect(requests).toHaveLength(2);
    expect(sleeps).toEqual([2_000]);
  });

  it('backs off exponentially on 5xx and gives up after maxRetries with the status in the error', async () => {
    script = [status(500, '{"error":{"message":"CUDA out of memory"}}')];
    const { generator, sleeps } = client({ maxRetries: 3 });
    const error = await generator.generate(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointHttpError);
    expect((error as EndpointHttpError).status).toBe(500);
    expect((error as Error).message).toContain('CUDA out of memory');
    expect((error as Error).message).toContain('4 attempts');
    expect(requests).toHaveLength(4);
    expect(sleeps).toEqual([100, 200, 400]);
  });

  it('recovers when a 503 is followed by a success', async () => {
    script = [status(503), status(502), ok('back')];
    const { generator, sleeps } = client();
    expect(await generator.generate(messages)).toBe('back');
    expect(requests).toHaveLength(3);
    expect(sleeps).toEqual([100, 200]);
  });

  it('does not retry a 401 and says to check the API key, without revealing it', async () => {
    script = [status(401, JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }))];
    const { generator, sleeps } = client();
    const error = await generator.generate(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointAuthError);
    expect((error as Error).message).toContain('check the API key');
    expect((error as Error).message).not.toContain(KEY);
    expect(requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('does not retry a 404 and says to check base URL and model name', async () => {
    script = [status(404, '{"error":{"message":"The model `tiny-judge` does not exist"}}')];
    const { generator } = client();
    const error = await generator.generate(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointNotFoundError);
    expect((error as Error).message).toContain('check base URL and model name');
    expect((error as Error).message).toContain('does not exist');
    expect(requests).toHaveLength(1);
  });

  it('does not retry a 400 and quotes the server message with the key redacted', async () => {
    script = [status(400, JSON.stringify({ error: { message: `context too long; key was ${KEY}` } }))];
    const { generator } = client();
    const error = await generator.generate(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointHttpError);
    expect((error as Error).message).toContain('context too long');
    expect((error as Error).message).toContain('[redacted]');
    expect((error as Error).message).not.toContain(KEY);
    expect(requests).toHaveLength(1);
  });

  it('rejects a 200 whose body is not JSON, without retrying', async () => {
    script = [garbage];
    const { generator } = client();
    const error = await generator.generate(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointResponseError);
    expect((error as Error).message).toContain('not JSON');
    expect(requests).toHaveLength(1);
  });

  it('rejects JSON without choices[0].message.content', async () => {
    script = [status(200, '{"object":"list","data":[]}')];
    const { generator } = client();
    await expect(generator.generate(messages)).rejects.toBeInstanceOf(EndpointResponseError);
  });

  it('reports a network failure after retrying, naming the URL', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { generator, sleeps } = client({ baseUrl: `http://127.0.0.1:${port}/v1`, maxRetries: 1 });
    const error = await generator.generate(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointNetworkError);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
    expect((error as Error).message).not.toContain(KEY);
    expect(sleeps).toEqual([100]);
  });

  it('times out a server that never answers', async () => {
    script = [silent];
    const { generator } = client({ timeoutMs: 200, maxRetries: 1 });
    const error = await generator.generate(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointTimeoutError);
    expect(requests).toHaveLength(2);
  });

  it('times out a body that stalls after the headers, and retries it like any timeout', async () => {
    const stalled: Reply = (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"choices": [{"message": {"cont');
    };
    script = [stalled, stalled, ok('late but whole')];
    const { generator, sleeps } = client({ timeoutMs: 300, maxRetries: 1 });
    const error = await generator.generate(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointTimeoutError);
    expect((error as Error).message).toMatch(/did not answer within 0 s\. Raise the timeout/);
    expect(requests).toHaveLength(2);
    expect(sleeps).toEqual([100]);
    requests = [];
    const { generator: patient } = client({ timeoutMs: 300, maxRetries: 2 });
    script = [stalled, ok('late but whole')];
    expect(await patient.generate(messages)).toBe('late but whole');
  });

  it('stops reading a body past 16 MB, without retrying (the review read 300 MB whole)', async () => {
    const sent = { bytes: 0 };
    script = [endless(200, sent)];
    const { generator } = client();
    const error = await generator.generate(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointResponseError);
    expect((error as Error).message).toMatch(/sent a response that is not an OpenAI chat-completions answer \(the body is larger than 16 MB\)/);
    expect(requests).toHaveLength(1);
    expect(sent.bytes).toBeLessThan(100_000_000);
    requests = [];
    // A declared length over the cap is refused before a byte of the body is read.
    script = [
      (res) => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(MAX_RESPONSE_BYTES + 1) });
        res.write('{');
      },
    ];
    expect(await generator.generate(messages).catch((e: unknown) => e)).toBeInstanceOf(EndpointResponseError);
  });

  it('reads only the start of an endless error body, enough to quote it', async () => {
    const sent = { bytes: 0 };
    script = [endless(400, sent)];
    const { generator } = client();
    const error = await generator.generate(messages).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointHttpError);
    expect((error as Error).message).toMatch(/answered HTTP 400: \{"choices": \[\{"message": \{"content": "a{100}/);
    expect(sent.bytes).toBeLessThan(100_000_000);
  });

  it('stops at once when the caller aborts, without retrying', async () => {
    script = [silent];
    const { generator, sleeps } = client({ timeoutMs: 5_000 });
    const controller = new AbortController();
    const pending = generator.generate(messages, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stopped by the person')), 50);
    await expect(pending).rejects.toThrow('stopped by the person');
    expect(requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });
});

describe('endpoint configuration never carries the key', () => {
  const config: EndpointConfig = { baseUrl: 'http://127.0.0.1:8000/v1', model: 'qwen', apiKey: KEY };

  it('describeEndpoint drops the key and says whether there is one', () => {
    const described = describeEndpoint(config);
    expect(described).toEqual({
      baseUrl: 'http://127.0.0.1:8000/v1',
      model: 'qwen',
      timeoutMs: 120_000,
      maxRetries: 3,
      retryBaseMs: 1_000,
      label: 'qwen @ http://127.0.0.1:8000/v1',
      hasApiKey: true,
    });
    expect(JSON.stringify(described)).not.toContain(KEY);
  });

  it('toJSON, JSON.stringify, structuredClone and the label leave the key out', () => {
    const generator = new OpenAICompatibleGenerator(config);
    expect(JSON.stringify(generator)).not.toContain(KEY);
    expect(JSON.stringify(structuredClone(generator.toJSON()))).not.toContain(KEY);
    expect(Object.values(generator).join(' ')).not.toContain(KEY);
    expect(generator.label).not.toContain(KEY);
  });
});
