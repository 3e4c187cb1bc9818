import { afterEach, describe, expect, it } from 'vitest';
import { RunStore } from '../../storage/index';
import { recordedRun } from '../../../test/support/views/testing';
import { RunLibrary } from './runs.svelte';
import { defaultSetup, toRunConfig } from './setup';

const stores: RunStore[] = [];
async function library(live: { id: string; records: () => ReturnType<typeof recordedRun> } | null = null) {
  const store = new RunStore({ name: `runs-${Date.now()}-${stores.length}` });
  stores.push(store);
  await store.open();
  const seed = async (label: string) => {
    const id = await store.createRun(toRunConfig(defaultSetup({ webgpu: false })), label, 'finished');
    await store.appendMany(id, recordedRun());
    return id;
  };
  return { store, seed, runs: new RunLibrary(store, () => live) };
}
afterEach(async () => {
  for (const s of stores.splice(0)) {
    s.close();
    await s.db.delete().catch(() => {});
  }
});

describe('RunLibrary', () => {
  it('opens a run with its records, read from storage once', async () => {
    const { store, seed, runs } = await library();
    const a = await seed('a');
    await runs.refresh();
    expect(runs.runs.map((r) => r.label)).toEqual(['a']);
    await runs.open(a);
    expect(runs.openRun?.id).toBe(a);
    expect(runs.records).toHaveLength(recordedRun().length);
    await store.appendMany(a, recordedRun().slice(0, 1));
    expect(await runs.loadRecords(a)).toHaveLength(recordedRun().length);
    runs.remember(a);
    expect(await runs.loadRecords(a)).toHaveLength(recordedRun().length + 1);
    await expect(runs.open('nope')).rejects.toThrow(/No run with id nope/);
  });

  it('reads the live run from its feed, not from storage', async () => {
    const { runs } = await library({ id: 'live', records: () => recordedRun().slice(0, 2) });
    expect(await runs.loadRecords('live')).toHaveLength(2);
  });

  it('overlays ticked runs but never the open one on itself, and deleting one clears it everywhere', async () => {
    const { seed, runs } = await library();
    const a = await seed('a');
    const b = await seed('b');
    await runs.refresh();
    await runs.toggleCompare(a, true);
    await runs.toggleCompare(b, true);
    await runs.toggleCompare(a, true);
    expect(runs.compareIds).toEqual([a, b]);
    await runs.open(a);
    expect(runs.compared.map((c) => c.label)).toEqual(['b']);
    expect(await runs.rename(b, '  ')).toBeNull();
    expect(await runs.rename(b, ' bee ')).toBe('bee');
    expect(runs.runs.find((r) => r.id === b)?.label).toBe('bee');
    await runs.remove(b);
    expect(runs.compared).toEqual([]);
    await runs.remove(a);
    expect(runs.openRun).toBeNull();
    expect(runs.records).toEqual([]);
    expect(runs.runs).toEqual([]);
  });
});
