import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { peftFiles, sampleRun, testConfig, uniqueDbName } from '../../test/support/storage/fixtures';
import { copyRun } from './copy';
import { RunNotFoundError, StorageFullError } from './errors';
import { RunStore } from './store';

const stores: RunStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

/** An imported run: sampleRun's records and the adapter of its last version, read-only. */
async function imported(): Promise<{ store: RunStore; id: string }> {
  const store = new RunStore({ name: uniqueDbName('copy') });
  stores.push(store);
  const writer = await store.beginImport({ config: testConfig(), label: 'shared', notes: 'from a colleague', created: 5 });
  await writer.append(sampleRun());
  await writer.saveAdapter(2, peftFiles());
  await writer.commit();
  return { store, id: writer.runId };
}

describe('copyRun', () => {
  it('makes a writable, resumable copy with every record in order, its metrics and adapters; the original stays as it was', async () => {
    const { store, id } = await imported();
    const config = testConfig({ schedule: { steps: 5 } });
    const copy = await copyRun(store, id, { label: 'shared, resumed', config, batchRecords: 4 });
    expect(copy).not.toBe(id);
    expect(await store.getRun(copy)).toMatchObject({ label: 'shared, resumed', notes: 'from a colleague', status: 'stopped', readOnly: false, config });
    const original = await store.records(id);
    const copied = await store.records(copy);
    expect(copied.map((r) => r.seq)).toEqual(original.map((r) => r.seq));
    expect(copied.map((r) => r.record)).toEqual(original.map((r) => r.record));
    expect(await store.metrics(copy)).toEqual(await store.metrics(id));
    expect(await store.adapterVersions(copy)).toEqual([2]);
    expect((await store.adapter(copy, 2))!.files).toEqual((await store.adapter(id, 2))!.files);
    // The copy resumes where the original's last adapter left it; the original refuses writes still.
    expect(await store.resumePoint(copy)).toMatchObject({ lastStep: 1, version: 2 });
    await store.append(copy, sampleRun()[0]);
    expect(await store.records(id)).toHaveLength(original.length);
    expect(await store.getRun(id)).toMatchObject({ status: 'imported', readOnly: true });
  });

  it('leaves nothing when the copy fails halfway, and names a missing run', async () => {
    const { store, id } = await imported();
    await expect(copyRun(store, 'gone', { label: 'x' })).rejects.toBeInstanceOf(RunNotFoundError);
    const full = new StorageFullError(null, null, 1, [], null, null, new Error('quota'));
    vi.spyOn(store, 'adapter').mockRejectedValueOnce(full);
    await expect(copyRun(store, id, { label: 'x' })).rejects.toBe(full);
    expect((await store.listRuns()).map((r) => r.id)).toEqual([id]);
    expect(await store.db.runs.count()).toBe(1);
  });
});
