/**
 * Reads a run file as a stream of checked items: the header, every record (validated by the
 * method library's validateRecord), the adapter, and a final summary computed from what was
 * read. Shared by importRun, inspectRunFile and extractAdapter, so all three refuse the same
 * files with the same messages.
 */
import { PEFT_CONFIG, PEFT_WEIGHTS, type PeftFiles } from '../gpu/peft';
import { parseSafetensors } from '../gpu/safetensors';
import { RecordValidationError, validateRecord, type RunRecord } from '../rl';
import { decodeBase64 } from './base64';
import { RunFileError } from './errors';
import { parseHeader, type RunFileHeader } from './runfile';
import { gunzipText, lines, type ByteInput } from './streams';
import { Summarizer, type RunSummary } from './summary';

/** Default import limit, on the compressed and on the decompressed size. */
export const DEFAULT_MAX_BYTES = 200_000_000;
/** Default limit for one record line; the adapter line is bounded by maxBytes only. */
export const DEFAULT_MAX_LINE_CHARS = 4_000_000;
/** adapter_config.json is a few hundred bytes; anything near this is not one. */
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
  | { kind: 'end'; lines: number; summary: RunSummary };

function parseJsonLine(text: string, line: number): unknown {
  if (text.length === 0) throw new RunFileError(`Run file line ${line} is empty; the file is damaged.`, line);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new RunFileError(
      `Run file line ${line} is not valid JSON (${e instanceof Error ? e.message : String(e)}); the file is damaged.`,
      line,
      null,
      { cause: e },
    );
  }
}

function checkRecord(value: unknown, line: number): RunRecord {
  try {
    return validateRecord(value, `run file line ${line}`);
  } catch (e) {
    if (!(e instanceof RecordValidationError)) throw e;
    throw new RunFileError(
      `Run file line ${line}: record field "${e.field}" ${e.problem}. The file is damaged or was edited; ` +
        'export it again from the app that made it.',
      line,
      e.field,
      { cause: e },
    );
  }
}

function checkAdapter(value: unknown, line: number): FileAdapter {
  const bad = (field: string, problem: string) =>
    new RunFileError(`Run file line ${line} (adapter): field "${field}" ${problem}. The adapter is damaged; export the run again.`, line, field);
  const outer = value as { adapter?: unknown };
  if (Object.keys(outer).length !== 1) throw bad('(line)', 'must hold only "adapter"');
  const a = outer.adapter as { version?: unknown; config?: unknown; safetensorsBase64?: unknown } | null;
  if (typeof a !== 'object' || a === null || Array.isArray(a)) throw bad('adapter', 'must be a JSON object');
  const extra = Object.keys(a).find((k) => !['version', 'config', 'safetensorsBase64'].includes(k));
  if (extra) throw bad(`adapter.${extra}`, 'is not a known field');
  if (typeof a.version !== 'number' || !Number.isSafeInteger(a.version) || a.version < 0) throw bad('adapter.version', 'must be a non-negative integer');
  if (typeof a.config !== 'string' || a.config.length > MAX_ADAPTER_CONFIG_CHARS) throw bad('adapter.config', 'must be a JSON string of adapter_config.json');
  try {
    const config: unknown = JSON.parse(a.config);
    if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new Error('not an object');
  } catch {
    throw bad('adapter.config', 'is not a JSON object');
  }
  if (typeof a.safetensorsBase64 !== 'string') throw bad('adapter.safetensorsBase64', 'must be a base64 string');
  let weights: Uint8Array;
  try {
    weights = decodeBase64(a.safetensorsBase64);
    parseSafetensors(weights, PEFT_WEIGHTS);
  } catch (e) {
    throw bad('adapter.safetensorsBase64', `does not hold a safetensors file (${e instanceof Error ? e.message : String(e)})`);
  }
  return { version: a.version, files: { [PEFT_WEIGHTS]: weights, [PEFT_CONFIG]: a.config } };
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
    throw new RunFileError(
      promised === null
        ? 'The run file ends with an adapter its header does not mention; it was edited. Export the run again.'
        : `The run file header promises the adapter of version ${promised} but the file ${adapter ? `holds version ${adapter.version}` : 'has none'}; it was cut off or edited. Export the run again.`,
      lines,
      'adapter',
    );
  }
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
  const limitFor = (n: number, head: string) => (n > 1 && head.startsWith(ADAPTER_PREFIX) ? Infinity : maxLine);
  let header: RunFileHeader | null = null;
  let adapter: FileAdapter | null = null;
  let count = 0;
  const summarizer = new Summarizer();
  for await (const { line, text: body } of lines(text, limitFor)) {
    count = line;
    const value = parseJsonLine(body, line);
    if (header === null) {
      header = parseHeader(value);
      yield { kind: 'header', line: 1, header };
    } else if (adapter !== null) {
      throw new RunFileError(`Run file line ${line} follows the adapter line, which must be last; the file was edited.`, line);
    } else if (body.startsWith(ADAPTER_PREFIX)) {
      adapter = checkAdapter(value, line);
      yield { kind: 'adapter', line, adapter };
    } else {
      const record = checkRecord(value, line);
      summarizer.add(record);
      yield { kind: 'record', line, record, chars: body.length };
    }
  }
  if (header === null) throw new RunFileError('This run file is empty.', null);
  const summary = summarizer.result();
  checkEnd(header, summary, adapter, count);
  yield { kind: 'end', lines: count, summary };
}
