/** One file of a model or adapter folder on disk, read with its kind's cap (Node only). */
import { join } from 'node:path';
import { ModelSourceError } from './errors';
import { InputFileError, readLocalFile } from './local-file';
import { modelFileLimit, overLimit } from './source';

/**
 * A file of a model or adapter folder on disk, through the checked reader with its kind's cap
 * (modelFileLimit): a FIFO, a device or a file over the cap is refused before a byte is read.
 *
 * @throws ModelSourceError saying which
 */
export function readModelFile(dir: string, name: string): Uint8Array {
  const path = join(dir, name);
  const maxBytes = modelFileLimit(name);
  try {
    return readLocalFile(path, {
      what: 'a model file',
      maxBytes,
      hint: 'a model folder holds regular files; is this a Hugging Face model folder?',
      tooLarge: (size) => overLimit(path, size, maxBytes),
    });
  } catch (e) {
    if (e instanceof InputFileError) throw new ModelSourceError(e.message);
    throw e;
  }
}
