/**
 * Splits a stream of byte chunks into UTF-8 lines one at a time, so a file of any size is read in
 * the memory of its longest line: the journal reader joined a whole file into one string, which
 * V8 cannot hold past 512 MiB.
 */
import { Buffer } from 'node:buffer';

/** One complete line ('\n'-terminated), without its newline. */
export interface ByteLine {
  /** 1-based. */
  line: number;
  text: string;
  /** Bytes from the start of the input through this line's newline. */
  end: number;
}

/**
 * The complete lines of `chunks`, in order. Bytes after the last newline (a write cut short) are
 * not a line and are not returned; the last line's `end` says where complete lines stop. A line
 * is refused as soon as it passes `maxLineBytes`, without waiting for its end: `tooLong(line)`
 * is thrown, unless no newline follows (then it is the cut-short tail, skipped in constant
 * memory).
 */
export function* byteLines(chunks: Iterable<Uint8Array>, maxLineBytes: number, tooLong: (line: number) => Error): Generator<ByteLine> {
  let parts: Buffer[] = [];
  let length = 0;
  let offset = 0;
  let line = 1;
  // Past the limit the line's bytes are dropped; it fails at its newline, if one comes.
  let over = false;
  for (const chunk of chunks) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (let nl = bytes.indexOf(0x0a); nl !== -1; nl = bytes.indexOf(0x0a, start)) {
      if (over || length + nl - start > maxLineBytes) throw tooLong(line);
      parts.push(bytes.subarray(start, nl));
      const text = (parts.length === 1 ? parts[0] : Buffer.concat(parts)).toString('utf8');
      offset += length + nl - start + 1;
      yield { line: line++, text, end: offset };
      parts = [];
      length = 0;
      start = nl + 1;
    }
    if (over || start === bytes.length) continue;
    length += bytes.length - start;
    if (length > maxLineBytes) {
      over = true;
      parts = [];
    } else parts.push(bytes.subarray(start));
  }
}
