/** What the run store hands out and takes in: the shapes of its API, apart from the store itself. */
import type Dexie from 'dexie';
import type { PeftFiles } from '../gpu/peft';
import type { InteractionRecord, RecordKind, RunRecord, SampleRecord } from '../rl';
import type { IntegrityStatus, RunRow, WatchSource } from './db';
import type { StorageStatus } from './quota';

/** A run as the app lists it. */
export type RunInfo = Omit<RunRow, 'importing'>;

export interface StoredRecord<R extends RunRecord = RunRecord> {
  seq: number;
  record: R;
}

/** Filters for records(); all optional and combined with AND. Results are in seq order. */
export interface RecordQuery {
  kind?: RecordKind;
  session?: string;
  step?: number;
  version?: number;
  /** First seq to return (inclusive). */
  fromSeq?: number;
  /** Last seq to return (inclusive). */
  toSeq?: number;
  limit?: number;
}

export interface StoredAdapter {
  version: number;
  ts: number;
  files: PeftFiles;
}

/** A sample that entered the buffer and was not trained on, with the turn that produced it. */
export interface BufferedRecords {
  sample: StoredRecord<SampleRecord>;
  /** The main-turn interaction with the sample's session and turn; null if it is missing. */
  interaction: StoredRecord<InteractionRecord> | null;
}

export interface ResumePoint {
  /** The last completed train step, or null to start from the base model. */
  lastStep: number | null;
  /** The step number to use next. */
  nextStep: number;
  /** Policy version to serve after resuming. */
  version: number;
  /** The adapter of `version`; null for version 0 (the base model). */
  adapter: StoredAdapter | null;
  /** Records up to this seq are the resumed state; later ones were in flight and are dropped. */
  throughSeq: number;
  /** Samples to put back into the SampleBuffer, oldest first. */
  buffered: BufferedRecords[];
}

export interface StartupReport {
  /** Runs left 'running' by a closed tab, now 'interrupted'. */
  interrupted: string[];
  /** Runs left 'running' by a closed tab whose end is the tab's closing (talking to the policy), now 'stopped'. */
  ended: string[];
  /** Imports that never finished (tab closed mid-import), now removed. */
  discardedImports: string[];
}

export interface RunStoreOptions {
  /** Database name (tests use one per test). */
  name?: string;
  /** Passed to Dexie: `{ indexedDB, IDBKeyRange }` to use a non-global IndexedDB. */
  dexie?: ConstructorParameters<typeof Dexie>[1];
  now?: () => number;
  newId?: () => string;
  /** Where StorageFullError reads usage and quota from. */
  storageStatus?: () => Promise<StorageStatus>;
  /**
   * What the run's row, step records and checkpoints ask the browser for: 'strict' (the
   * default), or the browser's default like every other write ("relaxed" in Chromium), which
   * is there for the bench to measure what 'strict' costs.
   */
  durableWrites?: 'strict' | 'default';
}

/** Writes into an imported (read-only) run before it becomes visible; see RunStore.beginImport. */
export interface ImportWriter {
  readonly runId: string;
  append(records: readonly RunRecord[]): Promise<number[]>;
  saveAdapter(version: number, files: PeftFiles): Promise<void>;
  /** Makes the run visible. */
  commit(): Promise<void>;
  /** Removes everything written so far. */
  abort(): Promise<void>;
}

/** What an import knows about the run before its records. */
export interface ImportedRunMeta {
  config: unknown;
  label: string;
  notes: string;
  created: number;
  /** Known from the header: a file with hashes is refused before commit if they fail. */
  integrity?: IntegrityStatus;
  /**
   * A writable copy (status 'stopped', resumable) instead of a read-only import: what resuming
   * an imported run makes (copy.ts), so that the imported run stays as its file had it.
   */
  writable?: boolean;
}

/** What a watched server run is kept under: the server's `run` event. */
export interface WatchedRunMeta {
  config: unknown;
  label: string;
  source: WatchSource;
}
