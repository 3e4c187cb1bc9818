/**
 * RunStore: the app's and the run loop's only door to the database. Appends are validated,
 * numbered and committed before their promise resolves, so whatever the UI shows or the run
 * loop acts on is already on disk; a quota failure rejects with StorageFullError and keeps
 * nothing of the failed write, so no record is ever dropped silently.
 *
 * "Committed" means on disk only for strict transactions: Chromium's default ("relaxed")
 * reports a commit once the write reached the OS, which a power cut or an OS crash can still
 * lose. The writes a resume depends on (the run's row, step records, checkpoints) go through a
 * second connection opened with strict durability; other records stay relaxed, cheap, and are
 * flushed by the next strict commit, since the browser's store writes one log in order.
 */
import { PEFT_CONFIG, PEFT_WEIGHTS, type PeftFiles } from '../gpu/peft';
import type { InteractionRecord, RecordKind, RunRecord } from '../rl';
import { utf8Length } from '../base/bytes';
import { parseStoredConfig, type StorableConfig } from './stored-config';
import { NextStateDB, RUN_STATUSES, runRange, type AdapterRow, type RunRow, type RunStatus } from './db';
import { InvalidRunDataError, ReadOnlyRunError, RunBusyError, RunNotFoundError } from './errors';
import type { Metric } from './metrics';
import { heldLocks, tryHold } from './locks';
import { storageStatus } from './quota';
import { lastSeqIn, queryRecords } from './record-query';
import { findResumeStep } from './resume';
import { StoreWriter } from './store-writes';
import type {
  ImportedRunMeta,
  ImportWriter,
  RecordQuery,
  ResumePoint,
  RunInfo,
  RunStoreOptions,
  StartupReport,
  StoredAdapter,
  StoredRecord,
  WatchedRunMeta,
} from './store-types';

function toInfo(row: RunRow): RunInfo {
  const { importing: _importing, ...info } = row;
  return info;
}

function toAdapter(row: AdapterRow): StoredAdapter {
  return { version: row.version, ts: row.ts, files: { [PEFT_WEIGHTS]: row.weights, [PEFT_CONFIG]: row.config } };
}

function jsonBytes(value: unknown): number {
  return utf8Length(JSON.stringify(value) ?? '');
}

export class RunStore {
  readonly db: NextStateDB;
  /** The same database through a strict-durability connection (`db` itself with durableWrites 'default'). */
  private readonly durable: NextStateDB;
  private readonly now: () => number;
  private readonly newId: () => string;
  private readonly writer: StoreWriter;

  constructor(options: RunStoreOptions = {}) {
    this.db = new NextStateDB(options.name, options.dexie);
    // Dexie sets durability per connection, not per transaction. It opens on first use.
    this.durable = options.durableWrites === 'default' ? this.db : new NextStateDB(options.name, { ...options.dexie, chromeTransactionDurability: 'strict' });
    // One set of write hooks (Dexie's observers of a table's writes) for both connections, so
    // whatever watches `db` sees every write, whichever connection made it.
    if (this.durable !== this.db) for (const table of this.db.tables) this.durable.table(table.name).hook = table.hook;
    this.now = options.now ?? Date.now;
    this.newId = options.newId ?? (() => crypto.randomUUID());
    this.writer = new StoreWriter(this.db, this.durable, this.now, options.storageStatus ?? storageStatus);
  }

  /** Opens (and if needed upgrades) the database. Other methods open it lazily too. */
  async open(): Promise<this> {
    await this.db.open();
    return this;
  }

  close(): void {
    this.db.close();
    this.durable.close();
  }

  // ---- runs ----

  /**
   * Creates a run in status 'running'. Secret-named keys are dropped from the config (API
   * keys belong in settings).
   *
   * @throws StoredConfigError for a config the run file format could not carry
   */
  async createRun(config: StorableConfig, label: string, status: RunStatus = 'running'): Promise<string> {
    this.checkStatus(status);
    const t = this.now();
    const row: RunRow = {
      id: this.newId(),
      config: parseStoredConfig(config),
      status,
      created: t,
      updated: t,
      label,
      notes: '',
      readOnly: false,
      bytes: 0,
    };
    await this.writer.guardQuota(null, jsonBytes(row), () => this.durable.runs.add(row));
    return row.id;
  }

  /** Visible runs, most recently updated first. */
  async listRuns(): Promise<RunInfo[]> {
    const rows = await this.db.runs.orderBy('updated').reverse().toArray();
    return rows.filter((r) => !r.importing).map(toInfo);
  }

  async getRun(runId: string): Promise<RunInfo | undefined> {
    const row = await this.db.runs.get(runId);
    return row && !row.importing ? toInfo(row) : undefined;
  }

  /** @throws ReadOnlyRunError for imported runs, whose status stays 'imported' */
  async setStatus(runId: string, status: RunStatus): Promise<void> {
    this.checkStatus(status);
    if (status === 'imported') throw new InvalidRunDataError(`status "imported" is set by importRun only`);
    await this.updateRun(runId, { status }, 'change its status');
  }

  async rename(runId: string, label: string): Promise<void> {
    await this.updateRun(runId, { label });
  }

  async setNotes(runId: string, notes: string): Promise<void> {
    await this.updateRun(runId, { notes });
  }

  /** Deletes a run with its records, metrics and adapters, all or nothing. */
  async deleteRun(runId: string): Promise<void> {
    const db = this.db;
    await db.transaction('rw', [db.runs, db.records, db.metrics, db.adapters], async () => {
      const [lo, hi] = runRange(runId);
      await db.records.where('[runId+seq]').between(lo, hi, true, true).delete();
      await db.metrics.where('[runId+seq]').between(lo, hi, true, true).delete();
      await db.adapters.where('[runId+version]').between(lo, hi, true, true).delete();
      await db.runs.delete(runId);
    });
  }

  /**
   * Call when a run loop starts driving a run, and call the returned function when it stops.
   * While held (the browser also lets go when the tab closes), other tabs see the run as
   * live: markInterruptedOnStartup leaves it alone and claimRun refuses it.
   *
   * @throws RunBusyError when another tab (or this one) already drives the run
   */
  async claimRun(runId: string): Promise<() => void> {
    await this.requireRun(runId);
    const release = await tryHold(this.lockName('run', runId));
    if (!release) throw new RunBusyError(runId);
    return release;
  }

  /**
   * Call once when the app starts, before any run loop: a run still 'running' that no live
   * tab has claimed belonged to a tab that closed, so it becomes 'interrupted' (resumable with
   * resumePoint), or 'stopped' where `endsWithTab` says closing the tab is how such a run ends
   * (talking to the policy has no last step); an import that no live tab is still writing is removed.
   */
  async markInterruptedOnStartup(options: { endsWithTab?: (config: StorableConfig) => boolean } = {}): Promise<StartupReport> {
    const held = await heldLocks();
    const live = (kind: 'run' | 'import', id: string) => held.has(this.lockName(kind, id));
    const db = this.db;
    return db.transaction('rw', [db.runs, db.records, db.metrics, db.adapters], async () => {
      const stale = db.runs
        .where('status')
        .equals('running')
        .filter((r) => !r.importing && !live('run', r.id));
      const ended: string[] = [];
      const interrupted: string[] = [];
      await stale.modify((r) => {
        const end = options.endsWithTab?.(r.config) ?? false;
        (end ? ended : interrupted).push(r.id);
        r.status = end ? 'stopped' : 'interrupted';
        r.updated = this.now();
      });
      const discardedImports = await db.runs.filter((r) => r.importing === true && !live('import', r.id)).primaryKeys();
      for (const id of discardedImports) await this.deleteRun(id);
      return { interrupted, ended, discardedImports };
    });
  }

  // ---- records ----

  /**
   * Appends one record; resolves with its seq once committed.
   *
   * @throws InvalidRunDataError for a malformed record (a bug in whatever built it)
   * @throws StorageFullError when the browser's quota is used up (nothing was written)
   * @throws ReadOnlyRunError, RunNotFoundError
   */
  async append(runId: string, record: RunRecord): Promise<number> {
    return (await this.appendMany(runId, [record]))[0];
  }

  /** Appends records in one transaction (all or none); resolves with their seqs once committed. */
  appendMany(runId: string, records: readonly RunRecord[]): Promise<number[]> {
    return this.writer.records(runId, records, 'run');
  }

  /** The run's records in seq order. */
  records<K extends RecordKind>(runId: string, query: RecordQuery & { kind: K }): Promise<StoredRecord<Extract<RunRecord, { kind: K }>>[]>;
  records(runId: string, query?: RecordQuery): Promise<StoredRecord[]>;
  records(runId: string, query: RecordQuery = {}): Promise<StoredRecord[]> {
    return queryRecords(this.db, runId, query);
  }

  /** The highest seq of the run (0 when it has no records). */
  async lastSeq(runId: string): Promise<number> {
    return lastSeqIn(this.db, runId);
  }

  /** Chart rows (train steps and evaluations) in seq order. */
  async metrics(runId: string): Promise<Metric[]> {
    const [lo, hi] = runRange(runId);
    const rows = await this.db.metrics.where('[runId+seq]').between(lo, hi, true, true).toArray();
    return rows.map(({ runId: _runId, ...m }) => m);
  }

  // ---- adapters ----

  /**
   * Saves the PEFT files of a policy version (replacing an earlier save of that version).
   *
   * @throws StorageFullError, ReadOnlyRunError, RunNotFoundError
   */
  async saveAdapter(runId: string, version: number, files: PeftFiles): Promise<void> {
    await this.writer.adapter(runId, version, files, 'run');
  }

  /** The adapter of the highest saved version. */
  async latestAdapter(runId: string): Promise<StoredAdapter | undefined> {
    const [lo, hi] = runRange(runId);
    const row = await this.db.adapters.where('[runId+version]').between(lo, hi, true, true).last();
    return row && toAdapter(row);
  }

  async adapter(runId: string, version: number): Promise<StoredAdapter | undefined> {
    const row = await this.db.adapters.get([runId, version]);
    return row && toAdapter(row);
  }

  /** Versions with a saved adapter, ascending. */
  async adapterVersions(runId: string): Promise<number[]> {
    const [lo, hi] = runRange(runId);
    const keys = await this.db.adapters.where('[runId+version]').between(lo, hi, true, true).primaryKeys();
    return keys.map((k) => k[1]);
  }

  // ---- resume ----

  /** Where an interrupted run continues; see resume.ts for the rules. */
  async resumePoint(runId: string): Promise<ResumePoint> {
    await this.requireRun(runId);
    const [steps, boundaries, versions, samples] = await Promise.all([
      this.records(runId, { kind: 'train_step' }),
      this.records(runId, { kind: 'version_boundary' }),
      this.adapterVersions(runId),
      this.records(runId, { kind: 'sample' }),
    ]);
    const point = findResumeStep(steps, boundaries, new Set(versions));
    const pending = samples.slice(point.consumedSamples);
    const interactions = await this.mainInteractions(runId, new Set(pending.map((s) => s.record.session)));
    return {
      lastStep: point.lastStep,
      nextStep: point.lastStep === null ? 0 : point.lastStep + 1,
      version: point.version,
      adapter: point.version === 0 ? null : ((await this.adapter(runId, point.version)) ?? null),
      throughSeq: point.throughSeq,
      buffered: pending.map((sample) => ({
        sample,
        interaction: interactions.get(`${sample.record.session}#${sample.record.turn}`) ?? null,
      })),
    };
  }

  private async mainInteractions(runId: string, sessions: Set<string>) {
    const byTurn = new Map<string, StoredRecord<InteractionRecord>>();
    for (const session of sessions) {
      for (const r of await this.records(runId, { session })) {
        if (r.record.kind === 'interaction' && r.record.turnType === 'main') {
          byTurn.set(`${session}#${r.record.turn}`, r as StoredRecord<InteractionRecord>);
        }
      }
    }
    return byTurn;
  }

  // ---- settings ----

  /** Settings never leave the browser: no export reads this table (endpoint API keys live here). */
  async getSetting<T = unknown>(key: string): Promise<T | undefined> {
    return (await this.db.settings.get(key))?.value as T | undefined;
  }

  async setSetting(key: string, value: unknown): Promise<void> {
    await this.writer.guardQuota(null, jsonBytes({ key, value }), () => this.db.settings.put({ key, value }));
  }

  async deleteSetting(key: string): Promise<void> {
    await this.db.settings.delete(key);
  }

  // ---- import ----

  /**
   * Starts writing an imported run. It stays invisible (listRuns, getRun) until commit, and
   * abort or a restart (markInterruptedOnStartup) removes it, so a failed import leaves
   * nothing behind.
   *
   * @throws StoredConfigError for an unusable config
   */
  async beginImport(meta: ImportedRunMeta): Promise<ImportWriter> {
    const row: RunRow = {
      id: this.newId(),
      config: parseStoredConfig(meta.config),
      status: meta.writable ? 'stopped' : 'imported',
      created: meta.created,
      updated: this.now(),
      label: meta.label,
      notes: meta.notes,
      readOnly: !meta.writable,
      bytes: 0,
      importing: true,
      ...(meta.integrity ? { integrity: meta.integrity } : {}),
    };
    // Held until commit or abort, so another tab's startup does not take it for abandoned.
    const release = (await tryHold(this.lockName('import', row.id))) ?? (() => {});
    try {
      await this.writer.guardQuota(null, jsonBytes(row), () => this.db.runs.add(row));
    } catch (e) {
      release();
      throw e;
    }
    const runId = row.id;
    return {
      runId,
      append: (records) => this.writer.records(runId, records, 'import'),
      saveAdapter: (version, files) => this.writer.adapter(runId, version, files, 'import'),
      commit: async () => {
        // Strict: an import the page reported done must not come back from a crash half-made,
        // which the next startup would remove as abandoned.
        await this.durable.runs
          .where(':id')
          .equals(runId)
          .modify((r) => {
            delete r.importing;
            r.updated = this.now();
          });
        release();
      },
      abort: async () => {
        try {
          await this.deleteRun(runId);
        } finally {
          release();
        }
      },
    };
  }

  // ---- watched server runs ----

  /**
   * Starts keeping a `nextstate serve` run watched from the lab: a visible, read-only run (status
   * 'imported') that only appendWatched adds to, in the server's record order.
   *
   * @throws StoredConfigError for a config the run file format could not carry
   */
  async createWatchedRun(meta: WatchedRunMeta): Promise<string> {
    const row: RunRow = {
      id: this.newId(),
      config: parseStoredConfig(meta.config),
      status: 'imported',
      created: meta.source.created,
      updated: this.now(),
      label: meta.label,
      notes: '',
      readOnly: true,
      bytes: 0,
      watch: { server: meta.source.server, created: meta.source.created },
    };
    await this.writer.guardQuota(null, jsonBytes(row), () => this.durable.runs.add(row));
    return row.id;
  }

  /** The run kept last from the server at `server` (its root), if any. */
  async latestWatched(server: string): Promise<RunInfo | undefined> {
    const rows = await this.db.runs.filter((r) => r.watch?.server === server && !r.importing).toArray();
    const row = rows.sort((a, b) => b.updated - a.updated)[0];
    return row && toInfo(row);
  }

  /**
   * Appends a server's records `from`, `from + 1`, … to its watched run, all or none, so that a
   * run's seq is the server's record number.
   *
   * @throws InvalidRunDataError when `from` is not the next seq (records would be skipped or repeated)
   * @throws StorageFullError, RunNotFoundError (the run was deleted)
   */
  appendWatched(runId: string, from: number, records: readonly RunRecord[]): Promise<number[]> {
    return this.writer.records(runId, records, 'watch', from);
  }

  // ---- internals ----

  /** Scoped by database name, so test databases and the app's never share locks. */
  private lockName(kind: 'run' | 'import', id: string): string {
    return `nextstate:${this.db.name}:${kind}:${id}`;
  }

  private checkStatus(status: RunStatus): void {
    if (!RUN_STATUSES.includes(status)) {
      throw new InvalidRunDataError(`run status must be one of ${RUN_STATUSES.join(', ')}; got ${JSON.stringify(status)}`);
    }
  }

  private async requireRun(runId: string, db: NextStateDB = this.db): Promise<RunRow> {
    const row = await db.runs.get(runId);
    if (!row || row.importing) throw new RunNotFoundError(runId);
    return row;
  }

  /** `readOnlyAction` names what a read-only run refuses; omitted for label and notes. */
  private async updateRun(runId: string, change: Partial<RunRow>, readOnlyAction?: string): Promise<void> {
    const db = this.durable;
    await this.writer.guardQuota(runId, jsonBytes(change), () =>
      db.transaction('rw', db.runs, async () => {
        const run = await this.requireRun(runId, db);
        if (readOnlyAction && run.readOnly) throw new ReadOnlyRunError(runId, readOnlyAction, Boolean(run.watch));
        await db.runs.update(runId, { ...change, updated: this.now() });
      }),
    );
  }
}
