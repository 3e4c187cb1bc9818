/** A model folder on disk, for the CLI and Node tests. */
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_SCHEME, bundledName, bundledPath, DEMO_STORY_MODEL } from './bundled';
import { ModelSourceError } from './errors';
import { InputFileError, readLocalFile } from './local-file';
import { HubSource, modelFileLimit, overLimit, type FileProgress, type ModelSource } from './source';

export class DirSource implements ModelSource {
  readonly id: string;
  constructor(private readonly dir: string) {
    this.id = resolve(dir);
  }

  async has(name: string): Promise<boolean> {
    try {
      return (await stat(join(this.dir, name))).isFile();
    } catch {
      return false;
    }
  }

  async bytes(name: string, onProgress?: (p: FileProgress) => void): Promise<Uint8Array> {
    const out = readModelFile(this.id, name);
    onProgress?.({ file: name, loaded: out.byteLength, total: out.byteLength, fromCache: false });
    return out;
  }
}

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

/**
 * The package's root folder (its bundled models are in public/, as Vite serves them), found by
 * walking up rather than by a fixed path from this file: this code runs from src/gpu/ in the
 * repository and from the compiled CLI in dist-cli/ in an installed package.
 */
export function packageRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir)
      throw new ModelSourceError(`no package.json above ${from}: reinstall next-state-lab, whose bundled models live in its public/ folder`);
  }
}

/**
 * A model for a headless run or the CLI: `bundled:NAME` is the app's own copy, a path that exists
 * is a folder, anything else a hub id or URL.
 */
export function modelSource(model: string): ModelSource {
  const bundled = bundledName(model);
  if (bundled) return new DirSource(join(packageRoot(), 'public', bundledPath(bundled)));
  if (model.startsWith(BUNDLED_SCHEME)) throw new ModelSourceError(`"${model}" names no bundled model; bundled models are ${DEMO_STORY_MODEL}.`);
  return existsSync(model) ? new DirSource(model) : new HubSource(model, { cacheStorage: null });
}
