/**
 * The HTTP side of `nextstate serve`, on Node's http module: routes, the Bearer key, body and
 * concurrency limits, JSON errors, server-sent events, and a client that goes away. It knows
 * nothing of models or training; the chat handler (serve-chat.ts) does.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_LINE_DEPTH, nestsDeeperThan } from '../base/json-scan';
import { ApiError } from './serve-errors';
import { hostAllowed, hostName } from './serve-host';
import { AddressSlots, perAddressShare } from './serve-slots';

/** Writes one event stream: `data: JSON` events, then `data: [DONE]`. */
export interface EventStream {
  send(event: object): void;
  /** A comment line: keeps proxies and clients with idle timeouts from closing the stream. */
  keepAlive(): void;
  done(): void;
}

export interface ChatHandler {
  /** GET /v1/models. */
  models(): object;
  /** GET /healthz. */
  health(): object;
  /**
   * POST /v1/chat/completions with its parsed body. Returns the JSON answer, or calls `open`
   * (once, before any event) and writes the answer as events. `signal` fires when the client
   * goes away before the answer is complete.
   */
  chat(body: unknown, headers: IncomingMessage['headers'], signal: AbortSignal, open: () => EventStream): Promise<object | void>;
  /**
   * GET /v1/nextstate/records?from=SEQ: the run's records as events, those committed so far and
   * then each as it is committed, until `signal` fires (the watcher went away).
   */
  records(from: number, stream: EventStream, signal: AbortSignal): void;
}

export interface HttpOptions {
  host: string;
  port: number;
  /** Required as `Authorization: Bearer KEY` on every route; undefined: no key (loopback only, the CLI checks). */
  apiKey?: string;
  maxBodyBytes: number;
  /** Chat requests in flight at most; more get 429 with Retry-After. */
  maxInFlight: number;
  /** Origins whose pages may use the server (CORS, and requests that carry an Origin); none by default. */
  allowOrigins?: readonly string[];
  /** Names a request's Host may give besides the bound address (see serve-host.ts). */
  allowHosts?: readonly string[];
  /** A request's headers must arrive within this (default 10 s); then 408 and the connection closes. */
  headersTimeoutMs?: number;
  /** A request's headers and body must arrive within this (default 60 s); then 408 and the connection closes. */
  requestTimeoutMs?: number;
}

/** What a page of an allowed origin may send: the key and the session protocol's headers. */
const CORS_HEADERS = 'authorization, content-type, x-session-id, x-turn-type, x-session-done';

export interface RunningServer {
  url: string;
  server: Server;
  /** Stops accepting connections and ends idle ones; requests in flight finish. */
  close(): Promise<void>;
}

const KEEP_ALIVE_MS = 15_000;
const RETRY_AFTER_S = 1;
const CLOSE_GRACE_MS = 1000;
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 60_000;

/** Compared through digests, so neither the time taken nor a length check leaks the key. */
function sameKey(given: string, expected: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function checkKey(req: IncomingMessage, apiKey: string | undefined): void {
  if (apiKey === undefined) return;
  const auth = req.headers.authorization ?? '';
  const m = /^Bearer\s+(.+)$/i.exec(auth);
  if (!m)
    throw new ApiError(
      401,
      'missing API key: send it as "Authorization: Bearer KEY" (the key nextstate serve was started with)',
      'authentication_error',
      'missing_api_key',
    );
  if (!sameKey(m[1].trim(), apiKey))
    throw new ApiError(401, 'wrong API key: send the --api-key nextstate serve was started with', 'authentication_error', 'invalid_api_key');
}

/** The body as JSON, at most maxBytes: larger bodies get 413 before or as soon as they pass it. */
async function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const tooLarge = () =>
    new ApiError(
      413,
      `request body is larger than ${maxBytes} bytes; send a shorter conversation or start the server with a larger --max-body-bytes`,
      'invalid_request_error',
      'request_too_large',
      null,
      {
        connection: 'close',
      },
    );
  const encoding = req.headers['content-encoding']?.trim().toLowerCase();
  // Nothing here inflates a body: a gzip bomb of a few KB would otherwise be read as gigabytes.
  if (encoding && encoding !== 'identity')
    throw new ApiError(
      415,
      `Content-Encoding ${encoding.slice(0, 40)} is not accepted; send the body uncompressed`,
      'invalid_request_error',
      'unsupported_encoding',
      null,
      { connection: 'close' },
    );
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  // Counted in one pass without recursion, before JSON.parse or anything recursive (a clone, a
  // template) sees the value: 100,000 levels overflowed the stack, and a journaled line deeper
  // than the run file's reader takes would leave the run file unreadable for good.
  if (nestsDeeperThan(text, MAX_LINE_DEPTH)) {
    throw new ApiError(
      400,
      `request body nests deeper than ${MAX_LINE_DEPTH} levels, the most a run file line may; send tool schemas with fewer levels`,
      'invalid_request_error',
      'nested_too_deep',
    );
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ApiError(
      400,
      `request body is not valid JSON (${(e as Error).message.split('\n')[0]}); send a JSON object`,
      'invalid_request_error',
      'invalid_json',
    );
  }
}

function sendJson(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

function eventStream(res: ServerResponse, headers: Record<string, string> = {}): EventStream {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
  res.flushHeaders();
  // A client that went away mid-reply hears nothing more (its generation may go on in a batch).
  const write = (text: string) => void (res.destroyed || res.writableEnded || res.write(text));
  return {
    send: (event) => write(`data: ${JSON.stringify(event)}\n\n`),
    keepAlive: () => write(': keep-alive\n\n'),
    done: () => {
      write('data: [DONE]\n\n');
      res.end();
    },
  };
}

/** 429 with Retry-After; `close` ends the connection (its body is not read). */
function tooMany(message: string, close = false): ApiError {
  return new ApiError(429, message, 'rate_limit_error', 'too_many_requests', null, {
    'retry-after': String(RETRY_AFTER_S),
    ...(close ? { connection: 'close' } : {}),
  });
}

export async function startHttpServer(options: HttpOptions, handler: ChatHandler): Promise<RunningServer> {
  /** Record feeds never end by themselves: closing the server ends them. */
  const watchers = new Map<EventStream, ServerResponse>();

  const slots = new AddressSlots(options.maxInFlight, perAddressShare(options.maxInFlight));
  // Bodies still arriving hold no slot; they are counted apart so one address cannot open endless ones.
  const bodies = new AddressSlots(Infinity, options.maxInFlight);

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const address = req.socket.remoteAddress ?? 'unknown';
    const reading = bodies.take(address);
    if (typeof reading !== 'function') {
      throw tooMany(
        `this client (${address}) is already sending ${bodies.taken(address)} request bodies, the most one address may (--max-in-flight); finish those first`,
        true,
      );
    }
    let body: unknown;
    try {
      body = await readJson(req, options.maxBodyBytes);
    } finally {
      reading();
    }
    // The slot is taken once the whole body is here: a client that sends slowly holds none.
    const slot = slots.take(address);
    if (slot === 'full') throw tooMany(`${slots.taken()} requests are in flight, the most this server takes (--max-in-flight); retry after ${RETRY_AFTER_S} s`);
    if (slot === 'address') {
      throw tooMany(
        `this client (${address}) has ${slots.taken(address)} requests in flight, the most one address may while ${options.maxInFlight - slots.perAddress} of --max-in-flight ${options.maxInFlight} stay for other clients; retry after ${RETRY_AFTER_S} s`,
      );
    }
    const abort = new AbortController();
    let stream: EventStream | null = null;
    let timer: ReturnType<typeof setInterval> | null = null;
    res.on('close', () => {
      if (!res.writableFinished) abort.abort(new DOMException('the client closed the connection', 'AbortError'));
    });
    try {
      const open = () => {
        stream = eventStream(res);
        timer = setInterval(() => stream!.keepAlive(), KEEP_ALIVE_MS);
        return stream;
      };
      const answer = await handler.chat(body, req.headers, abort.signal, open);
      if (answer) sendJson(res, 200, JSON.stringify(answer));
    } catch (e) {
      if (abort.signal.aborted) return;
      const error = e instanceof ApiError ? e : new ApiError(500, (e as Error).message?.split('\n')[0] ?? String(e), 'server_error', 'internal_error');
      if (stream) {
        // Headers are out: the error goes as the stream's last event, as OpenAI's API does.
        (stream as EventStream).send(JSON.parse(error.body()));
        (stream as EventStream).done();
      } else sendJson(res, error.status, error.body(), error.headers);
    } finally {
      if (timer) clearInterval(timer);
      slot();
    }
  }

  function follow(req: IncomingMessage, res: ServerResponse): void {
    const from = Number(new URL(req.url ?? '/', 'http://server').searchParams.get('from') ?? '1');
    if (!Number.isSafeInteger(from) || from < 1)
      throw new ApiError(400, `from must be a record number from 1, got ${JSON.stringify(from)}`, 'invalid_request_error', 'invalid_value', 'from');
    const abort = new AbortController();
    const stream = eventStream(res);
    const timer = setInterval(() => stream.keepAlive(), KEEP_ALIVE_MS);
    watchers.set(stream, res);
    res.on('close', () => {
      clearInterval(timer);
      watchers.delete(stream);
      abort.abort();
    });
    handler.records(from, stream, abort.signal);
  }

  const ROUTES = new Set(['/v1/chat/completions', '/v1/models', '/v1/nextstate/records', '/healthz', '/health']);

  /**
   * What every route checks first: the Host names this server, a page's origin is one of
   * --allow-origin's (which then gets CORS), and the key when one is set. A preflight carries no
   * key, so it is answered after the first two.
   *
   * @returns true when the request was a preflight, answered here
   */
  function admit(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    if (!hostAllowed(req.headers.host, options.host, options.allowHosts ?? [])) {
      const name = hostName(req.headers.host!);
      throw new ApiError(
        403,
        `Host "${name}" is not a name of this server (${options.host}), as a page reaching it through its own name (DNS rebinding) would send; start nextstate serve with --allow-host ${name} to allow it`,
        'invalid_request_error',
        'host_not_allowed',
      );
    }
    // Agents send no Origin; a browser always does. A page of another site could otherwise post
    // a text/plain body with no preflight and train this policy on it, or read every record.
    const origin = req.headers.origin;
    if (origin !== undefined) {
      if (!options.allowOrigins?.includes(origin))
        throw new ApiError(
          403,
          `a page at ${origin} may not ${path === '/v1/chat/completions' ? 'send chat requests' : `read ${path}`}; start nextstate serve with --allow-origin ${origin} to allow it`,
          'invalid_request_error',
          'origin_not_allowed',
        );
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('vary', 'Origin');
    }
    if (req.method === 'OPTIONS' && ROUTES.has(path)) {
      res.writeHead(204, {
        'access-control-allow-headers': CORS_HEADERS,
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-max-age': '600',
      });
      res.end();
      return true;
    }
    checkKey(req, options.apiKey);
    return false;
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '') || '/';
    try {
      if (admit(req, res, path)) return;
      if (path === '/healthz' || path === '/health') {
        if (req.method !== 'GET') throw new ApiError(405, `${path} takes GET`);
        return sendJson(res, 200, JSON.stringify(handler.health()));
      }
      if (path === '/v1/models') {
        if (req.method !== 'GET') throw new ApiError(405, '/v1/models takes GET');
        return sendJson(res, 200, JSON.stringify(handler.models()));
      }
      if (path === '/v1/nextstate/records') {
        if (req.method !== 'GET') throw new ApiError(405, '/v1/nextstate/records takes GET');
        return follow(req, res);
      }
      if (path === '/v1/chat/completions') {
        if (req.method !== 'POST') throw new ApiError(405, '/v1/chat/completions takes POST');
        return await chat(req, res);
      }
      throw new ApiError(
        404,
        `no route ${req.method} ${path}; this server has POST /v1/chat/completions, GET /v1/models, GET /v1/nextstate/records and GET /healthz`,
        'invalid_request_error',
        'not_found',
      );
    } catch (e) {
      req.resume();
      const error = e instanceof ApiError ? e : new ApiError(500, String((e as Error).message ?? e).split('\n')[0], 'server_error', 'internal_error');
      sendJson(res, error.status, error.body(), error.headers);
    }
  }

  const headersTimeout = options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const requestTimeout = Math.max(headersTimeout, options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS);
  const server = createServer(
    // Node checks both timeouts only every connectionsCheckingInterval (30 s by default), which
    // would let a slow client hold its connection that much longer than the limit says.
    { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1000, headersTimeout) },
    (req, res) => void route(req, res),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A feed's socket would otherwise idle in keep-alive, and close() would wait out its timeout.
        for (const [stream, res] of watchers) {
          res.once('finish', () => res.socket?.destroy());
          stream.done();
        }
        server.closeIdleConnections();
        // The loop has stopped, so no answer is still coming: a second later, whatever is left
        // open (a watcher's socket the client abandoned without closing) is closed.
        setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref();
      }),
  };
}
