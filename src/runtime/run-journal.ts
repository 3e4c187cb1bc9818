/**
 * Where `nextstate serve` and `nextstate run` keep a run as it goes, so that nothing committed is
 * lost to a crash (kill -9 included) and the run file can be read while the run goes on:
 *
 * - RUN.nsrun.journal: JSON lines, the config first, then every record. Each commit is appended
 *   and flushed to disk (fdatasync) before the run loop goes on, so before any reply goes out.
 * - RUN.nsrun.checkpoints/vN/: the PEFT adapter of version N, written before the step that made
 *   it is journaled, so every logged step can be rebuilt (storage/resume.ts's contract). A run
 *   without an adapter of its own (full fine-tuning, a policy on a server) has none.
 * - RUN.nsrun: an ordinary run file (inspect, export and the lab read it), rewritten whole by a
 *   rename after each training step, every few seconds while records arrive, and at the end.
 *   A .nsrun's header holds a summary and hashes of the whole body, so it cannot be appended to.
 */
import { existsSync, fsyncSync, lstatSync, mkdirSync, openSync, closeSync, readdirSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { readModelFile } from '../models/source-node';
import { FILE_LIMITS, readLocalChunks } from '../models/local-file';
import { byteLines } from './byte-lines';
import { MAX_LINE_DEPTH, nestsDeeperThan } from '../base/json-scan';
import { diskError, writeAll } from './disk-full';
import { open, type FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { PEFT_CONFIG, PEFT_WEIGHTS, type PeftFiles } from '../gpu/peft';
import type { InteractionRecord, RunRecord, SampleRecord, TrainStepRecord, VersionBoundaryRecord } from '../rl/records';
import { validateRecord } from '../rl/validate';
import type { RecordSink } from './loop-types';
import type { AnyRunConfig } from './run-config';
import { parseAnyRunConfig } from './run-config';
import { DEFAULT_MAX_LINE_CHARS, memorySource, runFileStream, type ResumePoint, type StoredAdapter } from '../storage/index';
import { findResumeStep } from '../storage/resume';
import { stripSecrets } from '../storage/secrets';
import { processAlive, readLiveStatus, removeLiveStatus, statusPath, writeLiveStatus, type LiveStatus } from './run-status';

const lstatOrNull = (path: string) => {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
};

/** The run's files exist (or do not) in a way the command line must settle. */
export class RunJournalError extends Error {
  override name = 'RunJournalError';
}

/** What a finished or stopped run file says of the run. */
export type RunFileStatus = 'running' | 'stopped' | 'finished';

/** How often the run file is rewritten at most while records arrive, before a slow rewrite stretches it. */
const SNAPSHOT_EVERY_MS = 5_000;
/** A rewrite that takes t waits at least this many times t before the next, so it never takes over. */
const SNAPSHOT_SLOWDOWN = 10;

export interface JournalHeader {
  config: AnyRunConfig;
  label: string;
  created: number;
}

export const journalPath = (file: string) => `${file}.journal`;
export const checkpointsPath = (file: string) => `${file}.checkpoints`;
/** A homework workspace's files, one folder per homework (the teacher scenario). */
export const workspacePath = (file: string) => `${file.replace(/\.nsrun$/, '')}.workspace`;
/** A full fine-tuning run's trained model, as a Hugging Face folder. */
export const modelPath = (file: string) => `${file.replace(/\.nsrun$/, '')}.model`;
/** Every file and folder a run at `file` writes beside it. */
const runPaths = (file: string) => [file, journalPath(file), checkpointsPath(file), workspacePath(file), modelPath(file), statusPath(file)];

/** What a journal held: its header and every complete record, in order. */
export interface Journal {
  header: JournalHeader;
  records: RunRecord[];
  /** Bytes of the header line, its newline included. */
  headerBytes: number;
  /** Bytes of complete lines: a last line cut short by a crash was never committed, and is cut off. */
  validBytes: number;
}

/**
 * The longest journal line read, in bytes: a run file line's limit in characters, at the most
 * bytes a character takes in UTF-8. Longer than any record the run file could hold; it bounds the
 * memory of a line before it is decoded and held to that limit in characters.
 */
const MAX_JOURNAL_LINE_BYTES = 4 * DEFAULT_MAX_LINE_CHARS;

/**
 * Reads a journal back, dropping a last line without its newline (a write the crash interrupted:
 * its commit never returned). Line by line, so memory holds the records and one line, never the
 * whole file.
 *
 * @throws RunJournalError when a complete line is not a valid record
 */
export function readJournal(path: string): Journal {
  return parseJournal(readLocalChunks(path, FILE_LIMITS.journal), path);
}

/** readJournal over any bytes (`name` is the journal's path, for messages). */
export function parseJournal(chunks: Iterable<Uint8Array>, name: string): Journal {
  const damaged = (line: number, problem: string) =>
    new RunJournalError(`${name} line ${line} ${problem}; the journal is damaged, so it cannot resume. Start a new --out.`);
  const tooLong = (line: number) => damaged(line, `is longer than ${MAX_JOURNAL_LINE_BYTES.toLocaleString('en-US')} bytes, more than any record`);
  let header: JournalHeader | undefined;
  let headerBytes = 0;
  let validBytes = 0;
  const records: RunRecord[] = [];
  for (const { line, text, end } of byteLines(chunks, MAX_JOURNAL_LINE_BYTES, tooLong)) {
    // The run file is written from these lines: one its reader refuses would leave it unreadable for
    // good, and JSON.parse of deep nesting costs far more than the line's length.
    if (text.length > DEFAULT_MAX_LINE_CHARS)
      throw damaged(line, `is longer than ${DEFAULT_MAX_LINE_CHARS.toLocaleString('en-US')} characters, the most a run file line may hold`);
    if (nestsDeeperThan(text, MAX_LINE_DEPTH)) throw damaged(line, `nests deeper than ${MAX_LINE_DEPTH} levels, the most a run file line may`);
    validBytes = end;
    if (line === 1) {
      try {
        header = JSON.parse(text) as JournalHeader;
      } catch (e) {
        throw new RunJournalError(`${name} line 1 is not JSON (${(e as Error).message}); it is not a nextstate run journal.`);
      }
      headerBytes = end;
      continue;
    }
    try {
      records.push(validateRecord(JSON.parse(text), `${name} line ${line}`));
    } catch (e) {
      throw new RunJournalError(`${(e as Error).message.split('\n')[0]}; the journal is damaged, so it cannot resume. Start a new --out.`);
    }
  }
  if (!header) throw new RunJournalError(`${name} has no header line; it is not a nextstate run journal. Choose another --out.`);
  return { header, records, headerBytes, validBytes };
}

/** The adapters checkpointed so far, by version. */
export function checkpointVersions(file: string): number[] {
  const dir = checkpointsPath(file);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => /^v(\d+)$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null && existsSync(join(dir, m[0], PEFT_WEIGHTS)))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

export function readCheckpoint(file: string, version: number): PeftFiles {
  const dir = join(checkpointsPath(file), `v${version}`);
  return { [PEFT_WEIGHTS]: readModelFile(dir, PEFT_WEIGHTS), [PEFT_CONFIG]: new TextDecoder().decode(readModelFile(dir, PEFT_CONFIG)) } as PeftFiles;
}

/** Where a journal resumes: storage's resume point over its records, with seq = line order. */
export function journalResumePoint(file: string, records: readonly RunRecord[]): ResumePoint {
  const seqOf = <R extends RunRecord>(kind: R['kind']) => records.flatMap((record, i) => (record.kind === kind ? [{ seq: i + 1, record: record as R }] : []));
  const point = findResumeStep(seqOf<TrainStepRecord>('train_step'), seqOf<VersionBoundaryRecord>('version_boundary'), new Set(checkpointVersions(file)));
  const samples = seqOf<SampleRecord>('sample').slice(point.consumedSamples);
  const interactions = new Map<string, { seq: number; record: InteractionRecord }>();
  records.forEach((r, i) => r.kind === 'interaction' && r.turnType === 'main' && interactions.set(`${r.session}#${r.turn}`, { seq: i + 1, record: r }));
  return {
    lastStep: point.lastStep,
    nextStep: point.lastStep === null ? 0 : point.lastStep + 1,
    version: point.version,
    adapter: point.version === 0 ? null : { version: point.version, ts: Date.now(), files: readCheckpoint(file, point.version) },
    throughSeq: point.throughSeq,
    buffered: samples.map((sample) => ({ sample, interaction: interactions.get(`${sample.record.session}#${sample.record.turn}`) ?? null })),
  };
}

/** The journal with a new header line and the same records, by a rename; copied a chunk at a time. */
function rewriteHeader(path: string, header: JournalHeader, journal: Journal): void {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, JSON.stringify(header) + '\n');
    let at = 0;
    for (const chunk of readLocalChunks(path, FILE_LIMITS.journal)) {
      // Only the records' complete lines: after the old header, before a cut-short tail.
      const from = Math.max(0, journal.headerBytes - at);
      const to = Math.min(chunk.length, journal.validBytes - at);
      if (to > from) writeSync(fd, chunk, from, to - from);
      at += chunk.length;
      if (at >= journal.validBytes) break;
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export interface RunJournalOptions {
  /**
   * The newest adapter; called when a step's version_boundary is about to be journaled. Absent:
   * the run has no adapter to checkpoint (full fine-tuning, a policy on a server).
   */
  exportAdapter?: () => Promise<PeftFiles>;
  /**
   * Rewrite RUN.nsrun before a step's commit resolves, so that once a step is reported the run
   * file holds it (a headless run). Otherwise the rewrite follows the commit (a server's
   * replies wait on commits, not on the run file).
   */
  snapshotEachStep?: boolean;
  now?: () => number;
}

/** The served run's record sink and its files (see the module comment). */
export class RunJournal implements RecordSink {
  private readonly records: RunRecord[];
  private chain: Promise<void> = Promise.resolve();
  private adapter: StoredAdapter | undefined;
  private dirty = false;
  private lastSnapshot = 0;
  private snapshotGap = SNAPSHOT_EVERY_MS;
  private snapshotTimer: ReturnType<typeof setTimeout> | null = null;
  private writing: Promise<void> | null = null;
  private status: RunFileStatus = 'running';
  private readonly now: () => number;
  private readonly listeners = new Set<(records: readonly RunRecord[], firstSeq: number) => void>();
  /** Why the run's files cannot be written (a full disk); every later commit fails with it. */
  private failure: unknown = null;

  private constructor(
    readonly file: string,
    readonly header: JournalHeader,
    private readonly journal: FileHandle,
    /** Bytes of the journal's complete lines: where a failed write is cut back to. */
    private size: number,
    records: RunRecord[],
    private readonly options: RunJournalOptions,
  ) {
    this.records = records;
    this.now = options.now ?? Date.now;
    const versions = checkpointVersions(file);
    const last = versions.at(-1);
    if (last !== undefined) this.adapter = { version: last, ts: this.now(), files: readCheckpoint(file, last) };
    this.live(null);
  }

  private live(training: LiveStatus['training']): void {
    writeLiveStatus(this.file, { pid: process.pid, updated: this.now(), training });
  }

  /** Before a step: the status says it runs, and the run file holds every record committed so far. */
  async stepStarting(step: { step: number; samples: number; at: number }): Promise<void> {
    await this.chain;
    this.live({ step: step.step, samples: step.samples, since: step.at });
    await this.snapshot();
  }

  /**
   * Removes every file of the run at `file` (its run file, journal, checkpoints, workspace and
   * trained model), to run it again from the start.
   *
   * @throws RunJournalError when the run file or its journal is not a regular file (a folder named
   *   like one is never removed)
   */
  static remove(file: string): void {
    RunJournal.checkReplaceable(file);
    for (const p of runPaths(file)) rmSync(p, { recursive: true, force: true });
  }

  /**
   * What `remove` checks, to ask before a policy loads: a folder or a device named like a run
   * file or its journal is never removed.
   *
   * @throws RunJournalError when `file` or its journal is there and not a file
   */
  static checkReplaceable(file: string): void {
    for (const p of [file, journalPath(file)]) {
      const info = lstatOrNull(p);
      if (info && !info.isFile() && !info.isSymbolicLink()) throw new RunJournalError(`${p} is not a run's file; name another --out`);
    }
  }

  /** @throws RunJournalError when a run already has files at `file` */
  static checkNew(file: string): void {
    for (const p of [file, journalPath(file), checkpointsPath(file)]) {
      if (existsSync(p)) throw new RunJournalError(`${p} already exists; pass --resume to continue that run, --force to replace it, or choose another --out`);
    }
  }

  /**
   * A new run's files.
   *
   * @throws RunJournalError when the run file or its journal already exists
   */
  static async create(file: string, config: AnyRunConfig, label: string, options: RunJournalOptions): Promise<RunJournal> {
    RunJournal.checkNew(file);
    const header: JournalHeader = { config: stripSecrets(config), label, created: (options.now ?? Date.now)() };
    const handle = await open(journalPath(file), 'wx');
    const line = Buffer.from(JSON.stringify(header) + '\n');
    try {
      await writeAll(handle, line);
      await handle.datasync();
    } catch (e) {
      await handle.close();
      // A journal without its whole header line is no run's: nothing to resume.
      rmSync(journalPath(file), { force: true });
      throw diskError(e, journalPath(file));
    }
    return new RunJournal(file, header, handle, line.length, [], options);
  }

  /**
   * The run a journal holds, to append to: its records and header. A last line cut short is cut off.
   * `edit` may change the config it goes on with (more steps): the journal's header is then
   * rewritten (a whole new journal, renamed over the old), so a later resume sees the change.
   *
   * @throws RunJournalError when there is no journal, or it is damaged
   */
  static async resume(
    file: string,
    options: RunJournalOptions,
    edit?: (config: AnyRunConfig, records: readonly RunRecord[]) => AnyRunConfig,
  ): Promise<{ run: RunJournal; config: AnyRunConfig }> {
    const path = journalPath(file);
    if (!existsSync(path)) throw new RunJournalError(`${path} not found; --resume continues a run that nextstate run or serve wrote to ${file}`);
    // Two processes appending to one journal interleave their records and race on the run file's
    // rename: a run that another live process holds is never resumed under it.
    const live = readLiveStatus(file);
    if (live && live.pid !== process.pid && processAlive(live.pid))
      throw new RunJournalError(
        `${file} is being run by process ${live.pid}; wait for it to end or stop it, then resume (if ${live.pid} is not nextstate, delete ${statusPath(file)})`,
      );
    const journal = readJournal(path);
    const parsed = parseAnyRunConfig(journal.header.config);
    const config = edit ? edit(structuredClone(parsed), journal.records) : parsed;
    let header = journal.header;
    if (edit && JSON.stringify(config) !== JSON.stringify(parsed)) {
      header = { ...header, config: stripSecrets(config) };
      rewriteHeader(path, header, journal);
    } else {
      const handle = await open(path, 'r+');
      await handle.truncate(journal.validBytes);
      await handle.close();
    }
    const appending = await open(path, 'a');
    const size = (await appending.stat()).size;
    return { run: new RunJournal(file, header, appending, size, journal.records, options), config };
  }

  get all(): readonly RunRecord[] {
    return this.records;
  }

  /**
   * Calls `listener` with the records from seq `fromSeq` on (1-based, the journal's order) that are
   * committed already, then with each commit as it lands. Returns the unsubscribe function.
   */
  follow(fromSeq: number, listener: (records: readonly RunRecord[], firstSeq: number) => void): () => void {
    const start = Math.max(1, fromSeq);
    if (start <= this.records.length) listener(this.records.slice(start - 1), start);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Journals the records (and checkpoints a new version first); resolves once they are on disk. */
  append(records: RunRecord[]): Promise<void> {
    const done = this.chain.then(async () => {
      const boundary = records.find((r): r is VersionBoundaryRecord => r.kind === 'version_boundary');
      if (boundary && this.options.exportAdapter) await this.checkpoint(boundary.to, this.options.exportAdapter);
      if (this.failure) throw this.failure;
      const bytes = Buffer.from(records.map((r) => JSON.stringify(r) + '\n').join(''));
      try {
        await writeAll(this.journal, bytes);
        await this.journal.datasync();
      } catch (e) {
        // A line cut short would sit before the next commit's lines and damage the journal.
        await this.journal.truncate(this.size).catch(() => {});
        throw this.fail(diskError(e, journalPath(this.file)));
      }
      this.size += bytes.length;
      const from = this.records.length + 1;
      this.records.push(...records);
      for (const listener of this.listeners) listener(records, from);
      this.dirty = true;
      if (boundary) this.live(null);
      if (boundary && this.options.snapshotEachStep) await this.snapshot();
      else this.scheduleSnapshot(boundary !== undefined);
    });
    // A failed write fails this commit (and the run); later ones still queue behind it.
    this.chain = done.catch(() => {});
    return done;
  }

  private async checkpoint(version: number, exportAdapter: () => Promise<PeftFiles>): Promise<void> {
    const files = await exportAdapter();
    const dir = join(checkpointsPath(this.file), `v${version}`);
    const tmp = `${dir}.tmp`;
    try {
      rmSync(tmp, { recursive: true, force: true });
      mkdirSync(tmp, { recursive: true });
      writeFileSync(join(tmp, PEFT_WEIGHTS), files[PEFT_WEIGHTS]);
      writeFileSync(join(tmp, PEFT_CONFIG), files[PEFT_CONFIG]);
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      throw this.fail(diskError(e, dir, `${basename(checkpointsPath(this.file))}/v${version}`));
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    this.adapter = { version, ts: this.now(), files };
  }

  /** Keeps the first failure, which every later commit fails with; returns it, to throw. */
  private fail(e: unknown): unknown {
    this.failure ??= e;
    return e;
  }

  private scheduleSnapshot(now: boolean): void {
    if (this.snapshotTimer) {
      if (!now) return;
      clearTimeout(this.snapshotTimer);
    }
    const wait = now ? 0 : Math.max(0, this.lastSnapshot + this.snapshotGap - this.now());
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = null;
      // A failure is kept (fail) and fails the next commit, and so the run.
      this.snapshot().catch(() => {});
    }, wait);
    this.snapshotTimer.unref?.();
  }

  /** Rewrites RUN.nsrun from the records so far (one rewrite at a time; a rename makes it whole). */
  async snapshot(): Promise<void> {
    while (this.writing) await this.writing;
    if (!this.dirty && existsSync(this.file)) return;
    this.dirty = false;
    const started = this.now();
    this.writing = this.write(this.records.slice()).finally(() => (this.writing = null));
    await this.writing;
    this.lastSnapshot = this.now();
    this.snapshotGap = Math.max(SNAPSHOT_EVERY_MS, SNAPSHOT_SLOWDOWN * (this.lastSnapshot - started));
  }

  private async write(records: RunRecord[]): Promise<void> {
    const source = memorySource(
      { config: this.header.config, label: this.header.label, notes: '', created: this.header.created, status: this.status },
      records,
      this.adapter,
    );
    const tmp = `${this.file}.tmp`;
    const handle = await open(tmp, 'w');
    try {
      const reader = runFileStream(source, { includeAdapter: this.adapter !== undefined }).getReader();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) await writeAll(handle, chunk.value);
    } catch (e) {
      await handle.close();
      rmSync(tmp, { force: true });
      throw this.fail(diskError(e, this.file));
    }
    await handle.close();
    renameSync(tmp, this.file);
  }

  /**
   * After the loop stopped: the journal's last writes, then the final run file, with `adapter`
   * when given (the policy as it ended) instead of the last checkpoint.
   */
  async close(end: { status?: 'stopped' | 'finished'; adapter?: StoredAdapter } = {}): Promise<void> {
    await this.chain;
    if (this.snapshotTimer) clearTimeout(this.snapshotTimer);
    this.snapshotTimer = null;
    this.status = end.status ?? 'stopped';
    if (end.adapter) this.adapter = end.adapter;
    this.dirty = true;
    try {
      // A rewrite under way ends first, so its temp file is gone or renamed when this returns.
      while (this.writing) await this.writing.catch(() => {});
      // After a failed write the disk is full: the journal holds every commit, and --resume goes on from it.
      if (!this.failure) await this.snapshot();
    } finally {
      await this.journal.close();
      // The run file's status says how it ended.
      removeLiveStatus(this.file);
    }
  }
}
