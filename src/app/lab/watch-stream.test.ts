import { describe, expect, it } from 'vitest';
import { RecordValidationError } from '../../rl/errors';
import { makePreset } from '../../rl/presets';
import { EventSplitter, parseWatchEvent, readWatchStream, recordsUrl, serverRoot, watchAddress, watchHash, WatchError, type WatchEvent } from './watch-stream';

const interaction = (content: string, turn = 1) => ({
  kind: 'interaction',
  version: 0,
  ts: 1_700_000_000_000,
  session: 's1',
  turn,
  turnType: 'main',
  messages: [{ role: 'user', content }],
  response: `re: ${content}`,
  tokenIds: [1, 2],
  logprobs: [-0.1, -0.2],
  startedAt: 1_699_999_999_000,
  finishedAt: 1_700_000_000_000,
});

const runEvent = { type: 'run', label: 'serve tiny (combined)', created: 1_700_000_000_000, config: { preset: makePreset('combined') } };

/** A body that delivers `chunks` one read at a time. */
function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    pull(c) {
      const next = chunks.shift();
      if (next === undefined) c.close();
      else c.enqueue(encoder.encode(next));
    },
  });
}

describe('the watch link', () => {
  it('reads the server address of #/watch, and nothing else', () => {
    expect(watchAddress(watchHash('http://127.0.0.1:30000'))).toBe('http://127.0.0.1:30000');
    expect(watchAddress('#/watch?other=1')).toBe('');
    expect(watchAddress('#/open?url=x')).toBeNull();
    expect(watchAddress('#/runs')).toBeNull();
  });

  it('takes the server root with or without /v1, https anywhere and plain http only on this machine', () => {
    for (const a of ['http://127.0.0.1:30000', 'http://127.0.0.1:30000/', 'http://127.0.0.1:30000/v1', 'http://127.0.0.1:30000/v1/'])
      expect(serverRoot(a)).toBe('http://127.0.0.1:30000');
    expect(serverRoot('https://gpu.example/rl/v1')).toBe('https://gpu.example/rl');
    expect(serverRoot('http://localhost:8000')).toBe('http://localhost:8000');
    expect(recordsUrl('http://127.0.0.1:30000', 7)).toBe('http://127.0.0.1:30000/v1/nextstate/records?from=7');
    for (const bad of ['', 'not a url', 'http://gpu.example:30000', 'javascript:alert(1)', 'file:///etc/passwd'])
      expect(() => serverRoot(bad), bad).toThrow(WatchError);
  });
});

describe('parseWatchEvent', () => {
  it('reads the run and its records, validated', () => {
    const run = parseWatchEvent(JSON.stringify(runEvent));
    expect(run).toMatchObject({ type: 'run', run: { label: 'serve tiny (combined)', created: 1_700_000_000_000 } });
    expect(run.type === 'run' && run.run.config.preset.method).toBe('combined');
    const records = parseWatchEvent(JSON.stringify({ type: 'records', from: 3, records: [interaction('hi')] }));
    expect(records).toMatchObject({ type: 'records', from: 3, records: [{ kind: 'interaction', response: 're: hi' }] });
  });

  it('refuses a record that fails validation: a wrong type or a field the lab does not know', () => {
    for (const bad of [
      { ...interaction('x'), turn: 'one' },
      { ...interaction('x'), extra: '<script>' },
    ])
      expect(() => parseWatchEvent(JSON.stringify({ type: 'records', from: 1, records: [bad] }))).toThrow(RecordValidationError);
  });

  it('refuses what is not a feed event, saying what to do', () => {
    expect(() => parseWatchEvent('{')).toThrow(/not JSON/);
    expect(() => parseWatchEvent('{"type":"chat"}')).toThrow(/nextstate serve server/);
    expect(() => parseWatchEvent('{"type":"records","from":0,"records":[]}')).toThrow(/valid "from"/);
    expect(() => parseWatchEvent('{"type":"records","from":1}')).toThrow(/records list/);
    expect(() => parseWatchEvent('{"type":"run","config":{}}')).toThrow(/run config/);
  });
});

describe('EventSplitter', () => {
  it('joins events cut across chunks and skips keep-alives, with any line ends', () => {
    const s = new EventSplitter(1000);
    expect(s.push(': keep-alive\n\ndata: {"a"')).toEqual([]);
    expect(s.push(':1}\n\ndata: 2\r\n\r\ndata:3\rdata: 4\r\r')).toEqual(['{"a":1}', '2', '3\n4']);
  });

  it('refuses an event longer than the limit instead of holding it', () => {
    const s = new EventSplitter(10);
    expect(() => s.push(`data: ${'x'.repeat(20)}`)).toThrow(/more than 10 characters/);
  });
});

describe('readWatchStream', () => {
  it('hands each event over in order and stops at [DONE]', async () => {
    const seen: WatchEvent[] = [];
    const text = `data: ${JSON.stringify(runEvent)}\n\ndata: ${JSON.stringify({ type: 'records', from: 1, records: [interaction('a')] })}\n\ndata: [DONE]\n\ndata: junk\n\n`;
    // Cut in odd places, multi-byte characters included.
    const chunks = [text.slice(0, 7), text.slice(7, 200), text.slice(200)];
    await readWatchStream(body(chunks), (e) => void seen.push(e));
    expect(seen.map((e) => e.type)).toEqual(['run', 'records']);
  });

  it('decodes UTF-8 split between reads', async () => {
    const bytes = new TextEncoder().encode(`data: ${JSON.stringify({ type: 'records', from: 1, records: [interaction('héllo ✓')] })}\n\n`);
    const at = bytes.indexOf(0xc3) + 1;
    const split = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, at));
        c.enqueue(bytes.slice(at));
        c.close();
      },
    });
    const seen: WatchEvent[] = [];
    await readWatchStream(split, (e) => void seen.push(e));
    expect(seen[0].type === 'records' && seen[0].records[0].kind === 'interaction' && seen[0].records[0].messages[0].content).toBe('héllo ✓');
  });
});
