/**
 * The storage layer in real Chromium: real IndexedDB, CompressionStream and
 * navigator.storage. A page reload cannot happen inside Vitest browser mode, so "reopening
 * the app" is a second RunStore on the same database after the first one closed.
 */
import Dexie from 'dexie';
import { afterEach, describe, expect, it } from 'vitest';
import { PEFT_WEIGHTS } from '../gpu/peft';
import { SCHEMAS } from './db';
import { RunBusyError, RunFileError, StorageFullError } from './errors';
import {
  boundary,
  gunzip,
  gzip,
  peftFiles,
  sampleRun,
  testConfig,
  trainStep,
  turnRecords,
  uniqueDbName,
  watchTransactions,
} from '../../test/support/storage/fixtures';
import { extractAdapter, importRun, inspectRunFile } from './import';
import { requestPersistence, storageStatus } from './quota';
import { exportRun } from './runfile';
import { RunStore } from './store';

const opened: RunStore[] = [];
const names = new Set<string>();
function open(name: string): RunStore {
  names.add(name);
  const store = new RunStore({ name });
  opened.push(store);
  return store;
}
afterEach(async () => {
  for (const s of opened.splice(0)) s.close();
  for (const name of names) await Dexie.delete(name);
  names.clear();
});

describe('IndexedDB in Chromium', () => {
  it('keeps everything when the database is closed and opened again by a new instance', async () => {
    const name = uniqueDbName('browser');
    const first = open(name);
    const id = await first.createRun(testConfig(), 'persisted run');
    await first.setNotes(id, 'survives');
    const seqs = await first.appendMany(id, sampleRun());
    await first.saveAdapter(id, 2, peftFiles(2));
    await first.setSetting('endpoint.judge.apiKey', 'sk-local-only');
    const metrics = await first.metrics(id);
    first.close();

    const second = open(name);
    expect(await second.getRun(id)).toMatchObject({ label: 'persisted run', notes: 'survives', status: 'running' });
    expect(await second.records(id)).toEqual(sampleRun().map((record, i) => ({ seq: seqs[i], record })));
    expect(await second.metrics(id)).toEqual(metrics);
    const adapter = await second.latestAdapter(id);
    expect(adapter!.files[PEFT_WEIGHTS]).toBeInstanceOf(Uint8Array);
    expect(adapter!.files).toEqual(peftFiles(2));
    expect(await second.getSetting('endpoint.judge.apiKey')).toBe('sk-local-only');
    // The tab that was running it is gone: the next start marks it interrupted and resumes.
    expect((await second.markInterruptedOnStartup()).interrupted).toEqual([id]);
    expect(await second.resumePoint(id)).toMatchObject({ lastStep: 1, version: 2 });
    expect(await second.append(id, sampleRun()[0])).toBe(seqs.length + 1);
  });

  it('does not mark a run that a live tab has claimed (real Web Locks) as interrupted', async () => {
    const name = uniqueDbName('browser-locks');
    const tabA = open(name);
    const live = await tabA.createRun(testConfig(), 'live');
    const release = await tabA.claimRun(live);
    // Tab B starts while tab A still drives the run.
    const tabB = open(name);
    expect((await tabB.markInterruptedOnStartup()).interrupted).toEqual([]);
    await expect(tabB.claimRun(live)).rejects.toBeInstanceOf(RunBusyError);
    release();
    await expect.poll(async () => (await tabB.markInterruptedOnStartup()).interrupted).toEqual([live]);
  });

  it('commits the run row, step records and checkpoints with strict durability, in Chromium\u2019s own transactions', async () => {
    const name = uniqueDbName('browser-strict');
    const store = open(name);
    const watch = watchTransactions();
    try {
      const id = await store.createRun(testConfig(), 'strict');
      await store.appendMany(id, turnRecords('s0', 1, 0, 1));
      await store.saveAdapter(id, 1, peftFiles(1));
      await store.appendMany(id, [trainStep(0, 0, 2), boundary(0, 2)]);
      await store.setStatus(id, 'finished');
      expect(watch.seen.map((t) => `${t.stores.join('+')}:${t.durability}`)).toEqual([
        'runs:strict',
        'metrics+records+runs:default',
        'adapters+runs:strict',
        'metrics+records+runs:strict',
        'runs:strict',
      ]);
    } finally {
      watch.stop();
    }
    store.close();
    const again = open(name);
    expect((await again.records((await again.listRuns())[0].id)).length).toBe(turnRecords('s0', 1, 0, 1).length + 2);
  });

  it('upgrades a v1 database in place', async () => {
    const name = uniqueDbName('browser-v1');
    names.add(name);
    const v1 = new Dexie(name);
    v1.version(1).stores(SCHEMAS[1]);
    await v1.table('runs').add({ id: 'old', config: testConfig(), status: 'paused', created: 1, updated: 1, label: 'v1 run', notes: '', readOnly: false });
    await v1.table('records').bulkAdd(sampleRun().map((r, i) => ({ ...r, runId: 'old', seq: i + 1 })));
    v1.close();
    const store = open(name);
    expect((await store.records('old')).map((r) => r.record)).toEqual(sampleRun());
    expect((await store.getRun('old'))!.bytes).toBeGreaterThan(0);
    expect((await store.records('old', { kind: 'train_step', fromSeq: 2 })).length).toBe(2);
  });
});

describe("run files with the browser's CompressionStream", () => {
  it('round-trips export -> import with identical records, metrics and adapter', async () => {
    const source = open(uniqueDbName('browser-src'));
    const id = await source.createRun(testConfig(), 'shared <b>run</b>');
    await source.appendMany(id, sampleRun('<script>alert(1)</script> \u{1F389}'));
    await source.saveAdapter(id, 2, peftFiles(2));
    const file = await exportRun(source, id, { includeAdapter: true });
    expect(file).toBeInstanceOf(Blob);
    expect(new Uint8Array(await file.slice(0, 2).arrayBuffer())).toEqual(new Uint8Array([0x1f, 0x8b]));
    expect(JSON.parse((await gunzip(file)).split('\n')[0]).format).toBe('nextstate-run');

    const target = open(uniqueDbName('browser-dst'));
    const imported = await importRun(target, file);
    expect(await target.records(imported)).toEqual(await source.records(id));
    expect(await target.metrics(imported)).toEqual(await source.metrics(id));
    expect(await target.getRun(imported)).toMatchObject({ label: 'shared <b>run</b>', status: 'imported', readOnly: true });
    expect((await extractAdapter(file)).files).toEqual(peftFiles(2));
    expect((await inspectRunFile(file)).summary!.records).toBe(sampleRun().length);
  });

  it("refuses truncated and oversized files with Chromium's gzip errors, leaving nothing behind", async () => {
    const source = open(uniqueDbName('browser-src'));
    const id = await source.createRun(testConfig(), 'r');
    await source.appendMany(id, sampleRun());
    const bytes = new Uint8Array(await (await exportRun(source, id)).arrayBuffer());
    const target = open(uniqueDbName('browser-dst'));
    const truncated = await importRun(target, bytes.subarray(0, bytes.length - 10)).catch((e) => e);
    expect(truncated).toBeInstanceOf(RunFileError);
    expect(truncated.message).toMatch(/truncated or damaged/);
    const body = (await gunzip(bytes)).split('\n').slice(1).join('\n');
    const bomb = await gzip((await gunzip(bytes)).split('\n')[0] + '\n' + body.repeat(500));
    const tooBig = await importRun(target, bomb, { maxBytes: 1_000_000 }).catch((e) => e);
    expect(tooBig).toBeInstanceOf(RunFileError);
    expect(tooBig.message).toMatch(/larger than the import limit of 1\.0 MB \(more than that once decompressed\)/);
    expect(await target.listRuns()).toEqual([]);
    expect(await target.db.records.count()).toBe(0);
  });
});

describe('quota', () => {
  it('reads navigator.storage and turns a QuotaExceededError into StorageFullError', async () => {
    const status = await storageStatus();
    expect(status.supported).toBe(true);
    expect(status.quota).toBeGreaterThan(0);
    expect(status.usage).toBeGreaterThanOrEqual(0);
    expect(typeof (await requestPersistence())).toBe('boolean');

    const store = open(uniqueDbName('browser-quota'));
    const other = await store.createRun(testConfig(), 'old experiment');
    await store.appendMany(other, sampleRun());
    const live = await store.createRun(testConfig(), 'live');
    const full = () => {
      throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    };
    store.db.records.hook('creating', full);
    const err = await store.appendMany(live, sampleRun()).catch((e) => e);
    expect(err).toBeInstanceOf(StorageFullError);
    expect(err.usage).not.toBeNull();
    expect(err.quota).not.toBeNull();
    expect(err.deletable.map((r: { id: string }) => r.id)).toEqual([other]);
    expect(err.message).toMatch(/^Browser storage is full \(.+ of .+ used\): saving run "live" needs about .+ more\..*"old experiment"/);
    expect(await store.records(live)).toEqual([]);
    store.db.records.hook('creating').unsubscribe(full);
    expect((await store.appendMany(live, sampleRun())).length).toBe(sampleRun().length);
  });
});
