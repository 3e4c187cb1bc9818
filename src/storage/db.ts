/**
 * The IndexedDB schema (Dexie) and its migrations. Every version ever shipped stays declared
 * here, so a browser holding any older database is upgraded in place on open; a version's
 * `upgrade` runs once, inside the version-change transaction, so it either completes or the
 * old database is left untouched.
 */
import Dexie, { type Table, type Transaction } from 'dexie';
import type { RunRecord } from '../rl';
import type { StoredConfig } from './stored-config';
import type { Metric } from './metrics';
import { utf8Length } from '../base/bytes';

export const DEFAULT_DB_NAME = 'nextstate';

export const RUN_STATUSES = ['running', 'paused', 'interrupted', 'stopped', 'finished', 'imported'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What an import could tell of a run file: its hashes held, or it carried none to check. */
export type IntegrityStatus = 'verified' | 'unverified';

export interface RunRow {
  id: string;
  config: StoredConfig;
  status: RunStatus;
  created: number;
  updated: number;
  label: string;
  notes: string;
  /** Imported runs: their log and adapters cannot change. */
  readOnly: boolean;
  /** Approximate bytes held by the run's records and adapters (since schema v2). */
  bytes: number;
  /** Present while an import is still writing; such a run is invisible and removed on startup. */
  importing?: true;
  /**
   * Imported runs: whether the file's integrity hashes held ('verified'), or the file carried
   * none (an older app wrote it) so damage to it could not be detected ('unverified').
   */
  integrity?: IntegrityStatus;
  /** Watched runs: the `nextstate serve` run they keep, which alone adds records to them. */
  watch?: WatchSource;
}

/** The server run a watched run keeps: the server's root and its run's start (its run file's `created`). */
export interface WatchSource {
  server: string;
  created: number;
}

/** A record as stored: the method library's record plus the run it belongs to and its seq. */
export type RecordRow = RunRecord & { runId: string; seq: number };

export interface MetricRow extends Metric {
  runId: string;
}

export interface AdapterRow {
  runId: string;
  version: number;
  /** adapter_model.safetensors */
  weights: Uint8Array;
  /** adapter_config.json */
  config: string;
  ts: number;
}

export interface SettingRow {
  key: string;
  value: unknown;
}

/**
 * Schema history. Indexes only; other fields need no declaration. Compound keys put `runId`
 * first so every query is a key range inside one run.
 */
export const SCHEMAS = {
  1: {
    runs: 'id, status, updated',
    records: '[runId+seq], [runId+kind], [runId+session], [runId+version], [runId+step]',
    metrics: '[runId+seq]',
    adapters: '[runId+version]',
    settings: 'key',
  },
  /**
   * v2: kind and session indexes end in seq, so "new records of this kind since seq N" (what
   * live charts and the feed poll for) is one key range instead of a scan of the kind; runs
   * gain `bytes`, so a full disk can name the largest runs without reading every record.
   */
  2: {
    records: '[runId+seq], [runId+kind+seq], [runId+session+seq], [runId+version], [runId+step]',
  },
} as const;

export const SCHEMA_VERSION = 2;

/** Bytes a record takes, as a run file would write it; close enough to rank runs by size. */
export function recordBytes(record: RunRecord): number {
  return utf8Length(JSON.stringify(record));
}

export function adapterBytes(row: Pick<AdapterRow, 'weights' | 'config'>): number {
  return row.weights.byteLength + utf8Length(row.config);
}

/** v1 -> v2: compute every run's `bytes` from what it holds. */
async function backfillRunBytes(tx: Transaction): Promise<void> {
  const totals = new Map<string, number>();
  const add = (runId: string, n: number) => totals.set(runId, (totals.get(runId) ?? 0) + n);
  await tx.table<RecordRow>('records').each((row) => {
    const { runId, seq: _seq, ...record } = row;
    add(runId, recordBytes(record as RunRecord));
  });
  await tx.table<AdapterRow>('adapters').each((row) => add(row.runId, adapterBytes(row)));
  await tx
    .table<RunRow>('runs')
    .toCollection()
    .modify((run) => {
      run.bytes = totals.get(run.id) ?? 0;
    });
}

export class NextStateDB extends Dexie {
  runs!: Table<RunRow, string>;
  records!: Table<RecordRow, [string, number]>;
  metrics!: Table<MetricRow, [string, number]>;
  adapters!: Table<AdapterRow, [string, number]>;
  settings!: Table<SettingRow, string>;

  constructor(name = DEFAULT_DB_NAME, options?: ConstructorParameters<typeof Dexie>[1]) {
    super(name, options);
    this.version(1).stores(SCHEMAS[1]);
    this.version(2).stores(SCHEMAS[2]).upgrade(backfillRunBytes);
  }
}

/** Key range bounds covering every key of one run in a [runId+...] index. */
export const runRange = (runId: string): [lower: unknown[], upper: unknown[]] => [
  [runId, Dexie.minKey],
  [runId, Dexie.maxKey],
];
