/**
 * Run files from the command line. A path may name a FIFO, a device or a file of any size:
 * reading it whole before any limit applies (readFileSync) blocks forever on a FIFO, never
 * ends on /dev/zero and costs a 1.5 GB file 1.8 GB. The file is opened first, then checked
 * through its descriptor (so it cannot be swapped between check and read), then streamed.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { DEFAULT_MAX_BYTES } from '../storage/reader';
import { tooLarge } from '../storage/streams';
import { formatBytes } from '../storage/bytes';

/** The path cannot be read as a run file at all (missing, unreadable, not a regular file). */
export class InputFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InputFileError';
  }
}

/**
 * A regular file of at most `maxBytes` as a byte stream.
 *
 * @throws InputFileError when the path is missing or not a regular file
 * @throws RunFileError when it is larger than maxBytes
 */
export async function openRunFile(path: string, maxBytes = DEFAULT_MAX_BYTES): Promise<ReadableStream<Uint8Array>> {
  let handle;
  try {
    // Non-blocking, so opening a FIFO with no writer returns at once instead of waiting for one.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new InputFileError(`cannot open ${path} (${code}); name a .nsrun file exported from the lab.`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) {
      throw new InputFileError(`${path} is not a regular file (a folder, FIFO or device); name a .nsrun file exported from the lab.`);
    }
    if (info.size > maxBytes) throw tooLarge(formatBytes(info.size), maxBytes);
  } catch (e) {
    await handle.close();
    throw e;
  }
  return Readable.toWeb(handle.createReadStream()) as ReadableStream<Uint8Array>;
}
