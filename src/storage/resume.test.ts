import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../rl';
import { boundary, peftFiles, sampleRun, testConfig, trainStep, turnRecords, uniqueDbName } from '../../test/support/storage/fixtures';
import { RunStore } from './store';
import { RunNotFoundError } from './errors';

const stores: RunStore[] = [];
async function runWith(records: RunRecord[], adapterVersions: number[]) {
  const store = new RunStore({ name: uniqueDbName('resume') });
  stores.push(store);
  const id = await store.createRun(testConfig(), 'r');
  await store.appendMany(id, records);
  for (const v of adapterVersions) await store.saveAdapter(id, v, peftFiles(v));
  return { store, id };
}
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const sampleKeys = (point: Awaited<ReturnType<RunStore['resumePoint']>>) => point.buffered.map((b) => `${b.sample.record.session}#${b.sample.record.turn}`);

describe('resumePoint', () => {
  it('resumes after the last step whose adapter was saved, re-buffering the samples it did not train on', async () => {
    const records = sampleRun();
    const { store, id } = await runWith(records, [1, 2]);
    const point = await store.resumePoint(id);
    expect(point).toMatchObject({ lastStep: 1, nextStep: 2, version: 2 });
    expect(point.adapter!.version).toBe(2);
    expect(point.adapter!.files).toEqual(peftFiles(2));
    const boundarySeq = (await store.records(id, { kind: 'version_boundary' }))[1].seq;
    expect(point.throughSeq).toBe(boundarySeq);
    // Steps 0 and 1 consumed 2 samples each; alice#3 is still in the buffer.
    expect(sampleKeys(point)).toEqual(['alice#3']);
    expect(point.buffered[0].interaction!.record).toMatchObject({ kind: 'interaction', session: 'alice', turn: 3, turnType: 'main' });
  });

  it('falls back to an earlier step when the latest version has no adapter (the save was in flight)', async () => {
    const { store, id } = await runWith(sampleRun(), [1]);
    const point = await store.resumePoint(id);
    expect(point).toMatchObject({ lastStep: 0, nextStep: 1, version: 1 });
    expect(point.adapter!.version).toBe(1);
    // The samples of the dropped step 1 go back into the buffer, oldest first.
    expect(sampleKeys(point)).toEqual(['alice#2', 'bob#2', 'alice#3']);
  });

  it('starts from the base model when no step can be rebuilt', async () => {
    const { store, id } = await runWith(sampleRun(), []);
    const point = await store.resumePoint(id);
    expect(point).toMatchObject({ lastStep: null, nextStep: 0, version: 0, adapter: null, throughSeq: 0 });
    expect(sampleKeys(point)).toEqual(['alice#1', 'bob#1', 'alice#2', 'bob#2', 'alice#3']);
  });

  it('drops a train step that was in flight (no train_step record yet)', async () => {
    const records = [...sampleRun(), ...turnRecords('carol', 1, 2, 5_000)];
    const { store, id } = await runWith(records, [1, 2]);
    const point = await store.resumePoint(id);
    expect(point.lastStep).toBe(1);
    expect(sampleKeys(point)).toEqual(['alice#3', 'carol#1']);
  });

  it('counts a skipped step as completed without a new version', async () => {
    const records = [
      ...turnRecords('a', 1, 0, 1),
      ...turnRecords('b', 1, 0, 2),
      trainStep(0, 0, 3),
      boundary(0, 4),
      ...turnRecords('a', 2, 1, 5),
      ...turnRecords('b', 2, 1, 6),
      trainStep(1, 1, 7, 'non-finite loss'),
      ...turnRecords('a', 3, 1, 8),
    ];
    const { store, id } = await runWith(records, [1]);
    const point = await store.resumePoint(id);
    expect(point).toMatchObject({ lastStep: 1, nextStep: 2, version: 1 });
    expect(point.adapter!.version).toBe(1);
    expect(sampleKeys(point)).toEqual(['a#3']);
  });

  it('takes version + 1 when a step logged no version boundary', async () => {
    const records = [...turnRecords('a', 1, 0, 1), ...turnRecords('b', 1, 0, 2), trainStep(0, 0, 3)];
    const { store, id } = await runWith(records, [1]);
    expect(await store.resumePoint(id)).toMatchObject({ lastStep: 0, version: 1, buffered: [] });
  });

  it('reports a sample whose interaction is missing rather than inventing one', async () => {
    const records = turnRecords('a', 1, 0, 1).filter((r) => r.kind !== 'interaction');
    const { store, id } = await runWith(records, []);
    const point = await store.resumePoint(id);
    expect(point.buffered).toHaveLength(1);
    expect(point.buffered[0].interaction).toBeNull();
  });

  it('refuses an unknown run', async () => {
    const { store } = await runWith([], []);
    await expect(store.resumePoint('missing')).rejects.toBeInstanceOf(RunNotFoundError);
  });
});
