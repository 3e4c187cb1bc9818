/**
 * The Hugging Face hub as HubSource speaks to it: which commit a revision (branch, tag or commit)
 * names now, and where downloaded files are kept (HubStore): Cache Storage in the page, the
 * standard Hugging Face cache on disk in Node (hf-cache.ts, through @huggingface/hub). A run
 * records the commit, so a resumed or repeated run loads the same files even after the branch moved.
 */
import { BodyTooLargeError, readBody } from './read-body';
import { ModelSourceError } from './errors';

export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';
export const DEFAULT_REVISION = 'main';

/** A full commit id: what a branch or tag resolves to, and what never moves. */
export const COMMIT = /^[0-9a-f]{40}$/;

/** A hub repository id ("HuggingFaceTB/SmolLM2-135M-Instruct"). */
export const HUB_REPO_ID = /^[\w.-]+\/[\w.-]+$/;

/** The most a revision's API answer may be: it lists the repository's files, which for a large repository is long, never this long. */
const REVISION_INFO_BYTES = 16_000_000;

/** Whether `revision` is a branch, tag or commit as git allows it (refs/pr/1 included); `..` and control characters never. */
export function isRevision(revision: string): boolean {
  return /^[\w.\-/]{1,256}$/.test(revision) && !revision.includes('..') && !revision.startsWith('/') && !revision.endsWith('/');
}

/** @throws ModelSourceError when `revision` is not one (isRevision) */
export function checkRevision(revision: string): string {
  if (!isRevision(revision)) {
    throw new ModelSourceError(`"${revision}" is not a hub revision; give a branch, tag or commit id (e.g. main, v1.0, or 40 hex digits).`);
  }
  return revision;
}

/** A revision as it goes in a hub URL path: one segment, so refs/pr/1 is escaped. */
export function revisionSegment(revision: string): string {
  return encodeURIComponent(revision);
}

/** A file of a hub commit, or of a plain base URL (snapshot null: a static host has no commits). */
export interface HubFile {
  url: string;
  name: string;
  snapshot: { repo: string; commit: string } | null;
}

/** What a store that downloads a file itself is given: the hub, and the fetch each of the download's requests goes through. */
export interface HubDownload {
  endpoint: string;
  /** HF_TOKEN on the hub's own host only; every body within the file's cap, counted as progress. */
  fetch: typeof fetch;
}

/** Where a HubSource keeps downloaded files; what a store cannot keep it leaves to the network. */
export interface HubStore {
  holds(file: HubFile): Promise<boolean>;
  read(file: HubFile): Promise<Uint8Array | null>;
  /** Keeps bytes HubSource downloaded; `etag` as the hub sent it. */
  write?(file: HubFile, bytes: Uint8Array, etag: string | null): Promise<void>;
  /** Downloads a file of a commit into the store and returns its bytes (the Hugging Face cache, by @huggingface/hub's own download). */
  download?(file: HubFile & { snapshot: NonNullable<HubFile['snapshot']> }, via: HubDownload): Promise<Uint8Array>;
  /** Whether the hub said this file is not in the commit (so asking again would say the same). */
  isAbsent?(file: HubFile): Promise<boolean>;
  markAbsent?(file: HubFile): Promise<void>;
  /** The commit `revision` resolved to when last asked here; null when never. */
  ref?(repo: string, revision: string): Promise<string | null>;
  saveRef?(repo: string, revision: string, commit: string): Promise<void>;
}

const CACHE_NAME = 'nextstate-models-v1';

/** The page's store: Cache Storage, by URL (a commit's URL names bytes that never change). */
export function cacheStorageStore(caches: CacheStorage): HubStore {
  const open = () => caches.open(CACHE_NAME);
  return {
    async holds(file) {
      return (await (await open()).match(file.url)) !== undefined;
    },
    async read(file) {
      const hit = await (await open()).match(file.url);
      return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
    },
    async write(file, bytes) {
      await (await open()).put(file.url, new Response(bytes.slice().buffer, { headers: { 'content-type': 'application/octet-stream' } }));
    },
  };
}

export interface ResolveOptions {
  endpoint: string;
  fetchFn: (url: string, init?: RequestInit) => Promise<Response>;
}

/**
 * The commit `revision` of `repo` names now, from the hub's API (GET /api/models/{repo}/revision/{rev}).
 *
 * @throws ModelSourceError saying what to do: a gated or private model wants HF_TOKEN, an
 *   unknown one a corrected id or revision
 */
export async function resolveCommit(repo: string, revision: string, o: ResolveOptions): Promise<string> {
  const url = `${o.endpoint}/api/models/${repo}/revision/${revisionSegment(revision)}`;
  const res = await o.fetchFn(url);
  if (!res.ok) {
    void res.body?.cancel().catch(() => {});
    if (res.status === 401 || res.status === 403) {
      throw new ModelSourceError(
        `${repo} answered HTTP ${res.status} for revision ${revision}: the model may be gated or private. Accept its terms on the hub and set HF_TOKEN, or load it from a folder.`,
      );
    }
    if (res.status === 404) throw new ModelSourceError(`${repo} has no revision "${revision}" on ${o.endpoint} (HTTP 404); check the model id and --revision.`);
    throw new ModelSourceError(`asking ${url} which commit ${revision} is failed with HTTP ${res.status}; try again.`);
  }
  let info: unknown;
  try {
    info = JSON.parse(new TextDecoder().decode(await readBody(res, { maxBytes: REVISION_INFO_BYTES })));
  } catch (e) {
    const why = e instanceof BodyTooLargeError ? e.message : `not JSON: ${(e as Error).message}`;
    throw new ModelSourceError(`${url} did not answer as the hub's API does (${why}); is ${o.endpoint} a Hugging Face hub?`);
  }
  const sha = (info as { sha?: unknown } | null)?.sha;
  if (typeof sha !== 'string' || !COMMIT.test(sha)) {
    throw new ModelSourceError(`${url} named no commit (its "sha" is not 40 hex digits); is ${o.endpoint} a Hugging Face hub?`);
  }
  return sha;
}
