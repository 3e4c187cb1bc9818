/**
 * The `.nsrun` run file: gzip of JSON lines. Line 1 is the header (format, versions, the run's
 * config without secrets, models, seeds, summary, integrity hashes); then one record per line in
 * seq order; optionally a last line `{"adapter": {version, config, safetensorsBase64}}` holding
 * the final PEFT adapter. JSON lines keep the file greppable after `gunzip` and let readers
 * stream it.
 *
 * This module has no DOM or database dependency beyond the RunStore it reads from, so the CLI
 * and the headless runner use it in Node.
 */
import { version as packageVersion } from '../../package.json';
import { PEFT_CONFIG, PEFT_WEIGHTS } from '../gpu/peft';
import type { RunRecord } from '../rl';
import { checker, FieldError, int, nullable, object, oneOf, runChecker, str, timestamp, type Infer } from '../base/check';
import { Sha256 } from '../gpu/sha256';
import { encodeBase64 } from './base64';
import { modelsChecker, parseStoredConfig, seedsChecker, sha256Field, StoredConfigError, type StorableConfig, type StoredConfig } from './stored-config';
import { RUN_STATUSES, type IntegrityStatus } from './db';
import { RunFileError, RunNotFoundError } from './errors';
import { stripSecrets } from './secrets';
import type { RunStore } from './store';
import type { RunInfo, StoredAdapter, StoredRecord } from './store-types';
import { Summarizer, summaryChecker } from './summary';

export const RUN_FILE_FORMAT = 'nextstate-run';
/** Bump when a reader of the previous version would misread the file. */
export const RUN_FILE_VERSION = 1;
export const RUN_FILE_EXTENSION = '.nsrun';
export const APP_VERSION: string = packageVersion;

/**
 * Line 1 of a run file: headerChecker's fields, with `format` and `formatVersion`, which
 * parseHeader reads first (a file of another format or a newer version gets its own message),
 * and `integrity` null where the file has none.
 */
export type RunFileHeader = { format: typeof RUN_FILE_FORMAT; formatVersion: number } & Omit<Infer<typeof headerChecker>, 'integrity'> & {
    integrity: RunFileIntegrity | null;
  };

/**
 * SHA-256 hashes that let a reader tell a damaged file from an intact one. They detect damage
 * (a bad disk, a broken copy, a careless edit), not forgery: whoever edits a file can hash it
 * again. `header` covers the header line as JSON.stringify writes its parsed value, without
 * this field; `body` covers every line after the header as written, each with its newline.
 */
export type RunFileIntegrity = Infer<typeof integrityChecker>;

export type { IntegrityStatus };

/** The hash `integrity.header` holds for a header line's parsed value. */
export function headerDigest(header: object): string {
  const { integrity: _integrity, ...rest } = header as Record<string, unknown>;
  return new Sha256().updateText(JSON.stringify(rest)).hex();
}

/** The last line's payload. */
export interface RunFileAdapter {
  version: number;
  /** adapter_config.json as written by PEFT. */
  config: string;
  safetensorsBase64: string;
}

// ---- reading the header ----

const count = int();
/** A run file's config, read as the lab reads a stored one; its problems are named under `path`. */
const storedConfig = checker<StoredConfig>({ type: 'object' }, (value, path) => {
  try {
    return parseStoredConfig(value);
  } catch (e) {
    if (e instanceof StoredConfigError) throw new FieldError(`${path}.${e.field}`, e.problem);
    throw e;
  }
});

const integrityChecker = object({ algorithm: oneOf('sha-256'), header: sha256Field, body: sha256Field });

const headerChecker = object(
  {
    appVersion: str(64, 1),
    /** When the file was written (ms since the epoch). */
    exported: timestamp,
    run: object({
      config: storedConfig,
      label: str(10_000),
      notes: str(1_000_000),
      created: timestamp,
      status: oneOf(...RUN_STATUSES),
    }),
    /** Copied from the config for readers that only want to know what to download. */
    models: modelsChecker,
    seeds: seedsChecker,
    summary: summaryChecker,
    /** The adapter line at the end of the file, if any. */
    adapter: nullable(object({ version: count, bytes: count })),
  },
  {
    /** Absent (null) in files written before Next-State Lab hashed them: those are unverified. */
    integrity: nullable(integrityChecker),
  },
);

const HEADER_FIELDS = ['appVersion', 'exported', 'run', 'models', 'seeds', 'summary', 'adapter', 'integrity'];

/**
 * Checks line 1 of a run file. Unknown top-level fields are ignored, so a later app can add
 * informational fields without a format bump; anything that changes meaning bumps
 * formatVersion and is refused here.
 *
 * @throws RunFileError naming the field
 */
export function parseHeader(value: unknown): RunFileHeader {
  const obj = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  if (!obj || obj.format !== RUN_FILE_FORMAT) {
    throw new RunFileError(
      `This is not a Next-State Lab run file: its first line has no "format": "${RUN_FILE_FORMAT}". Choose a ${RUN_FILE_EXTENSION} file exported from the lab.`,
      1,
      'format',
    );
  }
  const v = obj.formatVersion;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw new RunFileError(
      `Run file header field "formatVersion" must be a positive integer, got ${JSON.stringify(v)}. The file is damaged.`,
      1,
      'formatVersion',
    );
  }
  if (v > RUN_FILE_VERSION) {
    throw new RunFileError(
      `This run file was made by a newer Next-State Lab (run file format ${v}${madeBy(obj.appVersion)}); ` +
        `this app (${APP_VERSION}) reads format ${RUN_FILE_VERSION}. Update Next-State Lab to open it.`,
      1,
      'formatVersion',
    );
  }
  const known = Object.fromEntries(HEADER_FIELDS.filter((k) => Object.hasOwn(obj, k)).map((k) => [k, obj[k]]));
  const rest = runChecker(headerChecker, known, (e) => headerError(e.path, e.problem));
  return { format: RUN_FILE_FORMAT, formatVersion: v, ...rest, integrity: rest.integrity ?? null };
}

/** ", app 1.2.3" when the file names a plausible app version (it is untrusted text). */
function madeBy(appVersion: unknown): string {
  return typeof appVersion === 'string' && /^[\w.+-]{1,32}$/.test(appVersion) ? `, app ${appVersion}` : '';
}

function headerError(field: string, problem: string): RunFileError {
  return new RunFileError(`Run file line 1 (header): field "${field}" ${problem}. The file is damaged or was edited; export it again.`, 1, field);
}

// ---- writing ----

export interface ExportOptions {
  /** Append the run's latest adapter as the last line (default false). */
  includeAdapter?: boolean;
  /** Written into the header (default: this app's version). */
  appVersion?: string;
  /** Records read from the database per transaction (default 500). */
  pageSize?: number;
  now?: () => number;
}

/** What a run file is written from: a run in the database, or a headless run held in memory. */
export interface RunFileSource {
  run(): Promise<Pick<RunInfo, 'config' | 'label' | 'notes' | 'created' | 'status'>>;
  lastSeq(): Promise<number>;
  /** Records with fromSeq <= seq <= toSeq, at most `limit`, in seq order. */
  records(fromSeq: number, toSeq: number, limit: number): Promise<StoredRecord[]>;
  latestAdapter(): Promise<StoredAdapter | undefined>;
}

export function storeSource(store: RunStore, runId: string): RunFileSource {
  return {
    run: async () => {
      const run = await store.getRun(runId);
      if (!run) throw new RunNotFoundError(runId);
      return run;
    },
    lastSeq: () => store.lastSeq(runId),
    records: (fromSeq, toSeq, limit) => store.records(runId, { fromSeq, toSeq, limit }),
    latestAdapter: () => store.latestAdapter(runId),
  };
}

/** A run held in memory (the CLI's headless runs): records get seq 1, 2, ... in order. */
export function memorySource(
  run: Pick<RunInfo, 'label' | 'notes' | 'created' | 'status'> & { config: StorableConfig },
  records: readonly RunRecord[],
  adapter?: StoredAdapter,
): RunFileSource {
  return {
    run: async () => ({ ...run, config: parseStoredConfig(run.config) }),
    lastSeq: async () => records.length,
    records: async (fromSeq, toSeq, limit) =>
      records.slice(fromSeq - 1, Math.min(toSeq, fromSeq - 1 + limit)).map((record, i) => ({ seq: fromSeq + i, record })),
    latestAdapter: async () => adapter,
  };
}

/** The run's records up to `lastSeq`, a page at a time, so memory stays flat for long runs. */
async function* pages(source: RunFileSource, lastSeq: number, pageSize: number): AsyncGenerator<StoredRecord[]> {
  for (let from = 1; from <= lastSeq;) {
    const page = await source.records(from, lastSeq, pageSize);
    if (page.length === 0) return;
    yield page;
    from = page[page.length - 1].seq + 1;
  }
}

export function adapterLine(adapter: StoredAdapter): string {
  const payload: RunFileAdapter = {
    version: adapter.version,
    config: adapter.files[PEFT_CONFIG],
    safetensorsBase64: encodeBase64(adapter.files[PEFT_WEIGHTS]),
  };
  return JSON.stringify({ adapter: payload });
}

/**
 * The file's lines. The summary and the body's hash need every record before the header is
 * written, so the log is read twice; both passes stop at the seq the export started at, so a
 * run that keeps appending exports a consistent snapshot, and records never change once
 * stored, so the second pass writes exactly the lines the first one hashed.
 */
async function* runFileLines(source: RunFileSource, options: ExportOptions): AsyncGenerator<string> {
  const run = await source.run();
  const pageSize = options.pageSize ?? 500;
  const lastSeq = await source.lastSeq();
  const summarizer = new Summarizer();
  const body = new Sha256();
  for await (const page of pages(source, lastSeq, pageSize)) {
    for (const r of page) {
      summarizer.add(r.record);
      body.updateText(recordLine(r.record));
    }
  }
  const adapter = options.includeAdapter ? await source.latestAdapter() : undefined;
  const last = adapter ? adapterLine(adapter) + '\n' : null;
  if (last) body.updateText(last);
  // Local model folders go out by name: their paths describe this machine, not the run.
  const config = stripSecrets(run.config, { localPaths: 'name' });
  const header: RunFileHeader = {
    format: RUN_FILE_FORMAT,
    formatVersion: RUN_FILE_VERSION,
    appVersion: options.appVersion ?? APP_VERSION,
    exported: (options.now ?? Date.now)(),
    run: { config, label: run.label, notes: run.notes, created: run.created, status: run.status },
    models: config.modelRefs ?? {},
    seeds: config.seeds ?? {},
    summary: summarizer.result(),
    adapter: adapter ? { version: adapter.version, bytes: adapter.files[PEFT_WEIGHTS].byteLength } : null,
    integrity: null,
  };
  header.integrity = { algorithm: 'sha-256', header: headerDigest(header), body: body.hex() };
  yield JSON.stringify(header) + '\n';
  for await (const page of pages(source, lastSeq, pageSize)) {
    yield page.map((r) => recordLine(r.record)).join('');
  }
  if (last) yield last;
}

function recordLine(record: RunRecord): string {
  return JSON.stringify(record) + '\n';
}

/** Text chunks -> gzip bytes, pulled on demand so a slow writer (a file) sets the pace. */
export function gzipText(chunks: AsyncIterator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  // Typed as BufferSource: what CompressionStream's writable side declares.
  const text = new ReadableStream<BufferSource>({
    async pull(controller) {
      const { value, done } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await chunks.return?.(undefined);
    },
  });
  return text.pipeThrough(new CompressionStream('gzip'));
}

/** The run file as a stream of gzip bytes (for the CLI writing to disk). */
export function exportRunStream(store: RunStore, runId: string, options: ExportOptions = {}): ReadableStream<Uint8Array> {
  return runFileStream(storeSource(store, runId), options);
}

/** The run file of any source as gzip bytes. */
export function runFileStream(source: RunFileSource, options: ExportOptions = {}): ReadableStream<Uint8Array> {
  return gzipText(runFileLines(source, options));
}

/** The run file as a Blob (for a download link in the page). */
export async function exportRun(store: RunStore, runId: string, options: ExportOptions = {}): Promise<Blob> {
  const parts: Uint8Array<ArrayBuffer>[] = [];
  const reader = exportRunStream(store, runId, options).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parts.push(value as Uint8Array<ArrayBuffer>);
  }
  return new Blob(parts, { type: 'application/gzip' });
}
