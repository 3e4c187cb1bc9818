/** Run files from the command line, through the one checked reader of local files. */
import { DEFAULT_MAX_BYTES } from '../storage/reader';
import { tooLarge } from '../storage/streams';
import { formatBytes } from '../base/bytes';
import { streamLocalFile, type FileLimit } from '../models/local-file';

/** What a run file may be: the import limit, refused in the words an import in the lab uses. */
export function runFileLimit(maxBytes = DEFAULT_MAX_BYTES): FileLimit {
  return { what: 'a run file', maxBytes, hint: 'name a .nsrun file exported from the lab.', tooLarge: (size) => tooLarge(formatBytes(size), maxBytes) };
}

/**
 * A regular file of at most `maxBytes` as a byte stream.
 *
 * @throws InputFileError when the path is missing or not a regular file
 * @throws RunFileError when it is larger than maxBytes
 */
export async function openRunFile(path: string, maxBytes = DEFAULT_MAX_BYTES): Promise<ReadableStream<Uint8Array>> {
  return streamLocalFile(path, runFileLimit(maxBytes));
}
