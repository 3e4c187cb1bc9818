import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../rl/records';
import { records, runEvent, sse, WATCH_ROOT } from '../../../test/support/app/watch-feed';
import { WatchConnection, type WatchStatus } from './watch-connection';

const ROOT = WATCH_ROOT;
const run = runEvent(1, 'serve tiny (combined)');

/** A fetch that answers the i-th request with answers[i] (a body text, a status, or a network failure) and records what it was asked. */
function scripted(answers: (string | number | 'offline')[], asked: { url: string; init: RequestInit }[]): typeof fetch {
  return (async (url: string, init: RequestInit) => {
    asked.push({ url, init });
    const a = answers.shift() ?? 'offline';
    if (a === 'offline') throw new TypeError('Failed to fetch');
    if (typeof a === 'number') return new Response('{}', { status: a });
    return new Response(a, { headers: { 'content-type': 'text/event-stream' } });
  }) as typeof fetch;
}

function watch(answers: (string | number | 'offline')[], o: { apiKey?: string; maxRecords?: number } = {}) {
  const asked: { url: string; init: RequestInit }[] = [];
  const statuses: WatchStatus[] = [];
  const got: { records: RunRecord[]; from: number }[] = [];
  const runs: string[] = [];
  const connection = new WatchConnection(ROOT, {
    apiKey: o.apiKey,
    fetch: scripted(answers, asked),
    backoffMs: [1, 2],
    limits: { maxEventChars: 100_000, maxRecords: o.maxRecords ?? 1000 },
    onRun: (r) => void runs.push(r.label),
    onRecords: (records, from) => void got.push({ records, from }),
    onStatus: (s) => {
      statuses.push(s);
      // Ends the test once the script has run out and the watcher waits to retry.
      if (s.kind === 'lost' && !answers.length) connection.stop();
    },
  });
  return { connection, asked, statuses, got, runs };
}

describe('WatchConnection', () => {
  it('reconnects from the record after the last one it has, and shows none twice', async () => {
    const w = watch([sse(run, records(1, 2)), 'offline', sse(run, records(3, 1)), sse(run, records(2, 3))]);
    await w.connection.start();
    expect(w.asked.map((a) => a.url.split('from=')[1])).toEqual(['1', '3', '3', '4']);
    expect(w.got.map((g) => [g.from, g.records.length])).toEqual([
      [1, 2],
      [3, 1],
      // The fourth answer repeated records 2 and 3: only record 4 is new.
      [4, 1],
    ]);
    expect(w.runs).toHaveLength(3);
    expect(w.statuses.map((s) => s.kind)).toEqual([
      'connecting',
      'live',
      'lost',
      'connecting',
      'lost',
      'connecting',
      'live',
      'lost',
      'connecting',
      'live',
      'lost',
    ]);
    const lost = w.statuses.find((s) => s.kind === 'lost' && s.message.includes('does not answer'));
    expect(lost).toMatchObject({
      message: `Lost the connection to ${ROOT}: the server does not answer, or refuses this page (start it with --allow-origin ${globalThis.location?.origin ?? 'ORIGIN'}); retrying in 0 s (is nextstate serve still running?).`,
    });
    expect(w.asked[0].init).toMatchObject({ credentials: 'omit', mode: 'cors', headers: {} });
  });

  it('backs off longer while the server stays away, and again briefly once it is back', async () => {
    const w = watch(['offline', 'offline', 'offline', 503, sse(run, records(1, 1)), 'offline']);
    await w.connection.start();
    const waits = w.statuses.flatMap((s) => (s.kind === 'lost' ? [s.retryInMs] : []));
    expect(waits).toEqual([1, 2, 2, 2, 1, 2]);
    expect(w.statuses.some((s) => s.kind === 'lost' && s.message.includes('HTTP 503'))).toBe(true);
  });

  it('treats a gap in the records as a lost connection', async () => {
    const w = watch([sse(run, records(1, 1), records(3, 1)), sse(run, records(2, 2))]);
    await w.connection.start();
    expect(w.got.map((g) => g.from)).toEqual([1, 2]);
    expect(w.statuses.some((s) => s.kind === 'lost' && s.message.includes('records 2 to 2 went missing'))).toBe(true);
  });

  it('stops, saying why, on what retrying cannot fix', async () => {
    const key = watch([401], { apiKey: 'wrong' });
    await key.connection.start();
    expect(key.statuses.at(-1)).toEqual({
      kind: 'stopped',
      needsKey: true,
      message: `${ROOT} wants its API key: enter the --api-key the server was started with.`,
    });
    expect(key.asked[0].init.headers).toEqual({ authorization: 'Bearer wrong' });

    const missing = watch([404]);
    await missing.connection.start();
    expect(missing.statuses.at(-1)).toMatchObject({ kind: 'stopped', needsKey: false, message: expect.stringContaining('HTTP 404') });

    const bad = watch([sse(run, { type: 'records', from: 1, records: [{ kind: 'interaction' }] })]);
    await bad.connection.start();
    expect(bad.statuses.at(-1)).toMatchObject({ kind: 'stopped', message: expect.stringContaining('record 1 from the server') });
    expect(bad.got).toEqual([]);

    const big = watch([sse(run, records(1, 3), records(4, 3))], { maxRecords: 5 });
    await big.connection.start();
    expect(big.got.map((g) => g.from)).toEqual([1]);
    expect(big.statuses.at(-1)).toMatchObject({ kind: 'stopped', message: expect.stringContaining('more than 5 records') });
  });

  it('awaits what keeps the records, and stops with its reason when they could not be kept', async () => {
    const asked: { url: string; init: RequestInit }[] = [];
    const statuses: WatchStatus[] = [];
    const kept: number[] = [];
    const connection = new WatchConnection(ROOT, {
      fetch: scripted([sse(run, records(1, 2), records(3, 1))], asked),
      onRun: () => {},
      onRecords: async (_records, from) => {
        await new Promise((r) => setTimeout(r, 5));
        if (from === 3) throw new Error('Could not keep records 3–3 in this browser: the disk is full.');
        kept.push(from);
      },
      onStatus: (s) => void statuses.push(s),
    });
    await connection.start();
    expect(kept).toEqual([1]);
    expect(statuses.at(-1)).toEqual({ kind: 'stopped', needsKey: false, message: 'Could not keep records 3–3 in this browser: the disk is full.' });
  });

  it('asks again at once from the record its run handler names', async () => {
    const w = { asked: [] as { url: string; init: RequestInit }[], got: [] as { records: RunRecord[]; from: number }[], statuses: [] as WatchStatus[] };
    let restarted = false;
    const connection = new WatchConnection(ROOT, {
      fetch: scripted([sse(run), sse(run, records(1, 1))], w.asked),
      backoffMs: [1],
      onRun: () => (restarted ? undefined : ((restarted = true), { next: 1 })),
      onRecords: (rs, from) => void w.got.push({ records: rs, from }),
      onStatus: (s) => {
        w.statuses.push(s);
        if (s.kind === 'lost') connection.stop();
      },
    });
    connection.skipTo(5);
    await connection.start();
    expect(w.asked.map((a) => a.url.split('from=')[1])).toEqual(['5', '1']);
    expect(w.got.map((g) => g.from)).toEqual([1]);
    expect(w.statuses.map((s) => s.kind)).toEqual(['connecting', 'live', 'connecting', 'live', 'lost']);
  });

  it('stops reading when stopped', async () => {
    let cancelled = false;
    const asked: string[] = [];
    const endless = (async (url: string) => {
      asked.push(url);
      return new Response(
        new ReadableStream({
          start: (c) => c.enqueue(new TextEncoder().encode(sse(run))),
          cancel: () => void (cancelled = true),
        }),
      );
    }) as typeof fetch;
    const connection = new WatchConnection(ROOT, {
      fetch: endless,
      onRun: (): void => connection.stop(),
      onRecords: () => {},
      onStatus: () => {},
    });
    await connection.start();
    expect(asked).toHaveLength(1);
    expect(cancelled).toBe(true);
  });
});
