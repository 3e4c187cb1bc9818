/**
 * Reads a run file as a stream of checked items: the header, every record (validated by the
 * method library's validateRecord), the adapter, and a final summary computed from what was
 * read, with whether the file's integrity hashes held. Shared by importRun, inspectRunFile and
 * extractAdapter, so all three refuse the same files with the same messages.
 */
import { PEFT_CONFIG, PEFT_WEIGHTS, type PeftFiles } from '../gpu/peft';
import { parseSafetensors } from '../models/safetensors';
import { Sha256 } from '../gpu/sha256';
import { RecordValidationError, validateRecord, type RunRecord } from '../rl';
import { decodeBase64 } from './base64';
import { RunFileError } from './errors';
import { JsonCursor, MAX_LINE_DEPTH, nestsDeeperThan, ShapeError } from '../base/json-scan';
import { headerDigest, parseHeader, type IntegrityStatus, type RunFileHeader } from './runfile';
import { gunzipText, lines, type ByteInput } from './streams';
import { Summarizer, type RunSummary } from './summary';

/** Default import limit, on the compressed and on the decompressed size. */
export const DEFAULT_MAX_BYTES = 200_000_000;
/** Default limit for one record line; the adapter line is bounded by the size its header promises. */
export const DEFAULT_MAX_LINE_CHARS = 4_000_000;
/** adapter_config.json is a few hundred bytes; anything near this (as written in the line, escapes included) is not one. */
const MAX_ADAPTER_CONFIG_CHARS = 1_000_000;
const ADAPTER_PREFIX = '{"adapter"';

export interface ReadOptions {
  /** Refuse files larger than this, compressed or decompressed (default 200 MB). */
  maxBytes?: number;
  /** Refuse any record line longer than this many characters (default 4,000,000). */
  maxLineChars?: number;
}

export interface FileAdapter {
  version: number;
  files: PeftFiles;
}

export type RunFileItem =
  | { kind: 'header'; line: 1; header: RunFileHeader }
  | { kind: 'record'; line: number; record: RunRecord; chars: number }
  | { kind: 'adapter'; line: number; adapter: FileAdapter }
  | { kind: 'end'; lines: number; summary: RunSummary; integrity: IntegrityStatus };

function parseJsonLine(text: string, line: number): unknown {
  if (text.length === 0) throw new RunFileError(`Run file line ${line} is empty; the file is damaged.`, line);
  // JSON.parse of deep nesting costs far more memory than the line's length.
  if (nestsDeeperThan(text, MAX_LINE_DEPTH)) {
    throw new RunFileError(`Run file line ${line} nests deeper than ${MAX_LINE_DEPTH} levels; the file is damaged or not a run file.`, line);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new RunFileError(`Run file line ${line} is not valid JSON (${e instanceof Error ? e.message : String(e)}); the file is damaged.`, line, null, {
      cause: e,
    });
  }
}

function checkRecord(value: unknown, line: number): RunRecord {
  try {
    return validateRecord(value, `run file line ${line}`);
  } catch (e) {
    if (!(e instanceof RecordValidationError)) throw e;
    throw new RunFileError(
      `Run file line ${line}: record field "${e.field}" ${e.problem}. The file is damaged or was edited; ` + 'export it again from the app that made it.',
      line,
      e.field,
      { cause: e },
    );
  }
}

/** Characters of base64 for `bytes` bytes. */
const base64Chars = (bytes: number) => Math.ceil(bytes / 3) * 4;
/** Room on the adapter line for its keys, the version and blanks between them. */
const ADAPTER_LINE_SLACK = 1_000;

/** The longest adapter line a header that promises `bytes` bytes of weights allows. */
export function adapterLineLimit(bytes: number): number {
  return base64Chars(bytes) + MAX_ADAPTER_CONFIG_CHARS + ADAPTER_LINE_SLACK;
}

const ADAPTER_FIELDS = ['version', 'config', 'safetensorsBase64'] as const;
const ADAPTER_PROBLEMS: Record<(typeof ADAPTER_FIELDS)[number], string> = {
  version: 'must be a non-negative integer',
  config: 'must be a JSON string of adapter_config.json',
  safetensorsBase64: 'must be a base64 string',
};

/**
 * Reads `{"adapter": {version, config, safetensorsBase64}}` field by field, never through
 * JSON.parse of the whole line: the line may be hundreds of megabytes, and each value is
 * checked against what the header promised before the next is read.
 */
function checkAdapter(text: string, line: number, promised: { version: number; bytes: number }): FileAdapter {
  const bad = (field: string, problem: string) =>
    new RunFileError(`Run file line ${line} (adapter): field "${field}" ${problem}. The adapter is damaged; export the run again.`, line, field);
  const cursor = new JsonCursor(text);
  const found: { version?: number; config?: string; safetensorsBase64?: string } = {};
  try {
    cursor.expect('{', '(line)', 'must hold only "adapter"');
    if (cursor.string('(line)', 'must hold only "adapter"', 16) !== 'adapter') throw new ShapeError('(line)', 'must hold only "adapter"');
    cursor.expect(':', '(line)', 'must hold only "adapter"');
    cursor.expect('{', 'adapter', 'must be a JSON object');
    if (!cursor.accept('}')) {
      do {
        const key = cursor.string('adapter', 'must be a JSON object', 64);
        const field = ADAPTER_FIELDS.find((f) => f === key);
        if (!field) throw new ShapeError(`adapter.${key}`, 'is not a known field');
        if (Object.hasOwn(found, field)) throw new ShapeError(`adapter.${field}`, 'appears twice');
        cursor.expect(':', 'adapter', 'must be a JSON object');
        const problem = ADAPTER_PROBLEMS[field];
        if (field === 'version') found.version = cursor.number(`adapter.${field}`, problem);
        else if (field === 'config') found.config = cursor.string(`adapter.${field}`, problem, MAX_ADAPTER_CONFIG_CHARS);
        else found.safetensorsBase64 = cursor.string(`adapter.${field}`, problem, base64Chars(promised.bytes), true);
      } while (cursor.accept(','));
      cursor.expect('}', 'adapter', 'must be a JSON object');
    }
    cursor.expect('}', '(line)', 'must hold only "adapter"');
    cursor.end('(line)', 'must hold only "adapter"');
  } catch (e) {
    if (e instanceof ShapeError) throw bad(e.field, e.problem);
    throw e;
  }
  const { version, config, safetensorsBase64 } = found;
  if (version === undefined || !Number.isSafeInteger(version) || version < 0) throw bad('adapter.version', ADAPTER_PROBLEMS.version);
  if (config === undefined) throw bad('adapter.config', ADAPTER_PROBLEMS.config);
  try {
    if (nestsDeeperThan(config, MAX_LINE_DEPTH)) throw new Error('too deep');
    const parsed: unknown = JSON.parse(config);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
  } catch {
    throw bad('adapter.config', 'is not a JSON object');
  }
  if (safetensorsBase64 === undefined) throw bad('adapter.safetensorsBase64', ADAPTER_PROBLEMS.safetensorsBase64);
  let weights: Uint8Array;
  try {
    weights = decodeBase64(safetensorsBase64);
    parseSafetensors(weights, PEFT_WEIGHTS);
  } catch (e) {
    throw bad('adapter.safetensorsBase64', `does not hold a safetensors file (${e instanceof Error ? e.message : String(e)})`);
  }
  if (weights.byteLength !== promised.bytes) {
    throw bad('adapter.safetensorsBase64', `holds ${weights.byteLength} bytes but the header promises ${promised.bytes}`);
  }
  return { version, files: { [PEFT_WEIGHTS]: weights, [PEFT_CONFIG]: config } };
}

/** Checks that the body matches what the header promised: a cut or edited file fails here. */
function checkEnd(header: RunFileHeader, summary: RunSummary, adapter: FileAdapter | null, lines: number): void {
  if (summary.records !== header.summary.records) {
    throw new RunFileError(
      `The run file header promises ${header.summary.records} records but the file holds ${summary.records}; ` +
        'it was cut off or edited. Export the run again.',
      lines,
      'summary.records',
    );
  }
  const promised = header.adapter?.version ?? null;
  if (promised !== (adapter?.version ?? null)) {
    if (promised === null) throw unpromisedAdapter(lines);
    throw new RunFileError(
      `The run file header promises the adapter of version ${promised} but the file ${adapter ? `holds version ${adapter.version}` : 'has none'}; it was cut off or edited. Export the run again.`,
      lines,
      'adapter',
    );
  }
}

/**
 * Checks the file's hashes once every line was read, so that the checks that say where a file
 * is wrong (a record's field, the adapter's size) speak first, and this one names what the
 * others cannot see: a change that left every line well formed.
 */
function checkIntegrity(header: RunFileHeader, headerHash: string, bodyHash: string, lines: number): void {
  const promised = header.integrity;
  if (!promised) return;
  const broken =
    promised.header !== headerHash
      ? { what: 'header does', line: 1, field: 'integrity.header' }
      : promised.body !== bodyHash
        ? { what: 'records do', line: lines, field: 'integrity.body' }
        : null;
  if (!broken) return;
  throw new RunFileError(
    `This run file's ${broken.what} not match the SHA-256 it carries: it was damaged or edited after export. ` +
      'Get an intact copy, or export the run again from the app that made it.',
    broken.line,
    broken.field,
  );
}

function unpromisedAdapter(line: number): RunFileError {
  return new RunFileError('The run file ends with an adapter its header does not mention; it was edited. Export the run again.', line, 'adapter');
}

/**
 * Streams a run file's items in order: header, records, adapter (if any), end.
 *
 * @throws RunFileError for anything wrong with the file (size, gzip, UTF-8, JSON, format
 *   version, a record, the adapter), with the line number where one applies
 */
export async function* readRunFile(input: ByteInput, options: ReadOptions = {}): AsyncGenerator<RunFileItem> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxLine = options.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
  const text = gunzipText(input, maxBytes);
  let header: RunFileHeader | null = null;
  // Only the line the header promises may be long, and only as long as its promised size needs.
  const limitFor = (n: number, head: string) =>
    n > 1 && header?.adapter && head.startsWith(ADAPTER_PREFIX) ? adapterLineLimit(header.adapter.bytes) : maxLine;
  let adapter: FileAdapter | null = null;
  let count = 0;
  const summarizer = new Summarizer();
  let headerHash = '';
  // Only files that carry a hash pay for hashing.
  let bodyHash: Sha256 | null = null;
  for await (const { line, text: body } of lines(text, limitFor)) {
    count = line;
    if (header === null) {
      const raw = parseJsonLine(body, line);
      header = parseHeader(raw);
      if (header.integrity) {
        headerHash = headerDigest(raw as object);
        bodyHash = new Sha256();
      }
      yield { kind: 'header', line: 1, header };
      continue;
    }
    bodyHash?.updateText(body).updateText('\n');
    if (adapter !== null) {
      throw new RunFileError(`Run file line ${line} follows the adapter line, which must be last; the file was edited.`, line);
    } else if (body.startsWith(ADAPTER_PREFIX)) {
      if (!header.adapter) throw unpromisedAdapter(line);
      adapter = checkAdapter(body, line, header.adapter);
      yield { kind: 'adapter', line, adapter };
    } else {
      const record = checkRecord(parseJsonLine(body, line), line);
      summarizer.add(record);
      yield { kind: 'record', line, record, chars: body.length };
    }
  }
  if (header === null) throw new RunFileError('This run file is empty.', null);
  const summary = summarizer.result();
  checkEnd(header, summary, adapter, count);
  checkIntegrity(header, headerHash, bodyHash?.hex() ?? '', count);
  yield { kind: 'end', lines: count, summary, integrity: header.integrity ? 'verified' : 'unverified' };
}
