import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  boundary,
  evaluation,
  peftFiles,
  sampleRun,
  testConfig,
  trainStep,
  turnRecords,
  uniqueDbName,
  watchTransactions,
} from '../../test/support/storage/fixtures';
import { InvalidRunDataError, ReadOnlyRunError, RunBusyError, RunNotFoundError } from './errors';
import { StoredConfigError, type StorableConfig } from './stored-config';
import { RunStore } from './store';
import { PEFT_CONFIG, PEFT_WEIGHTS } from '../gpu/peft';

const stores: RunStore[] = [];
function newStore(now?: () => number): RunStore {
  const store = new RunStore({ name: uniqueDbName('store'), now });
  stores.push(store);
  return store;
}
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  vi.unstubAllGlobals();
});

/** A minimal Web Locks API (Node has none): exclusive locks, ifAvailable, query. */
function fakeLocks() {
  const held = new Set<string>();
  const locks = {
    async request(name: string, _options: { ifAvailable: boolean }, callback: (lock: { name: string } | null) => unknown) {
      if (held.has(name)) return callback(null);
      held.add(name);
      try {
        return await callback({ name });
      } finally {
        held.delete(name);
      }
    },
    async query() {
      return { held: [...held].map((name) => ({ name, mode: 'exclusive' })), pending: [] };
    },
  };
  vi.stubGlobal('navigator', { locks });
  return held;
}

describe('runs', () => {
  it('creates, lists (most recently updated first), renames, annotates and changes status', async () => {
    let t = 100;
    const store = newStore(() => t++);
    const a = await store.createRun(testConfig(), 'first');
    const b = await store.createRun(testConfig(), 'second');
    expect((await store.listRuns()).map((r) => r.label)).toEqual(['second', 'first']);
    await store.rename(a, 'renamed');
    await store.setNotes(a, 'lr too high?');
    await store.setStatus(a, 'paused');
    const run = await store.getRun(a);
    expect(run).toMatchObject({ id: a, label: 'renamed', notes: 'lr too high?', status: 'paused', readOnly: false, bytes: 0 });
    expect(run!.updated).toBeGreaterThan(run!.created);
    expect((await store.listRuns()).map((r) => r.id)).toEqual([a, b]);
    expect(run!.config.preset.method).toBe('combined');
    expect(await store.getRun('nope')).toBeUndefined();
    await expect(store.rename('nope', 'x')).rejects.toBeInstanceOf(RunNotFoundError);
  });

  it('refuses an unknown status and a config without a valid preset', async () => {
    const store = newStore();
    const id = await store.createRun(testConfig(), 'r');
    await expect(store.setStatus(id, 'exploded' as never)).rejects.toBeInstanceOf(InvalidRunDataError);
    await expect(store.setStatus(id, 'imported')).rejects.toThrow(/importRun only/);
    await expect(store.createRun({ preset: { method: 'binary' } } as never, 'r')).rejects.toThrow(StoredConfigError);
    await expect(store.createRun({ preset: { method: 'binary' } } as never, 'r')).rejects.toThrow(/run config field "preset\./);
    await expect(store.createRun({ ...testConfig(), seeds: { a: 1.5 } }, 'r')).rejects.toThrow(/field "seeds.a" must be an integer/);
  });

  it('keeps API keys out of a run config; they belong in settings', async () => {
    const store = newStore();
    const id = await store.createRun(testConfig({ judge: { endpoint: 'http://localhost:8000/v1', apiKey: 'sk-planted' } }), 'r');
    const run = await store.getRun(id);
    expect(run!.config.judge).toEqual({ endpoint: 'http://localhost:8000/v1' });
    await store.setSetting('endpoint.judge.apiKey', 'sk-planted');
    expect(await store.getSetting('endpoint.judge.apiKey')).toBe('sk-planted');
    await store.deleteSetting('endpoint.judge.apiKey');
    expect(await store.getSetting('endpoint.judge.apiKey')).toBeUndefined();
  });
});

describe('records', () => {
  it('numbers appends 1, 2, 3 ... per run, committed before the promise resolves', async () => {
    const store = newStore();
    const a = await store.createRun(testConfig(), 'a');
    const b = await store.createRun(testConfig(), 'b');
    const records = sampleRun();
    expect(await store.append(a, records[0])).toBe(1);
    expect(await store.append(b, records[0])).toBe(1);
    expect(await store.appendMany(a, records.slice(1, 4))).toEqual([2, 3, 4]);
    expect(await store.appendMany(a, [])).toEqual([]);
    // A second connection sees the record as soon as append resolved: it is on disk.
    const other = new RunStore({ name: store.db.name });
    stores.push(other);
    expect((await other.records(a)).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(await store.lastSeq(a)).toBe(4);
    expect(await store.lastSeq(b)).toBe(1);
  });

  it('gives distinct increasing seqs to concurrent appends', async () => {
    const store = newStore();
    const id = await store.createRun(testConfig(), 'a');
    const records = sampleRun();
    const seqs = await Promise.all(records.map((r) => store.append(id, r)));
    expect([...seqs].sort((x, y) => x - y)).toEqual(records.map((_, i) => i + 1));
    expect((await store.records(id)).map((r) => r.record)).toEqual(records.map((_, i) => records[seqs.indexOf(i + 1)]));
  });

  it('returns records unchanged and filters by kind, session, step, version and seq range', async () => {
    const store = newStore();
    const id = await store.createRun(testConfig(), 'a');
    const records = sampleRun();
    await store.appendMany(id, records);
    expect((await store.records(id)).map((r) => r.record)).toEqual(records);
    const steps = await store.records(id, { kind: 'train_step' });
    expect(steps.map((r) => r.record.step)).toEqual([0, 1]);
    const stepSeq = steps[1].seq;
    expect((await store.records(id, { kind: 'train_step', fromSeq: stepSeq })).map((r) => r.seq)).toEqual([stepSeq]);
    const bob = await store.records(id, { session: 'bob' });
    expect(bob.every((r) => r.record.session === 'bob')).toBe(true);
    expect(bob.map((r) => r.record.kind)).toEqual(
      [...Array(2)].flatMap(() => ['interaction', 'judge_vote', 'judge_vote', 'judge_result', 'judge_result', 'sample']).concat('session_end'),
    );
    expect((await store.records(id, { session: 'bob', kind: 'sample' })).length).toBe(2);
    expect((await store.records(id, { step: 1 })).map((r) => r.record.kind)).toEqual(['train_step', 'evaluation']);
    expect((await store.records(id, { version: 2 })).length).toBe(records.filter((r) => r.version === 2).length);
    expect((await store.records(id, { fromSeq: 3, toSeq: 5 })).map((r) => r.seq)).toEqual([3, 4, 5]);
    expect((await store.records(id, { kind: 'interaction', limit: 2 })).map((r) => r.record.session)).toEqual(['alice', 'bob']);
  });

  it('refuses a malformed record, naming the field, and writes nothing of the batch', async () => {
    const store = newStore();
    const id = await store.createRun(testConfig(), 'a');
    const bad = { ...trainStep(0, 0, 5), stats: { ...(trainStep(0, 0, 5) as { stats: object }).stats, loss: NaN } };
    const err = await store.appendMany(id, [evaluation(undefined, 0, 1, 0.1), bad as never]).catch((e) => e);
    expect(err).toBeInstanceOf(InvalidRunDataError);
    expect(err.message).toMatch(/record 1 \(train_step\) field "stats.loss" must be a finite number.*NaN statistic must be written as null/);
    expect(await store.records(id)).toEqual([]);
  });

  it('derives chart metrics from train steps and evaluations', async () => {
    const store = newStore();
    const id = await store.createRun(testConfig(), 'a');
    await store.appendMany(id, sampleRun());
    await store.append(id, trainStep(2, 2, 9_999, 'non-finite gradient'));
    const metrics = await store.metrics(id);
    expect(metrics.map((m) => [m.kind, m.name, m.step, m.version, m.skipped])).toEqual([
      ['evaluation', 'personalization', null, 0, null],
      ['train_step', 'train', 0, 0, null],
      ['train_step', 'train', 1, 1, null],
      ['evaluation', 'personalization', 1, 2, null],
      ['train_step', 'train', 2, 2, 'non-finite gradient'],
    ]);
    expect(metrics[1].values).toMatchObject({ loss: 0.5, clipFracHigh: 0.125, samples: 2, logpGap: null });
    expect(metrics[3].values).toEqual({ mean: 0.76, n: 2 });
    const seqs = (await store.records(id, { kind: 'train_step' })).map((r) => r.seq);
    expect(metrics.filter((m) => m.kind === 'train_step').map((m) => m.seq)).toEqual(seqs);
  });

  it('tracks approximately how many bytes a run holds', async () => {
    const store = newStore();
    const id = await store.createRun(testConfig(), 'a');
    const records = sampleRun();
    await store.appendMany(id, records);
    const json = records.map((r) => JSON.stringify(r)).join('');
    expect((await store.getRun(id))!.bytes).toBe(new TextEncoder().encode(json).length);
    await store.saveAdapter(id, 1, peftFiles());
    const withAdapter = (await store.getRun(id))!.bytes;
    await store.saveAdapter(id, 1, peftFiles(2));
    expect((await store.getRun(id))!.bytes).toBe(withAdapter);
  });
});

describe('adapters', () => {
  it('saves PEFT files per version and returns the latest', async () => {
    const store = newStore();
    const id = await store.createRun(testConfig(), 'a');
    expect(await store.latestAdapter(id)).toBeUndefined();
    const v1 = peftFiles(1);
    await store.saveAdapter(id, 1, v1);
    await store.saveAdapter(id, 3, peftFiles(3));
    await store.saveAdapter(id, 2, peftFiles(2));
    const latest = await store.latestAdapter(id);
    expect(latest!.version).toBe(3);
    expect(latest!.files).toEqual(peftFiles(3));
    expect((await store.adapter(id, 1))!.files[PEFT_WEIGHTS]).toEqual(v1[PEFT_WEIGHTS]);
    expect((await store.adapter(id, 1))!.files[PEFT_CONFIG]).toBe(v1[PEFT_CONFIG]);
    expect(await store.adapterVersions(id)).toEqual([1, 2, 3]);
    await expect(store.saveAdapter(id, -1, v1)).rejects.toBeInstanceOf(InvalidRunDataError);
    await expect(store.saveAdapter(id, 4, { [PEFT_WEIGHTS]: 'x', [PEFT_CONFIG]: '{}' } as never)).rejects.toBeInstanceOf(InvalidRunDataError);
  });
});

describe('deleteRun', () => {
  it('removes the run with its records, metrics and adapters, and nothing of other runs', async () => {
    const store = newStore();
    const keep = await store.createRun(testConfig(), 'keep');
    const drop = await store.createRun(testConfig(), 'drop');
    for (const id of [keep, drop]) {
      await store.appendMany(id, sampleRun());
      await store.saveAdapter(id, 1, peftFiles());
    }
    await store.deleteRun(drop);
    expect(await store.getRun(drop)).toBeUndefined();
    expect(await store.records(drop)).toEqual([]);
    expect(await store.metrics(drop)).toEqual([]);
    expect(await store.latestAdapter(drop)).toBeUndefined();
    expect(await store.db.records.count()).toBe(sampleRun().length);
    expect(await store.db.metrics.count()).toBe(4);
    expect(await store.db.adapters.count()).toBe(1);
    expect((await store.records(keep)).length).toBe(sampleRun().length);
  });
});

describe('markInterruptedOnStartup', () => {
  it('turns runs left running into interrupted ones and leaves the rest alone', async () => {
    const store = newStore();
    const running = await store.createRun(testConfig(), 'running');
    const paused = await store.createRun(testConfig(), 'paused', 'paused');
    const finished = await store.createRun(testConfig(), 'finished');
    await store.setStatus(finished, 'finished');
    const report = await store.markInterruptedOnStartup();
    expect(report).toEqual({ interrupted: [running], ended: [], discardedImports: [] });
    expect((await store.getRun(running))!.status).toBe('interrupted');
    expect((await store.getRun(paused))!.status).toBe('paused');
    expect((await store.getRun(finished))!.status).toBe('finished');
  });

  it('stops, rather than interrupts, a run whose end is the closing of its tab', async () => {
    const store = newStore();
    const talk = await store.createRun({ ...testConfig(), scenario: { id: 'talk' } } as StorableConfig, 'talk');
    const story = await store.createRun(testConfig(), 'story');
    const report = await store.markInterruptedOnStartup({ endsWithTab: (c) => (c as { scenario?: { id?: string } }).scenario?.id === 'talk' });
    expect(report).toEqual({ interrupted: [story], ended: [talk], discardedImports: [] });
    expect((await store.getRun(talk))!.status).toBe('stopped');
    expect((await store.getRun(story))!.status).toBe('interrupted');
  });

  it('removes an import that a closed tab left half written', async () => {
    const store = newStore();
    const writer = await store.beginImport({ config: testConfig(), label: 'half', notes: '', created: 1 });
    await writer.append(sampleRun().slice(0, 5));
    expect(await store.listRuns()).toEqual([]);
    expect(await store.getRun(writer.runId)).toBeUndefined();
    const report = await store.markInterruptedOnStartup();
    expect(report.discardedImports).toEqual([writer.runId]);
    expect(await store.db.records.count()).toBe(0);
    expect(await store.db.runs.count()).toBe(0);
  });
});

describe('runs driven by a live tab (Web Locks)', () => {
  it("are left running by another tab's startup, and cannot be claimed twice", async () => {
    const held = fakeLocks();
    const store = newStore();
    const live = await store.createRun(testConfig(), 'live');
    const orphan = await store.createRun(testConfig(), 'orphan');
    const release = await store.claimRun(live);
    expect(held.size).toBe(1);
    await expect(store.claimRun(live)).rejects.toBeInstanceOf(RunBusyError);
    await expect(store.claimRun('missing')).rejects.toBeInstanceOf(RunNotFoundError);
    expect((await store.markInterruptedOnStartup()).interrupted).toEqual([orphan]);
    expect((await store.getRun(live))!.status).toBe('running');
    // The tab closes: the browser drops its locks.
    release();
    await vi.waitFor(() => expect(held.size).toBe(0));
    expect((await store.markInterruptedOnStartup()).interrupted).toEqual([live]);
    const again = await store.claimRun(live);
    again();
  });

  it('keep an import that another tab is still writing', async () => {
    fakeLocks();
    const store = newStore();
    const writer = await store.beginImport({ config: testConfig(), label: 'in progress', notes: '', created: 1 });
    await writer.append(sampleRun().slice(0, 3));
    expect((await store.markInterruptedOnStartup()).discardedImports).toEqual([]);
    await writer.commit();
    expect((await store.getRun(writer.runId))!.label).toBe('in progress');
  });
});

describe('read-only imported runs', () => {
  it('refuse appends, adapters and status changes but allow label and notes', async () => {
    const store = newStore();
    const writer = await store.beginImport({ config: testConfig(), label: 'shared', notes: 'from a colleague', created: 5 });
    await writer.append(sampleRun());
    await writer.saveAdapter(2, peftFiles());
    await writer.commit();
    const id = writer.runId;
    expect(await store.getRun(id)).toMatchObject({ status: 'imported', readOnly: true, created: 5, label: 'shared' });
    await expect(store.append(id, sampleRun()[0])).rejects.toBeInstanceOf(ReadOnlyRunError);
    await expect(store.saveAdapter(id, 3, peftFiles())).rejects.toBeInstanceOf(ReadOnlyRunError);
    await expect(store.setStatus(id, 'running')).rejects.toThrow(/imported from a file and is read-only/);
    await store.rename(id, 'mine now');
    await store.setNotes(id, 'checked');
    expect(await store.getRun(id)).toMatchObject({ label: 'mine now', notes: 'checked', status: 'imported' });
    expect((await store.records(id)).length).toBe(sampleRun().length);
  });
});

describe('many records', () => {
  it('appends 5,000 records in batches with contiguous seqs', async () => {
    const store = newStore();
    const id = await store.createRun(testConfig(), 'big');
    const all = Array.from({ length: 1000 }, (_, i) => turnRecords(`s${i % 7}`, i + 1, 0, i).slice(0, 5)).flat();
    for (let i = 0; i < all.length; i += 250) await store.appendMany(id, all.slice(i, i + 250));
    expect(await store.lastSeq(id)).toBe(5000);
    const page = await store.records(id, { fromSeq: 4001, limit: 1000 });
    expect(page.map((r) => r.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => 4001 + i));
    expect(page.map((r) => r.record)).toEqual(all.slice(4000));
  });
});

describe('durability', () => {
  it('writes the run row, step records and checkpoints strictly, other records the cheap way', async () => {
    const store = newStore();
    const watch = watchTransactions();
    try {
      const id = await store.createRun(testConfig(), 'durable');
      const created = watch.seen.splice(0);
      await store.appendMany(id, turnRecords('s0', 1, 0, 10));
      const turns = watch.seen.splice(0);
      await store.saveAdapter(id, 1, peftFiles(1));
      const checkpoint = watch.seen.splice(0);
      await store.appendMany(id, [trainStep(0, 0, 20), boundary(0, 20)]);
      const step = watch.seen.splice(0);
      await store.setStatus(id, 'paused');
      const status = watch.seen.splice(0);
      await store.setSetting('lab.setup', { any: 1 });
      const setting = watch.seen.splice(0);

      expect(created).toEqual([{ stores: ['runs'], durability: 'strict' }]);
      expect(turns).toEqual([{ stores: ['metrics', 'records', 'runs'], durability: 'default' }]);
      expect(checkpoint).toEqual([{ stores: ['adapters', 'runs'], durability: 'strict' }]);
      expect(step).toEqual([{ stores: ['metrics', 'records', 'runs'], durability: 'strict' }]);
      expect(status).toEqual([{ stores: ['runs'], durability: 'strict' }]);
      expect(setting).toEqual([{ stores: ['settings'], durability: 'default' }]);
    } finally {
      watch.stop();
    }
  });

  it('numbers records in one sequence across both connections, even when their writes overlap', async () => {
    const store = newStore();
    const id = await store.createRun(testConfig(), 'mixed');
    const writes = Array.from({ length: 12 }, (_, i) =>
      i % 3 === 2 ? store.appendMany(id, [trainStep(i, i, i), boundary(i, i)]) : store.appendMany(id, turnRecords(`s${i}`, 1, 0, i)),
    );
    const seqs = (await Promise.all(writes)).flat().sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
    expect((await store.records(id)).length).toBe(seqs.length);
  });

  it('with durableWrites "default", every write is the browser default (the bench compares the two)', async () => {
    const store = new RunStore({ name: uniqueDbName('store'), durableWrites: 'default' });
    stores.push(store);
    const watch = watchTransactions();
    try {
      const id = await store.createRun(testConfig(), 'relaxed');
      await store.appendMany(id, [trainStep(0, 0, 20), boundary(0, 20)]);
      await store.saveAdapter(id, 1, peftFiles(1));
      expect(watch.seen.map((t) => t.durability)).toEqual(['default', 'default', 'default']);
    } finally {
      watch.stop();
    }
  });
});
