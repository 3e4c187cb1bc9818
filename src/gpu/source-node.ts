/** A model folder on disk, for the CLI and Node tests. */
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ModelSourceError } from './errors';
import type { FileProgress, ModelSource } from './source';

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
    try {
      const buf = await readFile(join(this.dir, name));
      const out = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      onProgress?.({ file: name, loaded: out.byteLength, total: out.byteLength, fromCache: false });
      return out;
    } catch (e) {
      throw new ModelSourceError(`cannot read ${join(this.id, name)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}. Is this a Hugging Face model folder?`);
    }
  }
}
