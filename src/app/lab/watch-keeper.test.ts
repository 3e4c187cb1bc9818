import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { RunStore } from '../../storage/index';
import { uniqueDbName } from '../../../test/support/storage/fixtures';
import { interaction, records, runEvent, sse, WATCH_ROOT } from '../../../test/support/app/watch-feed';
import { WatchConnection, type WatchStatus } from './watch-connection';
import { WatchKeeper } from './watch-keeper';

const ROOT = WATCH_ROOT;

const stores: RunStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

/**
 * One page load watching ROOT: the keeper resumes what the store holds, then a connection reads
 * the scripted answers (one per request) and stops when they run out.
 */
async function watchOnce(store: RunStore, answers: string[]) {
  const asked: string[] = [];
  const shown: number[] = [];
  const statuses: WatchStatus[] = [];
  const created: string[] = [];
  const keeper = new WatchKeeper(store, ROOT, (id) => created.push(id));
  const kept = await keeper.resume();
  const connection = new WatchConnection(ROOT, {
    backoffMs: [1],
    fetch: (async (url: string) => {
      asked.push(new URL(url).searchParams.get('from')!);
      const a = answers.shift();
      if (a === undefined) throw new TypeError('Failed to fetch');
      return new Response(a, { headers: { 'content-type': 'text/event-stream' } });
    }) as typeof fetch,
    onRun: (run) => keeper.serving(run),
    onRecords: async (rs, from) => {
      await keeper.keep(rs, from);
      // What is shown is already stored.
      expect(await store.lastSeq(keeper.runId!)).toBe(from - 1 + rs.length);
      for (const r of rs) shown.push(r.kind === 'interaction' ? r.turn : -1);
    },
    onStatus: (s) => {
      statuses.push(s);
      if (s.kind === 'lost' && !answers.length) connection.stop();
    },
  });
  connection.skipTo((kept?.records.length ?? 0) + 1);
  await connection.start();
  return { kept, asked, shown, statuses, created, runId: keeper.runId };
}

const turns = async (store: RunStore, runId: string) => (await store.records(runId)).map((r) => (r.record.kind === 'interaction' ? r.record.turn : -1));

describe('WatchKeeper', () => {
  it('keeps each record before it is shown, and a reload carries on from the last kept one', async () => {
    const store = new RunStore({ name: uniqueDbName('keeper') });
    stores.push(store);
    const first = await watchOnce(store, [sse(runEvent(7), records(1, 2), records(3, 1))]);
    expect(first.kept).toBeNull();
    expect(first.asked).toEqual(['1']);
    expect(first.shown).toEqual([1, 2, 3]);
    expect(first.created).toHaveLength(1);
    const runs = await store.listRuns();
    expect(runs).toMatchObject([{ id: first.runId, label: 'serve tiny (7)', readOnly: true, watch: { server: ROOT, created: 7 } }]);

    // The reload: what was kept shows at once, and the server is asked for record 4 on.
    const second = await watchOnce(store, [sse(runEvent(7), records(4, 2))]);
    expect(second.kept?.records.map((r) => (r.kind === 'interaction' ? r.turn : -1))).toEqual([1, 2, 3]);
    expect(second.asked).toEqual(['4']);
    expect(second.shown).toEqual([4, 5]);
    expect(second.created).toEqual([]);
    expect(await turns(store, first.runId!)).toEqual([1, 2, 3, 4, 5]);
  });

  it('keeps another server run at the same address as a new run, from its first record', async () => {
    const store = new RunStore({ name: uniqueDbName('keeper') });
    stores.push(store);
    const first = await watchOnce(store, [sse(runEvent(7), records(1, 3))]);
    // The server was restarted on a fresh run file: asked from 4, it names another run, so the
    // watcher asks again from 1 at once, without a lost connection.
    const second = await watchOnce(store, [sse(runEvent(8)), sse(runEvent(8), records(1, 1))]);
    expect(second.asked).toEqual(['4', '1']);
    expect(second.statuses.map((s) => s.kind)).toEqual(['connecting', 'live', 'connecting', 'live', 'lost']);
    expect(second.created).toHaveLength(1);
    expect(second.runId).not.toBe(first.runId);
    expect(await turns(store, first.runId!)).toEqual([1, 2, 3]);
    expect(await turns(store, second.runId!)).toEqual([1]);
    expect((await store.listRuns()).map((r) => r.watch?.created).sort()).toEqual([7, 8]);
  });

  it('stops with an actionable line when a record cannot be kept, showing nothing it did not keep', async () => {
    const store = new RunStore({ name: uniqueDbName('keeper') });
    stores.push(store);
    const first = await watchOnce(store, [sse(runEvent(7), records(1, 1))]);
    // Someone deleted the kept run from Runs while the watch went on.
    const keeper = new WatchKeeper(store, ROOT);
    await keeper.resume();
    await store.deleteRun(first.runId!);
    await expect(keeper.keep([interaction(2)], 2)).rejects.toThrow(/^Could not keep records 2–2 in this browser: No run with id .* reload the run list\.$/);
  });
});
