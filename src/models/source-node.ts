/** A model folder on disk, for the CLI and Node tests. */
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLED_SCHEME, bundledName, bundledPath, DEMO_STORY_MODEL } from './bundled';
import { ModelSourceError } from './errors';
import { HfCacheStore } from './hf-cache';
import { readModelFile } from './model-file-node';
import { HubSource, type FileProgress, type ModelSource } from './source';

export { readModelFile };

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
 * The package's root folder (its bundled models are in public/, as Vite serves them), found by
 * walking up rather than by a fixed path from this file: this code runs from src/models/ in the
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
 * is a folder, anything else a hub id or URL, read at `revision` (absent: main) through the
 * Hugging Face cache, with HF_HUB_CACHE, HF_HOME, HF_TOKEN, HF_ENDPOINT and HF_HUB_OFFLINE as
 * huggingface_hub reads them from the environment.
 */
export function modelSource(model: string, o: { revision?: string } = {}): ModelSource {
  const env = process.env;
  const bundled = bundledName(model);
  const local = bundled ? join(packageRoot(), 'public', bundledPath(bundled)) : existsSync(model) ? model : null;
  if (!bundled && model.startsWith(BUNDLED_SCHEME)) throw new ModelSourceError(`"${model}" names no bundled model; bundled models are ${DEMO_STORY_MODEL}.`);
  if (local !== null) {
    if (o.revision !== undefined) throw new ModelSourceError(`${model} is a folder here, which has no revisions; a revision applies to a hub model id.`);
    return new DirSource(local);
  }
  return new HubSource(model, {
    store: new HfCacheStore(),
    ...(o.revision !== undefined ? { revision: o.revision } : {}),
    ...(env.HF_TOKEN ? { token: env.HF_TOKEN } : {}),
    ...(env.HF_ENDPOINT ? { endpoint: env.HF_ENDPOINT } : {}),
    offline: /^(1|true|yes|on)$/i.test(env.HF_HUB_OFFLINE ?? ''),
  });
}
