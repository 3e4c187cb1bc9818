import 'fake-indexeddb/auto';
import Dexie from 'dexie';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StorageFullError } from './errors';
import { peftFiles, sampleRun, testConfig, turnRecords, uniqueDbName } from '../../test/support/storage/fixtures';
import { isQuotaError, requestPersistence, storageStatus } from './quota';
import { RunStore } from './store';

const quotaError = () => new DOMException('The quota has been exceeded.', 'QuotaExceededError');
const failWrites = () => {
  throw quotaError();
};

const stores: RunStore[] = [];
async function fullDisk() {
  const store = new RunStore({
    name: uniqueDbName('quota'),
    storageStatus: async () => ({ supported: true, usage: 999_000_000, quota: 1_000_000_000, available: 1_000_000, persisted: false }),
  });
  stores.push(store);
  const big = await store.createRun(testConfig(), 'big old run');
  await store.appendMany(big, [...sampleRun(), ...sampleRun()]);
  const small = await store.createRun(testConfig(), 'small run');
  await store.appendMany(small, sampleRun().slice(0, 3));
  const live = await store.createRun(testConfig(), 'live run');
  await store.appendMany(live, sampleRun().slice(0, 2));
  return { store, big, small, live };
}
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  vi.unstubAllGlobals();
});

describe('a write that hits the quota', () => {
  it('rejects with StorageFullError naming the space needed and the runs to delete, largest first', async () => {
    const { store, big, small, live } = await fullDisk();
    store.db.records.hook('creating', failWrites);
    const batch = turnRecords('carol', 1, 0, 99);
    const err = await store.appendMany(live, batch).catch((e) => e);
    expect(err).toBeInstanceOf(StorageFullError);
    const e = err as StorageFullError;
    expect(e.runId).toBe(live);
    expect(e.neededBytes).toBe(batch.reduce((n, r) => n + new TextEncoder().encode(JSON.stringify(r)).length, 0));
    expect(e.deletable.map((r) => r.id)).toEqual([big, small]);
    expect(e.deletable[0].bytes).toBeGreaterThan(e.deletable[1].bytes);
    expect(e.usage).toBe(999_000_000);
    expect(e.message).toMatch(/^Browser storage is full \(999 MB of 1\.0 GB used\): saving run "live run" needs about \d+(\.\d)? kB more\./);
    expect(e.message).toMatch(/Nothing was lost/);
    expect(e.message).toMatch(/largest first: "big old run" \(\d+ kB\), "small run" \(\d+ bytes\)/);
    expect(isQuotaError(e.cause)).toBe(true);
  });

  it('drops nothing: the failed batch is not half written and the same records append once space is freed', async () => {
    const { store, big, live } = await fullDisk();
    const before = await store.records(live);
    const bytesBefore = (await store.getRun(live))!.bytes;
    store.db.records.hook('creating', failWrites);
    const batch = turnRecords('carol', 1, 0, 99);
    await expect(store.appendMany(live, batch)).rejects.toBeInstanceOf(StorageFullError);
    await expect(store.append(live, batch[0])).rejects.toBeInstanceOf(StorageFullError);
    expect(await store.records(live)).toEqual(before);
    expect((await store.getRun(live))!.bytes).toBe(bytesBefore);

    // The person deletes the largest run; the caller retries the very same records.
    await store.deleteRun(big);
    store.db.records.hook('creating').unsubscribe(failWrites);
    expect(await store.appendMany(live, batch)).toEqual([3, 4, 5, 6, 7, 8]);
    expect((await store.records(live)).map((r) => r.record)).toEqual([...before.map((r) => r.record), ...batch]);
  });

  it('fails a batch atomically when only its metrics fail to fit', async () => {
    const { store, live } = await fullDisk();
    store.db.metrics.hook('creating', failWrites);
    const err = await store.appendMany(live, sampleRun().slice(2)).catch((e) => e);
    expect(err).toBeInstanceOf(StorageFullError);
    expect(await store.lastSeq(live)).toBe(2);
  });

  it('covers adapters too', async () => {
    const { store, live } = await fullDisk();
    store.db.adapters.hook('creating', failWrites);
    const err = await store.saveAdapter(live, 1, peftFiles()).catch((e) => e);
    expect(err).toBeInstanceOf(StorageFullError);
    expect(err.neededBytes).toBeGreaterThan(peftFiles()['adapter_model.safetensors'].byteLength);
    expect(await store.latestAdapter(live)).toBeUndefined();
  });

  it('says so when there is no other run to delete and usage is unknown', async () => {
    const store = new RunStore({ name: uniqueDbName('quota-alone') });
    stores.push(store);
    const id = await store.createRun(testConfig(), 'only');
    store.db.records.hook('creating', failWrites);
    const err = await store.append(id, sampleRun()[0]).catch((e) => e);
    expect(err).toBeInstanceOf(StorageFullError);
    expect(err.usage).toBeNull();
    expect(err.message).toMatch(/^Browser storage is full: saving run "only" needs/);
    expect(err.message).toMatch(/no other run to delete: export this run to a file/);
  });

  it('passes other write errors through unchanged', async () => {
    const { store, live } = await fullDisk();
    const boom = new Error('disk on fire');
    store.db.records.hook('creating', () => {
      throw boom;
    });
    await expect(store.append(live, sampleRun()[0])).rejects.not.toBeInstanceOf(StorageFullError);
  });
});

describe('isQuotaError', () => {
  it('finds the quota error however Dexie wraps it', () => {
    expect(isQuotaError(quotaError())).toBe(true);
    expect(isQuotaError(new Dexie.QuotaExceededError('full'))).toBe(true);
    expect(isQuotaError(new Dexie.AbortError('aborted', quotaError()))).toBe(true);
    expect(isQuotaError({ name: 'BulkError', failures: [new Error('x'), quotaError()] })).toBe(true);
    expect(isQuotaError({ name: 'BulkError', failures: { 3: quotaError() } })).toBe(true);
    expect(isQuotaError(new Error('x', { cause: quotaError() }))).toBe(true);
    expect(isQuotaError(new DOMException('no', 'ConstraintError'))).toBe(false);
    expect(isQuotaError(null)).toBe(false);
    expect(isQuotaError('QuotaExceededError')).toBe(false);
  });
});

describe('storageStatus and requestPersistence', () => {
  it('report "unknown" where navigator.storage is missing (Node)', async () => {
    vi.stubGlobal('navigator', undefined);
    expect(await storageStatus()).toEqual({ supported: false, usage: null, quota: null, available: null, persisted: null });
    expect(await requestPersistence()).toBe(false);
  });

  it('read navigator.storage where it exists', async () => {
    const persist = vi.fn(async () => true);
    vi.stubGlobal('navigator', {
      storage: { estimate: async () => ({ usage: 300, quota: 1000 }), persisted: async () => false, persist },
    });
    expect(await storageStatus()).toEqual({ supported: true, usage: 300, quota: 1000, available: 700, persisted: false });
    expect(await requestPersistence()).toBe(true);
    expect(persist).toHaveBeenCalledOnce();
  });
});
