/**
 * The one reader of local files (Node only): every file the CLI opens (run files, run configs,
 * presets, training data, model folders, adapters, optimizer states, problem files) comes through
 * here. A path may name a FIFO, a device or a file of any size: reading it whole before any limit
 * applies (readFileSync) blocks forever on a FIFO, never ends on /dev/zero (or a symlink to it)
 * and costs a 1.5 GB file 1.8 GB. The file is opened first, without blocking, then checked
 * through its descriptor (so it cannot be swapped between check and read): a regular file of at
 * most its kind's cap, or a one-line refusal before a byte is read.
 */
import { closeSync, constants, createReadStream, fstatSync, openSync, readSync } from 'node:fs';
import { Readable } from 'node:stream';
import { formatBytes } from '../base/bytes';

/** The path cannot be read as the file asked for (missing, unreadable, not a regular file, over its cap). */
export class InputFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputFileError';
  }
}

/** What a kind of file may be: its cap, and what the person should name instead. */
export interface FileLimit {
  /** What the file should be, for messages: "a run config". */
  what: string;
  maxBytes: number;
  /** What to do instead, the end of every refusal: "name a .nsrun file exported from the lab." */
  hint: string;
  /** The refusal of a file over maxBytes, for callers that word it their own way (run files). */
  tooLarge?: (size: number) => Error;
}

/** The caps of the files the CLI reads besides model files (see modelFileLimit) and run files. */
export const FILE_LIMITS = {
  runConfig: { what: 'a run config', maxBytes: 4_000_000, hint: 'name a JSON run config (print one with `nextstate run --example storyteller`).' },
  preset: { what: 'a method preset', maxBytes: 4_000_000, hint: 'name a JSON method preset.' },
  trainData: { what: 'training data', maxBytes: 256_000_000, hint: 'name a .jsonl file of {"prompt", "completion", "advantage"} lines, or split it.' },
  report: { what: 'a report', maxBytes: 64_000_000, hint: 'name the JSON report the command wrote.' },
  journal: { what: 'a serve journal', maxBytes: 1_000_000_000, hint: 'start a new --out.' },
  apiKey: { what: 'an API key file', maxBytes: 4_096, hint: 'name a file whose first line is the key.' },
} as const satisfies Record<string, FileLimit>;

const codeOf = (e: unknown) => (e as NodeJS.ErrnoException).code ?? (e as Error).message;

/**
 * Opens a regular file of at most `limit.maxBytes` for reading; the caller closes the descriptor.
 *
 * @throws InputFileError when the path is missing, unreadable, not a regular file or over the cap
 *   (or limit.tooLarge's error)
 */
export function openLocalFile(path: string, limit: FileLimit): { fd: number; size: number } {
  let fd: number;
  try {
    // Non-blocking, so opening a FIFO with no writer returns at once instead of waiting for one.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    throw new InputFileError(`cannot open ${path} (${codeOf(e)}); ${limit.hint}`);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new InputFileError(`${path} is not a regular file (a folder, FIFO or device); ${limit.hint}`);
    if (info.size > limit.maxBytes) {
      throw (
        limit.tooLarge?.(info.size) ??
        new InputFileError(`${path} is ${formatBytes(info.size)}, more than the ${formatBytes(limit.maxBytes)} ${limit.what} may be; ${limit.hint}`)
      );
    }
    return { fd, size: info.size };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/**
 * A regular file's bytes, read whole: at most limit.maxBytes, and only what its size said (a file
 * that grows while it is read is read as it was when opened).
 *
 * @throws InputFileError as openLocalFile does, or when reading fails
 */
export function readLocalFile(path: string, limit: FileLimit): Uint8Array {
  const { fd, size } = openLocalFile(path, limit);
  try {
    const out = new Uint8Array(size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, out, at, size - at, null);
      if (n === 0) break;
      at += n;
    }
    return at === size ? out : out.subarray(0, at);
  } catch (e) {
    if (e instanceof InputFileError) throw e;
    throw new InputFileError(`cannot read ${path} (${codeOf(e)}); ${limit.hint}`);
  } finally {
    closeSync(fd);
  }
}

/** readLocalFile as UTF-8 text. */
export function readLocalText(path: string, limit: FileLimit): string {
  return new TextDecoder().decode(readLocalFile(path, limit));
}

/** readLocalText parsed as JSON; a syntax error is named with the path. */
export function readLocalJson(path: string, limit: FileLimit): unknown {
  const text = readLocalText(path, limit);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputFileError(`${path} is not valid JSON (${(e as Error).message}); ${limit.hint}`);
  }
}

/** A checked regular file as a byte stream, for files read as they stream (run files). */
export function streamLocalFile(path: string, limit: FileLimit): ReadableStream<Uint8Array> {
  const { fd } = openLocalFile(path, limit);
  return Readable.toWeb(createReadStream('', { fd })) as ReadableStream<Uint8Array>;
}

/**
 * A checked regular file's bytes as chunks of at most `chunkBytes`, read synchronously up to the
 * size it had when opened: memory stays one chunk however large the file is. The descriptor is
 * closed when the chunks end or the consumer stops early.
 *
 * @throws InputFileError as openLocalFile does, or when reading fails
 */
export function* readLocalChunks(path: string, limit: FileLimit, chunkBytes = 1 << 20): Generator<Uint8Array> {
  const { fd, size } = openLocalFile(path, limit);
  try {
    for (let at = 0; at < size;) {
      // A fresh buffer each time: the consumer may keep a chunk's tail while it reads the next.
      const chunk = new Uint8Array(Math.min(chunkBytes, size - at));
      let n: number;
      try {
        n = readSync(fd, chunk, 0, chunk.length, at);
      } catch (e) {
        throw new InputFileError(`cannot read ${path} (${codeOf(e)}); ${limit.hint}`);
      }
      if (n === 0) return;
      at += n;
      yield n === chunk.length ? chunk : chunk.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}
