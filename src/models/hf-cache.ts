/**
 * The standard Hugging Face cache on disk, so a model downloaded by `nextstate` is there for
 * transformers and the hub's own tools, and the other way round. Files are downloaded into it by
 * @huggingface/hub (downloadFileToCacheDir: blobs/{etag} and snapshots/{commit}/{file} linking
 * to it), through the fetch HubSource gives, which holds the token policy and the byte caps.
 *
 * What the library does not do is kept here, in huggingface_hub's layout:
 *   refs/{revision}          the commit a branch or tag named when last asked (for HF_HUB_OFFLINE
 *                            and for loading off the network); the library writes refs only
 *                            inside snapshotDownload, which downloads every file of a repository
 *   .no_exist/{commit}/{file} the hub said the file is not there, so the next load need not ask
 *   .locks/{repo}/            one download into a repository at a time, across processes
 * and each new blob is checked against the hash the hub stated, which the library does not do.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdir, open, readFile, realpath, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { downloadFileToCacheDir, getHFHubCachePath, getRepoFolderName } from '@huggingface/hub';
import { ModelSourceError } from './errors';
import { COMMIT, type HubDownload, type HubFile, type HubStore } from './hub';
import { InputFileError, readLocalFile } from './local-file';
import { readModelFile } from './model-file-node';

/** A file name inside a commit: relative, each segment a plain name, so no path built from it leaves the cache. */
function safeName(name: string): string {
  const parts = name.split('/');
  if (!parts.every((p) => /^[\w.\- ]+$/.test(p) && p !== '.' && p !== '..')) {
    throw new ModelSourceError(`"${name}" is not a file name a model folder holds; the model's index names a file outside it.`);
  }
  return name;
}

/** A ref of the cache as text, through the capped reader (the library's scanRefsDir reads refs whole); null when there is none. */
function readRef(path: string): string | null {
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

/** Writes through a temporary file beside `path`, so a killed process never leaves a partial ref under its name. */
async function writeAtomic(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${randomBytes(6).toString('hex')}.incomplete`;
  try {
    await writeFile(tmp, text);
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/** The message downloadFileToCacheDir logs before each download, with console.debug, which Node writes to stdout. */
const LIBRARY_DOWNLOAD_LINE = /^Downloading .* to .*\.incomplete$/s;
let quieted = 0;
let debug: typeof console.debug = console.debug;

/**
 * Runs `run` with the library's download line kept off stdout, where the CLI's data goes (a
 * `generate --json` piped to another program); HubSource reports download progress itself.
 * Every other console.debug line passes. Counted, so overlapping downloads restore it once.
 */
async function withoutDownloadLine<T>(run: () => Promise<T>): Promise<T> {
  if (quieted++ === 0) {
    debug = console.debug;
    const original = debug;
    console.debug = (...args: unknown[]) => {
      if (!(args.length === 1 && typeof args[0] === 'string' && LIBRARY_DOWNLOAD_LINE.test(args[0]))) original(...args);
    };
  }
  try {
    return await run();
  } finally {
    if (--quieted === 0) console.debug = debug;
  }
}

/** How often a download's lock is touched, and how long untouched before a waiter takes it as left by a killed process. */
const LOCK_BEAT_MS = 2_000;
const LOCK_STALE_MS = 30_000;
const LOCK_POLL_MS = 100;

/** Who holds a lock: written into it, so a waiter on the same host can tell its holder has gone. */
interface LockOwner {
  pid: number;
  host: string;
}

/** Whether the lock at `path` names a process of this host that no longer runs (killed mid-download). */
async function ownerGone(path: string): Promise<boolean> {
  const owner = await readFile(path, 'utf8').then(
    (t) => JSON.parse(t) as Partial<LockOwner>,
    () => null,
  );
  if (!owner || owner.host !== hostname() || !Number.isSafeInteger(owner.pid) || owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid!, 0);
    return false;
  } catch (e) {
    // EPERM: it runs, as another user.
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Runs `run` holding the lock file at `path` (created exclusively, so it holds across processes
 * and hosts sharing the cache), since downloadFileToCacheDir writes every download of a blob to
 * one `{blob}.incomplete` and takes no lock: two at once truncate each other's bytes or fail on
 * the rename. A lock left by a killed process is taken at once when it names a process of this
 * host that is gone, else once untouched for LOCK_STALE_MS (the holder touches it as it runs).
 */
async function withLock<T>(path: string, run: () => Promise<T>): Promise<T> {
  await mkdir(dirname(path), { recursive: true });
  for (;;) {
    try {
      const file = await open(path, 'wx');
      try {
        await file.writeFile(JSON.stringify({ pid: process.pid, host: hostname() } satisfies LockOwner));
      } finally {
        await file.close();
      }
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const touched = await stat(path).then(
      (s) => s.mtimeMs,
      () => null,
    );
    if (touched !== null && (Date.now() - touched > LOCK_STALE_MS || (await ownerGone(path)))) await rm(path, { force: true });
    else await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
  }
  const beat = setInterval(() => {
    const now = new Date();
    utimes(path, now, now).catch(() => {});
  }, LOCK_BEAT_MS);
  try {
    return await run();
  } finally {
    clearInterval(beat);
    await rm(path, { force: true });
  }
}

export class HfCacheStore implements HubStore {
  /** `dir` absent: where huggingface_hub looks (HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub). */
  constructor(readonly dir: string = getHFHubCachePath()) {}

  /** The repository's folder: models--owner--name. */
  repoDir(repo: string): string {
    return join(this.dir, getRepoFolderName({ type: 'model', name: repo }));
  }

  private snapshotDir(snapshot: { repo: string; commit: string }): string {
    return join(this.repoDir(snapshot.repo), 'snapshots', snapshot.commit);
  }

  async holds(file: HubFile): Promise<boolean> {
    return file.snapshot !== null && isFile(join(this.snapshotDir(file.snapshot), safeName(file.name)));
  }

  async read(file: HubFile): Promise<Uint8Array | null> {
    if (!(await this.holds(file)) || !file.snapshot) return null;
    return readModelFile(this.snapshotDir(file.snapshot), file.name);
  }

  async download(file: HubFile & { snapshot: NonNullable<HubFile['snapshot']> }, via: HubDownload): Promise<Uint8Array> {
    const { repo, commit } = file.snapshot;
    const folder = getRepoFolderName({ type: 'model', name: repo });
    // One download into a repository's blobs at a time (its files may share a blob), in the cache's .locks folder, where huggingface_hub keeps its own.
    return withLock(join(this.dir, '.locks', folder, 'nextstate-download.lock'), async () => {
      await withoutDownloadLine(() =>
        downloadFileToCacheDir({
          repo: { type: 'model', name: repo },
          path: safeName(file.name),
          revision: commit,
          cacheDir: this.dir,
          hubUrl: via.endpoint,
          fetch: via.fetch,
        }),
      );
      // The cached copy through the capped regular-file reader, as a cached file is always read.
      const bytes = readModelFile(this.snapshotDir(file.snapshot), file.name);
      await this.checkBlob(file.snapshot, file.name, bytes);
      return bytes;
    });
  }

  /**
   * The new blob's bytes against its name, the hash the hub stated (the SHA-256 of an LFS file,
   * the git blob id of a git one): the library checks neither, and two processes downloading the
   * same blob write the same `.incomplete` file, one truncating what the other wrote. A blob that
   * does not match is removed, with its link, so the next load downloads it again.
   */
  private async checkBlob(snapshot: { repo: string; commit: string }, name: string, bytes: Uint8Array): Promise<void> {
    const link = join(this.snapshotDir(snapshot), name);
    const blob = await realpath(link);
    const id = basename(blob);
    const actual = /^[0-9a-f]{64}$/.test(id)
      ? createHash('sha256').update(bytes).digest('hex')
      : /^[0-9a-f]{40}$/.test(id)
        ? createHash('sha1').update(`blob ${bytes.byteLength}\0`).update(bytes).digest('hex')
        : id;
    if (actual === id) return;
    await Promise.all([rm(link, { force: true }), rm(blob, { force: true })]);
    throw new ModelSourceError(
      `${snapshot.repo}/${name} at ${snapshot.commit} downloaded as other bytes than the hub stated (another download of it at the same time?); run again to download it afresh.`,
    );
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
    const commit = readRef(join(this.repoDir(repo), 'refs', revision))?.trim() ?? null;
    return commit && COMMIT.test(commit) ? commit : null;
  }

  async saveRef(repo: string, revision: string, commit: string): Promise<void> {
    if ((await this.ref(repo, revision)) !== commit) await writeAtomic(join(this.repoDir(repo), 'refs', revision), commit);
  }
}
