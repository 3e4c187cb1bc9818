/**
 * A writable copy of a stored run, to train on where the original must stay as it is (an
 * imported run is read-only: it is what its file held). The copy has the original's records in
 * their order (seqs 1..N again, metrics rebuilt from them) and every adapter it saved, and is
 * written the way an import is: invisible until whole, removed if the copy fails or the tab
 * closes halfway (RunStore.beginImport).
 */
import type { StorableConfig } from './stored-config';
import type { RunStore } from './store';
import { RunNotFoundError } from './errors';

export interface CopyOptions {
  label: string;
  /** The copy's config; the original's when absent (a resumed copy may plan more steps). */
  config?: StorableConfig;
  /** Records per transaction (default 500). */
  batchRecords?: number;
}

/**
 * @returns the copy's run id; the copy's status is 'stopped', so it can be resumed
 * @throws RunNotFoundError, StorageFullError (nothing of the copy is kept)
 */
export async function copyRun(store: RunStore, sourceId: string, o: CopyOptions): Promise<string> {
  const source = await store.getRun(sourceId);
  if (!source) throw new RunNotFoundError(sourceId);
  const batch = o.batchRecords ?? 500;
  const writer = await store.beginImport({
    config: o.config ?? source.config,
    label: o.label,
    notes: source.notes,
    created: Date.now(),
    writable: true,
  });
  try {
    for (let from = 1; ; from += batch) {
      const rows = await store.records(sourceId, { fromSeq: from, limit: batch });
      if (!rows.length) break;
      await writer.append(rows.map((r) => r.record));
    }
    for (const version of await store.adapterVersions(sourceId)) {
      const adapter = await store.adapter(sourceId, version);
      if (adapter) await writer.saveAdapter(version, adapter.files);
    }
    await writer.commit();
    return writer.runId;
  } catch (e) {
    await writer.abort().catch(() => {});
    throw e;
  }
}
