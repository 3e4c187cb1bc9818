import 'fake-indexeddb/auto';
import Dexie from 'dexie';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../rl';
import { NextStateDB, SCHEMAS, SCHEMA_VERSION, recordBytes, adapterBytes } from './db';
import { peftFiles, sampleRun, testConfig, uniqueDbName } from '../../test/support/storage/fixtures';
import { RunStore } from './store';
import { PEFT_CONFIG, PEFT_WEIGHTS } from '../gpu/peft';

/** Writes a database exactly as the v1 app did: v1 indexes, runs without `bytes`. */
async function writeV1(name: string, records: RunRecord[]) {
  const v1 = new Dexie(name);
  v1.version(1).stores(SCHEMAS[1]);
  await v1.open();
  const t = 1_000;
  await v1.table('runs').bulkAdd([
    { id: 'run-a', config: testConfig(), status: 'paused', created: t, updated: t, label: 'old run', notes: 'from v1', readOnly: false },
    { id: 'run-b', config: testConfig(), status: 'finished', created: t, updated: t, label: 'empty', notes: '', readOnly: false },
  ]);
  await v1.table('records').bulkAdd(records.map((r, i) => ({ ...r, runId: 'run-a', seq: i + 1 })));
  const files = peftFiles();
  await v1.table('adapters').add({ runId: 'run-a', version: 1, weights: files[PEFT_WEIGHTS], config: files[PEFT_CONFIG], ts: t });
  await v1.table('settings').add({ key: 'theme', value: 'dark' });
  v1.close();
}

describe('schema', () => {
  it('declares the current version with the documented tables and indexes', async () => {
    const db = new NextStateDB(uniqueDbName('schema'));
    await db.open();
    expect(db.verno).toBe(SCHEMA_VERSION);
    expect(db.tables.map((t) => t.name).sort()).toEqual(['adapters', 'metrics', 'records', 'runs', 'settings']);
    const records = db.table('records').schema;
    expect(records.primKey.keyPath).toEqual(['runId', 'seq']);
    expect(records.indexes.map((i) => i.name).sort()).toEqual(['[runId+kind+seq]', '[runId+session+seq]', '[runId+step]', '[runId+version]']);
    expect(db.table('adapters').schema.primKey.keyPath).toEqual(['runId', 'version']);
    db.close();
  });
});

describe('migration v1 -> v2', () => {
  it('keeps every row, backfills run sizes and serves queries through the new indexes', async () => {
    const name = uniqueDbName('migrate');
    const records = sampleRun();
    await writeV1(name, records);

    const store = new RunStore({ name });
    await store.open();
    expect(store.db.verno).toBe(2);
    expect(await store.records('run-a')).toEqual(records.map((record, i) => ({ seq: i + 1, record })));
    const run = await store.getRun('run-a');
    expect(run).toMatchObject({ label: 'old run', notes: 'from v1', status: 'paused' });
    const files = peftFiles();
    const expected = records.reduce((n, r) => n + recordBytes(r), 0) + adapterBytes({ weights: files[PEFT_WEIGHTS], config: files[PEFT_CONFIG] });
    expect(run!.bytes).toBe(expected);
    expect((await store.getRun('run-b'))!.bytes).toBe(0);
    expect((await store.latestAdapter('run-a'))!.files).toEqual(files);
    expect(await store.getSetting('theme')).toBe('dark');
    // [runId+kind+seq] exists only since v2.
    const samples = await store.records('run-a', { kind: 'sample', fromSeq: 20 });
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.every((s) => s.seq >= 20 && s.record.kind === 'sample')).toBe(true);
    // Appends continue the v1 numbering.
    expect(await store.append('run-a', records[0])).toBe(records.length + 1);
    store.close();
  });

  it('opens a v2 database again without re-running the upgrade', async () => {
    const name = uniqueDbName('reopen');
    await writeV1(name, sampleRun());
    const first = new RunStore({ name });
    await first.open();
    await first.db.runs.update('run-a', { bytes: 42 });
    first.close();
    const second = new RunStore({ name });
    expect((await second.getRun('run-a'))!.bytes).toBe(42);
    second.close();
  });
});
