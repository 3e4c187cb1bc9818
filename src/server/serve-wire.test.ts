/**
 * The wire under hostile clients, on the HTTP layer alone (a stand-in chat handler, no model):
 * slow senders, one address that wants every slot. Clients on 127.0.0.2 are other addresses than
 * 127.0.0.1 on the same loopback.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { hostAllowed } from './serve-host';
import { startHttpServer, type ChatHandler, type HttpOptions, type RunningServer } from './serve-http';

let running: RunningServer | null = null;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await running?.close();
  running = null;
});

/** Answers at once, except a request whose body says `hold`: that one waits for `release()`. */
function handler() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = 0;
  const chat: ChatHandler = {
    models: () => ({ object: 'list', data: [] }),
    health: () => ({ ok: true }),
    chat: async (body) => {
      if ((body as { hold?: boolean }).hold) {
        held++;
        await gate;
      }
      return { ok: true };
    },
    records: () => {},
  };
  return { chat, release, held: () => held };
}

async function serve(chat: ChatHandler, options: Partial<HttpOptions> = {}): Promise<RunningServer> {
  running = await startHttpServer({ host: '127.0.0.1', port: 0, maxBodyBytes: 1 << 20, maxInFlight: 2, ...options }, chat);
  return running;
}

const port = (s: RunningServer) => Number(new URL(s.url).port);

/** A POST from `localAddress`, read whole. */
function post(s: RunningServer, body: object, localAddress = '127.0.0.1'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port: port(s), localAddress, method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' } },
      (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (out += c));
        res.on('end', () => resolve({ status: res.statusCode!, text: out }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/**
 * A client that sends its headers, then its body one byte at a time every `everyMs`, never
 * finishing; resolves with what the server sent back once the connection closes.
 */
function slowClient(s: RunningServer, localAddress: string, everyMs: number, headers = true): { closed: Promise<string>; sent: Promise<void> } {
  const socket = connect({ host: '127.0.0.1', port: port(s), localAddress });
  sockets.push(socket);
  let reply = '';
  socket.setEncoding('utf8');
  socket.on('data', (c: string) => (reply += c));
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(reply)));
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${port(s)}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n`;
  const sent = new Promise<void>((resolve) =>
    socket.once('connect', () => {
      socket.write(headers ? head + '\r\n{' : head + 'X-Slow: ');
      const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(headers ? ' ' : 'x')), everyMs);
      socket.once('close', () => clearInterval(timer));
      // The server has the headers (and a byte of body) once it has answered nothing for a moment.
      setTimeout(resolve, 2 * everyMs);
    }),
  );
  return { closed, sent };
}

describe('nextstate serve against slow clients', () => {
  it('a body still arriving, one byte at a time, holds no in-flight slot: honest clients are served meanwhile', async () => {
    const s = await serve(handler().chat, { maxInFlight: 2 });
    // Two slow bodies from each of two addresses: as many as --max-in-flight, twice over.
    const slow = ['127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3'].map((a) => slowClient(s, a, 50));
    await Promise.all(slow.map((c) => c.sent));
    for (let i = 0; i < 3; i++) expect(await post(s, { hi: i })).toEqual({ status: 200, text: '{"ok":true}' });
  });

  it('one address may send no more bodies at once than --max-in-flight; the next is refused in one line', async () => {
    const s = await serve(handler().chat, { maxInFlight: 2 });
    const slow = [slowClient(s, '127.0.0.2', 50), slowClient(s, '127.0.0.2', 50)];
    await Promise.all(slow.map((c) => c.sent));
    const refused = await post(s, { hi: 1 }, '127.0.0.2');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.text).error.message).toMatch(/^this client \(127\.0\.0\.2\) is already sending 2 request bodies, the most one address may/);
    expect(refused.text).not.toContain('\n');
    expect((await post(s, { hi: 2 })).status).toBe(200);
  });

  it('headers or a body that do not arrive within their timeouts get 408 and the connection closes', async () => {
    const s = await serve(handler().chat, { headersTimeoutMs: 200, requestTimeoutMs: 400 });
    const noHeaders = slowClient(s, '127.0.0.2', 50, false);
    const slowBody = slowClient(s, '127.0.0.2', 50);
    expect(await noHeaders.closed).toMatch(/^HTTP\/1\.1 408 /);
    expect(await slowBody.closed).toMatch(/^HTTP\/1\.1 408 /);
    expect((await post(s, { hi: 1 }, '127.0.0.2')).status).toBe(200);
  });
});

describe('nextstate serve reads bodies as they are sent', () => {
  it('refuses a compressed body (a gzip bomb) with 415 in one line, without inflating it', async () => {
    const s = await serve(handler().chat);
    const bomb = gzipSync(Buffer.alloc(10 << 20, 0x20));
    const r = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
      body: bomb,
    });
    expect(r.status).toBe(415);
    expect(JSON.parse(await r.text()).error.message).toBe('Content-Encoding gzip is not accepted; send the body uncompressed');
    expect((await post(s, { hi: 1 })).status).toBe(200);
  });
});

describe('nextstate serve shares its in-flight slots among addresses', () => {
  it('one address holds at most three of four; the fourth stays for another address', async () => {
    const h = handler();
    const s = await serve(h.chat, { maxInFlight: 4 });
    const held = [1, 2, 3].map(() => post(s, { hold: true }, '127.0.0.2'));
    while (h.held() < 3) await new Promise((r) => setTimeout(r, 10));
    const refused = await post(s, { hold: true }, '127.0.0.2');
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.text).error.message).toBe(
      'this client (127.0.0.2) has 3 requests in flight, the most one address may while 1 of --max-in-flight 4 stay for other clients; retry after 1 s',
    );
    expect(await post(s, { hi: 1 })).toEqual({ status: 200, text: '{"ok":true}' });
    h.release();
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await post(s, { hi: 2 }, '127.0.0.2')).status).toBe(200);
  });
});

/** A GET with the headers given as they are (Host included), from 127.0.0.1. */
function get(s: RunningServer, path: string, headers: Record<string, string>): Promise<{ status: number; text: string; cors: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: port(s), method: 'GET', path, headers }, (res) => {
      let out = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (out += c));
      res.on('end', () => resolve({ status: res.statusCode!, text: out, cors: res.headers['access-control-allow-origin'] as string | undefined }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('nextstate serve’s routes check the Host, the page’s origin and the key', () => {
  const ROUTES = ['/v1/nextstate/records?from=1', '/v1/models', '/healthz', '/v1/chat/completions', '/v1/nothing'];

  it('refuses a Host that names another site on every route (DNS rebinding), and takes the bound address, localhost and --allow-host names', async () => {
    const s = await serve(handler().chat, { allowHosts: ['agent.example'] });
    for (const path of ROUTES) {
      const r = await get(s, path, { host: `rebind.evil.example:${port(s)}` });
      expect(r.status).toBe(403);
      expect(JSON.parse(r.text).error.message).toBe(
        'Host "rebind.evil.example" is not a name of this server (127.0.0.1), as a page reaching it through its own name (DNS rebinding) would send; start nextstate serve with --allow-host rebind.evil.example to allow it',
      );
    }
    for (const host of [`127.0.0.1:${port(s)}`, `localhost:${port(s)}`, 'LOCALHOST', `agent.example:${port(s)}`, 'agent.example.'])
      expect((await get(s, '/healthz', { host })).status).toBe(200);
    expect((await get(s, '/healthz', { host: '10.0.0.7' })).status).toBe(403);
  });

  it('takes the names of the address it is bound to, and no other name', () => {
    expect(hostAllowed('127.0.0.1:30000', 'localhost', [])).toBe(true);
    expect(hostAllowed('[::1]:30000', '::1', [])).toBe(true);
    expect(hostAllowed('localhost', '::1', [])).toBe(true);
    expect(hostAllowed('10.1.2.3:30000', '0.0.0.0', [])).toBe(true);
    expect(hostAllowed(undefined, '127.0.0.1', [])).toBe(true);
    for (const [host, bound] of [
      ['rebind.evil.example', '0.0.0.0'],
      ['rebind.evil.example', 'localhost'],
      ['x.localhost', '127.0.0.1'],
      ['10.1.2.3', '192.168.1.5'],
      ['127.0.0.1', '192.168.1.5'],
    ])
      expect([host, bound, hostAllowed(host, bound, [])]).toEqual([host, bound, false]);
  });

  it('answers a foreign Origin with 403 and no CORS on every route, and an allowed one with CORS', async () => {
    const LAB = 'http://localhost:5173';
    const s = await serve(handler().chat, { allowOrigins: [LAB] });
    for (const path of ROUTES) {
      const r = await get(s, path, { origin: 'https://evil.example' });
      expect([r.status, r.cors]).toEqual([403, undefined]);
      expect(JSON.parse(r.text).error.code).toBe('origin_not_allowed');
    }
    expect(await get(s, '/healthz', { origin: LAB })).toMatchObject({ status: 200, cors: LAB });
    expect(await get(s, '/healthz', { origin: 'null' })).toMatchObject({ status: 403, cors: undefined });
  });

  it('wants the key on every route once one is set, the record feed included; a preflight needs none', async () => {
    const LAB = 'http://localhost:5173';
    const s = await serve(handler().chat, { apiKey: 'sk-wire', allowOrigins: [LAB] });
    for (const path of ROUTES) {
      const r = await get(s, path, {});
      expect(r.status).toBe(401);
      expect(JSON.parse(r.text).error.code).toBe('missing_api_key');
      expect((await get(s, path, { authorization: 'Bearer sk-wrong' })).status).toBe(401);
    }
    expect((await get(s, '/healthz', { authorization: 'Bearer sk-wire' })).status).toBe(200);
    const preflight = await new Promise<number>((resolve, reject) =>
      request({ host: '127.0.0.1', port: port(s), method: 'OPTIONS', path: '/v1/nextstate/records', headers: { origin: LAB } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      })
        .on('error', reject)
        .end(),
    );
    expect(preflight).toBe(204);
  });
});
