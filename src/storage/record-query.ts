/** How the run store reads a run's records: by the most selective index, in seq order. */
import Dexie from 'dexie';
import type { RunRecord } from '../rl';
import { runRange, type NextStateDB, type RecordRow } from './db';
import type { RecordQuery, StoredRecord } from './store-types';

function toRecord(row: RecordRow): StoredRecord {
  const { runId: _runId, seq, ...record } = row;
  return { seq, record: record as RunRecord };
}

/** The run's records that match every condition of `query`, in seq order. */
export async function queryRecords(db: NextStateDB, runId: string, query: RecordQuery): Promise<StoredRecord[]> {
  const { kind, session, step, version, limit } = query;
  const from = query.fromSeq ?? Dexie.minKey;
  const to = query.toSeq ?? Dexie.maxKey;
  const t = db.records;
  // The most selective index leads; remaining conditions filter within it.
  let rows =
    kind !== undefined
      ? t.where('[runId+kind+seq]').between([runId, kind, from], [runId, kind, to], true, true)
      : session !== undefined
        ? t.where('[runId+session+seq]').between([runId, session, from], [runId, session, to], true, true)
        : step !== undefined
          ? t.where('[runId+step]').equals([runId, step])
          : version !== undefined
            ? t.where('[runId+version]').equals([runId, version])
            : t.where('[runId+seq]').between([runId, from], [runId, to], true, true);
  const lo = query.fromSeq ?? -Infinity;
  const hi = query.toSeq ?? Infinity;
  rows = rows.filter(
    (r) =>
      (session === undefined || r.session === session) &&
      (step === undefined || r.step === step) &&
      (version === undefined || r.version === version) &&
      r.seq >= lo &&
      r.seq <= hi,
  );
  if (limit !== undefined) rows = rows.limit(limit);
  return (await rows.toArray()).map(toRecord);
}

/** The highest seq of the run (0 when it has no records). */
export async function lastSeqIn(db: NextStateDB, runId: string): Promise<number> {
  const [lo, hi] = runRange(runId);
  const key = await db.records.where('[runId+seq]').between(lo, hi, true, true).lastKey();
  return key === undefined ? 0 : (key as unknown as [string, number])[1];
}
