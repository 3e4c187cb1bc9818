/**
 * Untrusted bytes -> bounded lines of text. Every stage is a stream with a limit, so a hostile
 * file costs at most the limits in memory and time: the compressed size, the decompressed
 * size (a gzip bomb stops as soon as it passes the limit, since decompression is pulled, not
 * pushed), and the length of any one line.
 */
import { formatBytes } from '../base/bytes';
import { RunFileError } from './errors';

export type ByteInput = Uint8Array | Blob | ReadableStream<Uint8Array>;

/** Slice size for in-memory input: small enough that decompression stays incremental. */
const SLICE = 64 * 1024;

export function byteStream(input: ByteInput): ReadableStream<Uint8Array> {
  if (input instanceof ReadableStream) return input;
  if (input instanceof Uint8Array) {
    let offset = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= input.byteLength) return controller.close();
        controller.enqueue(input.subarray(offset, offset + SLICE));
        offset += SLICE;
      },
    });
  }
  return input.stream();
}

/**
 * Re-exposes a stream, checking each chunk (onChunk throws to refuse it) and its end (onEnd
 * throws to refuse a stream that ended too soon), and mapping the source's errors. When a
 * chunk is refused or the result is cancelled, `stop` (default: cancel the source) halts
 * whatever feeds it.
 */
function guarded<T>(
  source: ReadableStream<T>,
  onChunk: (chunk: T) => void,
  mapError: (error: unknown) => unknown,
  stop?: (reason: unknown) => void,
  onEnd?: () => void,
): ReadableStream<T> {
  const reader = source.getReader();
  const halt = stop ?? ((reason: unknown) => void reader.cancel(reason).catch(() => {}));
  return new ReadableStream<T>({
    async pull(controller) {
      let result: ReadableStreamReadResult<T>;
      try {
        result = await reader.read();
      } catch (e) {
        throw e instanceof RunFileError ? e : mapError(e);
      }
      if (result.done) {
        onEnd?.();
        return controller.close();
      }
      try {
        onChunk(result.value);
      } catch (e) {
        // Erroring this stream does not stop the one it reads: stop it, or a gzip bomb keeps
        // inflating in the background after the limit was hit.
        halt(e);
        throw e;
      }
      controller.enqueue(result.value);
    },
    cancel(reason) {
      halt(reason);
    },
  });
}

/** The refusal of a file over `limit` bytes; `what` says which size passed it. */
export function tooLarge(what: string, limit: number): RunFileError {
  return new RunFileError(
    `This run file is larger than the import limit of ${formatBytes(limit)} (${what}). ` + 'If you trust it, raise the limit (maxBytes) and import it again.',
  );
}

function empty(): RunFileError {
  return new RunFileError('This file is empty (0 bytes), not a run file. Choose the .nsrun file exported from the lab.');
}

const GZIP_MAGIC = [0x1f, 0x8b];

function notGzip(first: Uint8Array): RunFileError {
  const looksLikeJson = first[0] === 0x7b; // "{"
  return new RunFileError(
    looksLikeJson
      ? 'This file is plain JSON, not a run file: run files are gzip-compressed. Choose the .nsrun file exported from the lab.'
      : 'This is not a Next-State Lab run file (it is not gzip-compressed). Choose a .nsrun file exported from the lab.',
    null,
  );
}

/**
 * gzip bytes -> UTF-8 text chunks, with `maxBytes` applied to the compressed and to the
 * decompressed size.
 */
export function gunzipText(input: ByteInput, maxBytes: number): ReadableStream<string> {
  if (input instanceof Blob && input.size > maxBytes) throw tooLarge(`${formatBytes(input.size)}`, maxBytes);
  if (input instanceof Blob && input.size === 0) throw empty();
  let compressed = 0;
  let checkedMagic = false;
  const bytes = guarded(
    byteStream(input),
    (chunk) => {
      if (!checkedMagic && chunk.byteLength > 0) {
        checkedMagic = true;
        if (chunk[0] !== GZIP_MAGIC[0] || (chunk.byteLength > 1 && chunk[1] !== GZIP_MAGIC[1])) throw notGzip(chunk);
      }
      compressed += chunk.byteLength;
      if (compressed > maxBytes) throw tooLarge('compressed', maxBytes);
    },
    (e) => e,
    undefined,
    () => {
      // Without this, gzip calls a file with no bytes at all "truncated".
      if (compressed === 0) throw empty();
    },
  );
  let inflated = 0;
  // Stopping decompression goes through the pipe's signal, not a cancel of its output: Node
  // 20's DecompressionStream throws an uncaught "Controller is already closed" when its
  // readable side is cancelled while zlib still has output. Aborting the pipe cancels the
  // input and destroys the inflater in browsers and Node alike.
  const stop = new AbortController();
  const plain = guarded(
    bytes.pipeThrough(new DecompressionStream('gzip') as ReadableWritablePair<Uint8Array, Uint8Array>, { signal: stop.signal }),
    (chunk) => {
      inflated += chunk.byteLength;
      if (inflated > maxBytes) throw tooLarge(`more than that once decompressed`, maxBytes);
    },
    (e) =>
      new RunFileError(
        `This run file is truncated or damaged (gzip: ${e instanceof Error ? e.message : String(e)}). ` +
          'It was probably cut off while downloading or copying; get a complete copy and import it again.',
        null,
        null,
        { cause: e },
      ),
    (reason) => stop.abort(reason),
  );
  const text = plain.pipeThrough(new TextDecoderStream('utf-8', { fatal: true }) as ReadableWritablePair<string, Uint8Array>);
  return guarded(
    text,
    () => {},
    (e) => new RunFileError('This run file is not valid UTF-8 text inside its gzip layer; it is damaged or not a run file.', null, null, { cause: e }),
  );
}

/** Characters of a line's start that limitFor gets to see. */
const HEAD = 64;

/**
 * Splits text into lines ('\n'; a final newline ends the last line). `limitFor` gives the
 * longest line allowed, in characters, given the line's number and first characters; a line
 * is refused as soon as it passes its limit, without waiting for its end.
 */
export async function* lines(
  text: ReadableStream<string>,
  limitFor: (lineNumber: number, head: string) => number,
): AsyncGenerator<{ line: number; text: string }> {
  const reader = text.getReader();
  let parts: string[] = [];
  let length = 0;
  let head = '';
  let lineNumber = 1;
  const grow = (piece: string) => {
    parts.push(piece);
    length += piece.length;
    if (head.length < HEAD) head += piece.slice(0, HEAD - head.length);
    const limit = limitFor(lineNumber, head);
    if (length > limit) {
      throw new RunFileError(
        `Run file line ${lineNumber} is longer than the limit of ${limit.toLocaleString('en-US')} characters for one line; ` +
          'the file is damaged or not a run file.',
        lineNumber,
      );
    }
  };
  const endLine = () => {
    const line = { line: lineNumber++, text: parts.join('') };
    parts = [];
    length = 0;
    head = '';
    return line;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      let start = 0;
      for (let nl = value.indexOf('\n'); nl !== -1; nl = value.indexOf('\n', start)) {
        grow(value.slice(start, nl));
        yield endLine();
        start = nl + 1;
      }
      if (start < value.length) grow(value.slice(start));
    }
    if (length > 0) yield endLine();
  } finally {
    // Stops decompression when the consumer gives up early (an error, inspect's header only).
    await reader.cancel().catch(() => {});
  }
}
