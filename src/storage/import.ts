/**
 * Run files in: import into the store (read-only, all or nothing), inspect, and extract the
 * adapter. Nothing from a file is trusted: see reader.ts and streams.ts for the checks.
 */
import { PEFT_WEIGHTS } from '../gpu/peft';
import type { RunRecord } from '../rl';
import { RunFileError } from './errors';
import { readRunFile, type FileAdapter, type ReadOptions } from './reader';
import type { IntegrityStatus, RunFileHeader } from './runfile';
import type { RunStore } from './store';
import type { ImportWriter } from './store-types';
import type { ByteInput } from './streams';
import type { RunSummary } from './summary';
import { SessionTally, type SessionCounts } from './session-tally';

export interface ImportOptions extends ReadOptions {
  /** Records per transaction (default 500). */
  batchRecords?: number;
  /** Also flush a batch once its lines reach this many characters (default 8,000,000). */
  batchChars?: number;
}

/**
 * Imports a run file as a new read-only run with status 'imported'. Records get new seqs
 * 1..N in file order; metrics are rebuilt from them. If anything fails (the file, or the
 * disk filling up) the partial run is removed before the error is rethrown.
 *
 * @returns the new run's id
 * @throws RunFileError, StorageFullError
 */
export async function importRun(store: RunStore, input: ByteInput, options: ImportOptions = {}): Promise<string> {
  const batchRecords = options.batchRecords ?? 500;
  const batchChars = options.batchChars ?? 8_000_000;
  let writer: ImportWriter | null = null;
  let batch: RunRecord[] = [];
  let chars = 0;
  const flush = async () => {
    if (batch.length) await writer!.append(batch);
    batch = [];
    chars = 0;
  };
  try {
    for await (const item of readRunFile(input, options)) {
      if (item.kind === 'header') {
        const { config, label, notes, created } = item.header.run;
        // A file whose hashes fail never commits, so a committed import with hashes is verified.
        const integrity = item.header.integrity ? 'verified' : 'unverified';
        writer = await store.beginImport({ config, label, notes, created, integrity });
      } else if (item.kind === 'record') {
        batch.push(item.record);
        chars += item.chars;
        if (batch.length >= batchRecords || chars >= batchChars) await flush();
      } else if (item.kind === 'adapter') {
        await flush();
        await writer!.saveAdapter(item.adapter.version, item.adapter.files);
      } else {
        await flush();
      }
    }
    await writer!.commit();
    return writer!.runId;
  } catch (e) {
    if (writer) await writer.abort().catch(() => {});
    throw e;
  }
}

export interface RunFileInfo {
  header: RunFileHeader;
  /** Counted from the records (null with headerOnly); the header's own copy is header.summary. */
  summary: RunSummary | null;
  adapter: { version: number; bytes: number } | null;
  /** Lines read, header included. */
  lines: number;
  /** Whether the file's hashes held, or it carries none; null with headerOnly (not checked). */
  integrity: IntegrityStatus | null;
  /** Sessions begun, ended and still open, counted from the records; null with headerOnly. */
  sessions: SessionCounts | null;
}

/**
 * What `nextstate inspect` prints. Reads and checks the whole file unless headerOnly.
 *
 * @throws RunFileError
 */
export async function inspectRunFile(input: ByteInput, options: ReadOptions & { headerOnly?: boolean } = {}): Promise<RunFileInfo> {
  let header: RunFileHeader | null = null;
  let adapter: RunFileInfo['adapter'] = null;
  const sessions = new SessionTally();
  for await (const item of readRunFile(input, options)) {
    if (item.kind === 'header') {
      header = item.header;
      if (options.headerOnly) return { header, summary: null, adapter: header.adapter, lines: 1, integrity: null, sessions: null };
    } else if (item.kind === 'record') {
      sessions.add(item.record);
    } else if (item.kind === 'adapter') {
      adapter = { version: item.adapter.version, bytes: item.adapter.files[PEFT_WEIGHTS].byteLength };
    } else if (item.kind === 'end') {
      return { header: header!, summary: item.summary, adapter, lines: item.lines, integrity: item.integrity, sessions: sessions.result() };
    }
  }
  // readRunFile ends with an 'end' item or throws.
  throw new Error('unreachable: run file reader stopped without an end item');
}

/**
 * The final adapter as PEFT files, for `nextstate export --peft`. The whole file is checked
 * first: the adapter of a damaged file is not handed out.
 *
 * @throws RunFileError when the file is damaged or holds no adapter
 */
export async function extractAdapter(input: ByteInput, options: ReadOptions = {}): Promise<FileAdapter> {
  let adapter: FileAdapter | null = null;
  for await (const item of readRunFile(input, options)) {
    if (item.kind === 'adapter') adapter = item.adapter;
  }
  if (!adapter) {
    throw new RunFileError('This run file holds no adapter. Export the run again with the adapter included.', null, 'adapter');
  }
  return adapter;
}
