/**
 * `npm run bench -- --only hostile`, the wire: each hostile request of the review sent to one
 * real `nextstate serve` process (the tiny Qwen3 fixture, a key from --api-key-file), with the
 * time to its answer, the server's peak resident memory so far (VmHWM), whether the answer is
 * one line, and whether the next honest request is still served. The goal the issue states:
 * each refused in one line, in under 5 s, the server under 1.5 GB, honest clients served.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { spawnServe } from '../../test/support/cli/spawn-serve';

export const WIRE_GOAL = { seconds: 5, bytes: 1.5e9 };
const KEY = 'sk-hostile-bench';

interface Answer {
  status: number;
  /** The answer's body (a JSON error), or Node's status line where Node answers alone. */
  text: string;
}

interface WireCase {
  name: string;
  before: string;
  send(root: string): Promise<Answer>;
  /** Whether the answer is what the case wants; a refusal (4xx) by default. */
  ok?: (a: Answer) => boolean;
}

export interface WireResult {
  name: string;
  before: string;
  status: number;
  seconds: number;
  peakRssMB: number | null;
  answer: string;
  oneLine: boolean;
  honestServed: boolean;
  withinGoal: boolean;
}

const auth = { authorization: `Bearer ${KEY}` };

async function chat(root: string, body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${root}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth, ...headers }, body });
  return { status: res.status, text: await res.text() };
}

const hi = [{ role: 'user', content: 'hi' }];
const json = (value: object) => JSON.stringify({ messages: hi, max_tokens: 2, ...value });
const nested = (depth: number) => '{"type":"object","properties":{"a":'.repeat(depth) + '{}' + '}}'.repeat(depth);

/** Bytes written on a raw connection; resolves with Node's status line once it answers or closes. */
function raw(root: string, bytes: string): Promise<Answer> {
  const { hostname, port } = new URL(root);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let reply = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      reply += c;
      if (reply.includes('\r\n')) socket.destroy();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      const line = reply.split('\r\n')[0];
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(line)?.[1] ?? 0), text: line });
    });
    socket.write(bytes);
  });
}

/** 64 connections that send a byte every 200 ms, half in their headers, half in their bodies; an honest request meanwhile. */
async function slowClients(root: string): Promise<Answer> {
  const { hostname, port } = new URL(root);
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${KEY}\r\nContent-Length: 100000\r\n`;
  const sockets = Array.from({ length: 64 }, (_, i) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.on('error', () => {});
    socket.write(i % 2 ? head + '\r\n{' : head + 'X-Slow: ');
    const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(i % 2 ? ' ' : 'x')), 200);
    socket.on('close', () => clearInterval(timer));
    return socket;
  });
  await new Promise((r) => setTimeout(r, 500));
  try {
    return await chat(root, json({}));
  } finally {
    for (const s of sockets) s.destroy();
  }
}

function cases(): WireCase[] {
  return [
    {
      name: 'tool-description-15MB',
      before: 'blocked 383 s, then out of memory at 4.49 GB',
      send: (r) => chat(r, json({ tools: [{ type: 'function', function: { name: 'f', description: 'd'.repeat(15e6) } }] })),
    },
    {
      name: 'schema-300-deep',
      before: 'accepted and journaled; the run file could no longer be read',
      send: (r) => chat(r, json({ tools: [{ type: 'function', function: { name: 'f', parameters: JSON.parse(nested(300)) } }] })),
    },
    {
      name: 'schema-100000-deep',
      before: 'a 500 from a stack overflow',
      send: (r) => chat(r, `{"messages":${JSON.stringify(hi)},"tools":[{"type":"function","function":{"name":"f","parameters":${nested(100_000)}}}]}`),
    },
    { name: 'message-3MB', before: 'blocked 46.7 s at 1.46 GB', send: (r) => chat(r, json({ messages: [{ role: 'user', content: 'x'.repeat(3e6) }] })) },
    {
      name: 'messages-10000',
      before: 'held',
      send: (r) => chat(r, json({ messages: Array.from({ length: 10_000 }, () => ({ role: 'user', content: 'hi' })) })),
    },
    {
      name: 'body-100MB',
      before: '413 (held)',
      send: (r) =>
        raw(r, `POST /v1/chat/completions HTTP/1.1\r\nHost: ${new URL(r).host}\r\nAuthorization: Bearer ${KEY}\r\nContent-Length: 100000000\r\n\r\n{`),
    },
    {
      name: 'header-flood',
      before: 'held (header limits)',
      send: (r) =>
        raw(
          r,
          `GET /healthz HTTP/1.1\r\nHost: ${new URL(r).host}\r\n` +
            Array.from({ length: 2000 }, (_, i) => `X-Flood-${i}: ${'f'.repeat(32)}\r\n`).join('') +
            '\r\n',
        ),
    },
    { name: 'slow-clients-64', before: '64 clients at a byte a second made the server answer 429 to everyone', send: slowClients, ok: (a) => a.status === 200 },
    { name: 'gzip-bomb', before: 'untested', send: (r) => chat(r, new Uint8Array(gzipSync(Buffer.alloc(100 << 20, 0x20))), { 'content-encoding': 'gzip' }) },
    { name: 'n-1e9', before: 'untested', send: (r) => chat(r, json({ n: 1e9 })) },
    {
      name: 'max-tokens-1e12',
      before: 'untested',
      send: (r) => chat(r, json({ max_tokens: 1e12 })),
      ok: (a) => a.status === 400 || (a.status === 200 && JSON.parse(a.text).usage.completion_tokens <= 2),
    },
    { name: 'temperature-NaN', before: 'untested', send: (r) => chat(r, json({}).replace('"max_tokens":2', '"max_tokens":2,"temperature":NaN')) },
    { name: 'stop-10MB', before: 'untested', send: (r) => chat(r, json({ stop: Array.from({ length: 4 }, () => 's'.repeat(2.5e6)) })) },
    {
      name: 'records-rebinding-host',
      before: 'any page could read every conversation',
      send: (r) => raw(r, `GET /v1/nextstate/records HTTP/1.1\r\nHost: rebind.evil.example\r\nAuthorization: Bearer ${KEY}\r\n\r\n`),
    },
    {
      name: 'records-foreign-origin',
      before: 'Access-Control-Allow-Origin: * to any page',
      send: async (r) => {
        const res = await fetch(`${r}/v1/nextstate/records`, { headers: { origin: 'https://evil.example', ...auth } });
        return { status: res.status, text: await res.text() };
      },
    },
    {
      name: 'records-without-key',
      before: 'no key needed on loopback',
      send: async (r) => {
        const res = await fetch(`${r}/v1/nextstate/records`);
        return { status: res.status, text: await res.text() };
      },
    },
  ];
}

/** The process's peak resident set so far, from /proc (Linux); null elsewhere. */
function peakRss(pid: number): number | null {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null;
  }
}

/** Every wire case against one server, in order. */
export async function wireSuite(work: string, log: (line: string) => void): Promise<Record<string, unknown>> {
  const { dir: model } = await tinyModel({ family: 'qwen3' });
  const keyFile = join(work, 'key');
  writeFileSync(keyFile, `${KEY}\n`);
  const server = await spawnServe(['--model', model, '--out', join(work, 'wire.nsrun'), '--max-tokens', '2', '--api-key-file', keyFile]);
  const root = server.url.replace(/\/v1$/, '');
  try {
    const results: WireResult[] = [];
    for (const c of cases()) {
      const started = performance.now();
      const answer = await c.send(root);
      const seconds = Number(((performance.now() - started) / 1000).toFixed(2));
      const peak = peakRss(server.child.pid!);
      const honest = await chat(root, json({}));
      const oneLine = !answer.text.includes('\n');
      const ok = c.ok ? c.ok(answer) : answer.status >= 400 && answer.status < 500;
      const r: WireResult = {
        name: c.name,
        before: c.before,
        status: answer.status,
        seconds,
        peakRssMB: peak === null ? null : Math.round(peak / 1e6),
        answer: answer.text.slice(0, 300),
        oneLine,
        honestServed: honest.status === 200,
        withinGoal: ok && oneLine && honest.status === 200 && seconds < WIRE_GOAL.seconds && peak !== null && peak < WIRE_GOAL.bytes,
      };
      log(`${r.withinGoal ? 'ok  ' : 'MISS'} wire ${r.name}: ${r.status}, ${r.seconds} s, ${r.peakRssMB} MB: ${r.answer.slice(0, 160)}`);
      results.push(r);
    }
    return {
      goal: { seconds: WIRE_GOAL.seconds, peakRssMB: WIRE_GOAL.bytes / 1e6, oneLine: true, honestServed: true },
      cases: results.length,
      withinGoal: results.filter((r) => r.withinGoal).length,
      maxSeconds: Math.max(...results.map((r) => r.seconds)),
      maxPeakRssMB: Math.max(...results.map((r) => r.peakRssMB ?? Infinity)),
      results,
    };
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
}
