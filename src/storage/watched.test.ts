import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import { sampleRun, testConfig, trainStep, uniqueDbName } from '../../test/support/storage/fixtures';
import { InvalidRunDataError, ReadOnlyRunError, RunNotFoundError } from './errors';
import { importRun } from './import';
import { exportRun } from './runfile';
import { RunStore } from './store';

const stores: RunStore[] = [];
function newStore(now?: () => number): RunStore {
  const store = new RunStore({ name: uniqueDbName('watched'), now });
  stores.push(store);
  return store;
}
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const SERVER = 'http://127.0.0.1:30000';

describe('watched server runs', () => {
  it('keep a server’s records at its record numbers, read-only to everything but the watch, and export like any run', async () => {
    let t = 100;
    const store = newStore(() => t++);
    const id = await store.createWatchedRun({ config: testConfig(), label: 'serve tiny (combined)', source: { server: SERVER, created: 42 } });
    const run = await store.getRun(id);
    expect(run).toMatchObject({ status: 'imported', readOnly: true, created: 42, watch: { server: SERVER, created: 42 } });
    expect((await store.listRuns()).map((r) => r.id)).toEqual([id]);

    const records = sampleRun();
    expect(await store.appendWatched(id, 1, records.slice(0, 3))).toEqual([1, 2, 3]);
    // A gap or a repeat writes nothing and says why.
    await expect(store.appendWatched(id, 5, records.slice(4, 5))).rejects.toThrow(InvalidRunDataError);
    await expect(store.appendWatched(id, 3, records.slice(2, 4))).rejects.toThrow(/next is record 4, not 3.*Nothing was written/);
    expect(await store.lastSeq(id)).toBe(3);
    expect(await store.appendWatched(id, 4, records.slice(3))).toEqual(records.slice(3).map((_, i) => 4 + i));
    // Only the watch adds to it.
    await expect(store.append(id, trainStep(9, 0, 1))).rejects.toThrow(ReadOnlyRunError);
    await expect(store.append(id, trainStep(9, 0, 1))).rejects.toThrow(/is kept from a server it watched and is read-only/);
    const own = await store.createRun(testConfig(), 'own');
    await expect(store.appendWatched(own, 1, records.slice(0, 1))).rejects.toThrow(/not a watched server run/);

    expect((await store.records(id)).map((r) => r.record)).toEqual(records);
    expect((await store.metrics(id)).length).toBeGreaterThan(0);
    expect((await store.latestWatched(SERVER))?.id).toBe(id);
    expect(await store.latestWatched('http://127.0.0.1:1')).toBeUndefined();

    // Its export imports as a run with the same records.
    const file = await exportRun(store, id);
    const other = newStore();
    const imported = await importRun(other, file);
    expect((await other.records(imported)).map((r) => r.record)).toEqual(records);

    await store.deleteRun(id);
    await expect(store.appendWatched(id, records.length + 1, records.slice(0, 1))).rejects.toThrow(RunNotFoundError);
  });

  it('name the latest run watched from a server when it kept several', async () => {
    let t = 100;
    const store = newStore(() => t++);
    const first = await store.createWatchedRun({ config: testConfig(), label: 'a', source: { server: SERVER, created: 1 } });
    const second = await store.createWatchedRun({ config: testConfig(), label: 'b', source: { server: SERVER, created: 2 } });
    expect((await store.latestWatched(SERVER))?.id).toBe(second);
    await store.appendWatched(first, 1, sampleRun().slice(0, 1));
    expect((await store.latestWatched(SERVER))?.id).toBe(first);
  });
});
