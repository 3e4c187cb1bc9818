/**
 * The run store's writes of records and adapters: validated, numbered, committed in one
 * transaction, and turned into StorageFullError (nothing kept) when the quota is used up.
 */
import { PEFT_CONFIG, PEFT_WEIGHTS, type PeftFiles } from '../gpu/peft';
import { RecordValidationError, validateRecord, type RecordKind, type RunRecord } from '../rl';
import { adapterBytes, recordBytes, type AdapterRow, type MetricRow, type NextStateDB, type RecordRow, type RunRow } from './db';
import { InvalidRunDataError, ReadOnlyRunError, RunNotFoundError, StorageFullError, type DeletableRun } from './errors';
import { metricOf } from './metrics';
import { isQuotaError, type StorageStatus } from './quota';
import { lastSeqIn } from './record-query';

/** Records a resume is computed from (resume.ts): the batch holding them is written strictly. */
const STEP_KINDS: ReadonlySet<RecordKind> = new Set(['train_step', 'version_boundary']);

/** Candidate runs listed in a StorageFullError. */
const DELETABLE_SHOWN = 5;

function checkVersion(version: number): void {
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new InvalidRunDataError(`adapter version must be a non-negative integer, got ${version}`);
  }
}

/** Who writes: the run's own loop, the import writing it, or the watch keeping a server's run. */
export type Writer = 'run' | 'import' | 'watch';

export class StoreWriter {
  /**
   * @param db the relaxed connection
   * @param durable the strict-durability connection, for the writes a resume depends on
   */
  constructor(
    private readonly db: NextStateDB,
    private readonly durable: NextStateDB,
    private readonly now: () => number,
    private readonly status: () => Promise<StorageStatus>,
  ) {}

  /**
   * Validates and appends records to the run (or to the import writing it, or to the watched run
   * keeping a server's), all or none. `firstSeq`, when given, is the seq the first record must get.
   */
  async records(runId: string, records: readonly RunRecord[], writer: Writer, firstSeq?: number): Promise<number[]> {
    if (records.length === 0) return [];
    const checked = records.map((r, i) => {
      try {
        return validateRecord(r, `record ${i} of ${records.length} appended to run ${runId}`);
      } catch (e) {
        if (!(e instanceof RecordValidationError)) throw e;
        throw new InvalidRunDataError(
          `Cannot append to run ${runId}: record ${i} (${String((r as { kind?: unknown }).kind)}) field "${e.field}" ${e.problem}. ` +
            'Nothing was written. This is a bug in the code that built the record (e.g. a NaN statistic must be written as null).',
          { cause: e },
        );
      }
    });
    const sizes = checked.map(recordBytes);
    const bytes = sizes.reduce((a, b) => a + b, 0);
    const db = checked.some((r) => STEP_KINDS.has(r.kind)) ? this.durable : this.db;
    return this.guardQuota(runId, bytes, () =>
      db.transaction('rw', [db.runs, db.records, db.metrics], async () => {
        const run = await this.writableRun(db, runId, writer, 'take new records');
        const first = (await lastSeqIn(db, runId)) + 1;
        if (firstSeq !== undefined && firstSeq !== first)
          throw new InvalidRunDataError(
            `Run "${run.label}" holds ${first - 1} records, so the next is record ${first}, not ${firstSeq}. Nothing was written. ` +
              'Is another tab of the lab watching the same server? Watch it in one tab only.',
          );
        const rows: RecordRow[] = checked.map((r, i) => ({ ...r, runId, seq: first + i }));
        const metrics: MetricRow[] = [];
        rows.forEach((row, i) => {
          const m = metricOf(row.seq, checked[i]);
          if (m) metrics.push({ ...m, runId });
        });
        await db.records.bulkAdd(rows);
        if (metrics.length) await db.metrics.bulkAdd(metrics);
        await db.runs.update(runId, { bytes: run.bytes + bytes, updated: this.now() });
        return rows.map((r) => r.seq);
      }),
    );
  }

  /** Saves the PEFT files of a policy version, replacing an earlier save of that version. */
  async adapter(runId: string, version: number, files: PeftFiles, writer: Exclude<Writer, 'watch'>): Promise<void> {
    checkVersion(version);
    const weights = files[PEFT_WEIGHTS];
    const config = files[PEFT_CONFIG];
    if (!(weights instanceof Uint8Array) || typeof config !== 'string') {
      throw new InvalidRunDataError(`saveAdapter needs "${PEFT_WEIGHTS}" as bytes and "${PEFT_CONFIG}" as a string`);
    }
    // A copy: the caller may reuse or transfer its buffer, and a Node Buffer view would drag
    // its whole pool slab into the database.
    const row: AdapterRow = { runId, version, weights: weights.slice(), config, ts: this.now() };
    const bytes = adapterBytes(row);
    const db = this.durable;
    await this.guardQuota(runId, bytes, () =>
      db.transaction('rw', [db.runs, db.adapters], async () => {
        const run = await this.writableRun(db, runId, writer, 'save adapters');
        const old = await db.adapters.get([runId, version]);
        await db.adapters.put(row);
        await db.runs.update(runId, { bytes: run.bytes + bytes - (old ? adapterBytes(old) : 0), updated: this.now() });
      }),
    );
  }

  /** Runs a write; a quota failure becomes StorageFullError naming runs to delete. */
  async guardQuota<T>(runId: string | null, bytes: number, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (e) {
      if (!isQuotaError(e)) throw e;
      throw await this.storageFull(runId, bytes, e);
    }
  }

  /** Checks a writer may touch the run: visible and writable, the import writing it, or the watch keeping it. */
  private async writableRun(db: NextStateDB, runId: string, writer: Writer, action: string): Promise<RunRow> {
    const run = await db.runs.get(runId);
    if (!run || Boolean(run.importing) !== (writer === 'import')) throw new RunNotFoundError(runId);
    if (writer === 'watch' && !run.watch) throw new InvalidRunDataError(`Run "${run.label}" is not a watched server run; only a watch adds records to one.`);
    if (run.readOnly && writer === 'run') throw new ReadOnlyRunError(runId, action, Boolean(run.watch));
    return run;
  }

  private async storageFull(runId: string | null, bytes: number, cause: unknown): Promise<StorageFullError> {
    // Best effort: the error must reach the caller even if these reads fail too.
    const runs = await this.db.runs.toArray().catch(() => [] as RunRow[]);
    const deletable: DeletableRun[] = runs
      .filter((r) => r.id !== runId && !r.importing)
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, DELETABLE_SHOWN)
      .map((r) => ({ id: r.id, label: r.label, bytes: r.bytes }));
    const status = await this.status().catch(() => null);
    const label = runs.find((r) => r.id === runId)?.label ?? null;
    return new StorageFullError(runId, label, Math.max(bytes, 1), deletable, status?.usage ?? null, status?.quota ?? null, cause);
  }
}
