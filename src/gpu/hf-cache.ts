/**
 * The standard Hugging Face cache on disk, as huggingface_hub lays it out, so a model downloaded
 * by `nextstate` is there for transformers and the hub's own tools, and the other way round:
 *
 *   {cache}/models--{owner}--{name}/blobs/{blob id}          the bytes
 *   {cache}/models--{owner}--{name}/snapshots/{commit}/{file} a link to ../../blobs/{blob id}
 *   {cache}/models--{owner}--{name}/refs/{revision}          the commit a branch or tag named
 *   {cache}/models--{owner}--{name}/.no_exist/{commit}/{file} the hub said the file is not there
 *
 * A blob is named as huggingface_hub names it: the git blob id of a file kept in git (the hub's
 * ETag for it), else the SHA-256 of its bytes (what the hub calls an LFS file's ETag).
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { copyFile, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ModelSourceError } from './errors';
import { COMMIT, type HubFile, type HubStore } from './hub';
import { InputFileError, readLocalFile } from './local-file';
import { readModelFile } from './model-file-node';

/** The hub cache folder, by huggingface_hub's precedence: HF_HUB_CACHE, then HF_HOME/hub, then ~/.cache/huggingface/hub. */
export function hfHubCacheDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const hubCache = env.HF_HUB_CACHE || env.HUGGINGFACE_HUB_CACHE;
  if (hubCache) return hubCache;
  const home = env.HF_HOME || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'huggingface');
  return join(home, 'hub');
}

/** A file name inside a commit: relative, each segment a plain name, so no write leaves the cache. */
function safeName(name: string): string {
  const parts = name.split('/');
  if (!parts.every((p) => /^[\w.\- ]+$/.test(p) && p !== '.' && p !== '..')) {
    throw new ModelSourceError(`"${name}" is not a file name a model folder holds; the model's index names a file outside it.`);
  }
  return name;
}

/** A small file of the cache (a ref) as text; null when there is none. */
function readSmall(path: string): string | null {
  if (!existsSync(path)) return null;
  try {
    return new TextDecoder().decode(readLocalFile(path, { what: 'a hub cache ref', maxBytes: 4096, hint: 'delete it; the next download writes it again.' }));
  } catch (e) {
    if (e instanceof InputFileError) throw new ModelSourceError(e.message);
    throw e;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Writes through a temporary file beside `path`, so a killed download never leaves a partial file under its name. */
async function writeAtomic(path: string, bytes: Uint8Array | string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${randomBytes(6).toString('hex')}.incomplete`;
  try {
    await writeFile(tmp, bytes);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/** The name huggingface_hub gives these bytes' blob: the hub's ETag where it is their git blob id, else their SHA-256. */
export function blobId(bytes: Uint8Array, etag: string | null): string {
  const tag = etag?.replace(/^W\//, '').replace(/"/g, '');
  if (tag && /^[0-9a-f]{40}$/.test(tag)) {
    const git = createHash('sha1').update(`blob ${bytes.byteLength}\0`).update(bytes).digest('hex');
    if (git === tag) return tag;
  }
  return createHash('sha256').update(bytes).digest('hex');
}

export class HfCacheStore implements HubStore {
  constructor(readonly dir: string = hfHubCacheDir()) {}

  /** The repository's folder: models--owner--name. */
  repoDir(repo: string): string {
    return join(this.dir, `models--${repo.split('/').join('--')}`);
  }

  private snapshotPath(file: HubFile): string | null {
    return file.snapshot && join(this.repoDir(file.snapshot.repo), 'snapshots', file.snapshot.commit, safeName(file.name));
  }

  async holds(file: HubFile): Promise<boolean> {
    const path = this.snapshotPath(file);
    return path !== null && isFile(path);
  }

  async read(file: HubFile): Promise<Uint8Array | null> {
    const path = this.snapshotPath(file);
    if (!path || !file.snapshot || !isFile(path)) return null;
    return readModelFile(join(this.repoDir(file.snapshot.repo), 'snapshots', file.snapshot.commit), file.name);
  }

  async write(file: HubFile, bytes: Uint8Array, etag: string | null): Promise<void> {
    const path = this.snapshotPath(file);
    if (!path || !file.snapshot) return;
    const blob = join(this.repoDir(file.snapshot.repo), 'blobs', blobId(bytes, etag));
    if (!isFile(blob)) await writeAtomic(blob, bytes);
    await mkdir(dirname(path), { recursive: true });
    await rm(path, { force: true });
    try {
      await symlink(relative(dirname(path), blob), path);
    } catch {
      // Where links cannot be made (Windows without developer mode), huggingface_hub copies too.
      await copyFile(blob, path);
    }
  }

  private absentPath(file: HubFile): string | null {
    return file.snapshot && join(this.repoDir(file.snapshot.repo), '.no_exist', file.snapshot.commit, safeName(file.name));
  }

  async isAbsent(file: HubFile): Promise<boolean> {
    const path = this.absentPath(file);
    return path !== null && existsSync(path);
  }

  async markAbsent(file: HubFile): Promise<void> {
    const path = this.absentPath(file);
    if (path) await writeAtomic(path, '');
  }

  async ref(repo: string, revision: string): Promise<string | null> {
    const commit = readSmall(join(this.repoDir(repo), 'refs', revision))?.trim() ?? null;
    return commit && COMMIT.test(commit) ? commit : null;
  }

  async saveRef(repo: string, revision: string, commit: string): Promise<void> {
    if ((await this.ref(repo, revision)) !== commit) await writeAtomic(join(this.repoDir(repo), 'refs', revision), commit);
  }
}
