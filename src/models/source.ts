/**
 * Where model files come from: a folder on disk (Node, see source-node.ts), files the person
 * picked in the browser, or the Hugging Face hub with streamed download, kept in a HubStore (hub.ts).
 * The loader sees only this interface.
 */
import { formatBytes } from '../base/bytes';
import { MAX_LINE_DEPTH, nestsDeeperThan } from '../base/json-scan';
import { BodyTooLargeError, cappedResponse, readBody } from './read-body';
import { ModelSourceError } from './errors';
import {
  cacheStorageStore,
  checkRevision,
  COMMIT,
  DEFAULT_HUB_ENDPOINT,
  DEFAULT_REVISION,
  HUB_REPO_ID,
  resolveCommit,
  revisionSegment,
  type HubFile,
  type HubStore,
} from './hub';

export interface FileProgress {
  file: string;
  loaded: number;
  total: number | null;
  fromCache: boolean;
}

export interface ModelSource {
  /** A label for messages and run records: a path, a hub id or "picked files". */
  readonly id: string;
  has(name: string): Promise<boolean>;
  bytes(name: string, onProgress?: (p: FileProgress) => void): Promise<Uint8Array>;
  /** The hub commit the files were read at, once one was read; absent or null where there is none. */
  commit?(): string | null;
}

/** An absolute or explicitly relative local path (/..., ~/..., ./..., C:\..., \\server\...). */
const LOCAL_PATH = /^(?:\/|~[\\/]|\.{1,2}[\\/]|[A-Za-z]:[\\/]|\\\\)/;

/**
 * What may leave this machine about a model: a hub id or URL as it is, a local folder by its
 * last path segment only. A folder's path names the person's disk layout (often their user
 * name) and means nothing on another machine.
 */
export function portableModelName(id: string): string {
  if (!LOCAL_PATH.test(id)) return id;
  return (
    id
      .split(/[\\/]+/)
      .filter((part) => part !== '' && part !== '.' && part !== '..' && part !== '~')
      .at(-1) ?? 'local model'
  );
}

/** The most a weights file (one safetensors shard, an optimizer state) may be: far above any shard the engine can run. */
export const MAX_WEIGHTS_FILE_BYTES = 40_000_000_000;
/** The most any other model file may be: config.json, the tokenizer (Gemma's tokenizer.json is 33 MB), the chat template. */
export const MAX_MODEL_FILE_BYTES = 64_000_000;

/** The cap on a model folder's file, by name: weights files may be large, every other file is small. */
export function modelFileLimit(name: string): number {
  return /\.(safetensors|bin|gguf|onnx(_data(_\d+)?)?)$/.test(name) ? MAX_WEIGHTS_FILE_BYTES : MAX_MODEL_FILE_BYTES;
}

/** The refusal of a model file over its cap (`size` null: a download that passed it), wherever it comes from. */
export function overLimit(where: string, size: number | null, limit: number): ModelSourceError {
  const found = size === null ? 'more than' : `${formatBytes(size)}, more than`;
  return new ModelSourceError(
    `${where} is ${found} the ${formatBytes(limit)} a model file of its kind may be; it is not a model file of a supported checkpoint.`,
  );
}

export async function readText(source: ModelSource, name: string, onProgress?: (p: FileProgress) => void): Promise<string> {
  return new TextDecoder().decode(await source.bytes(name, onProgress));
}

export async function readJson(source: ModelSource, name: string, onProgress?: (p: FileProgress) => void): Promise<unknown> {
  return parseJsonFile(source, name, await source.bytes(name, onProgress));
}

/** A JSON file's bytes, already read (to be hashed too), parsed. */
export function parseJsonFile(source: ModelSource, name: string, bytes: Uint8Array): unknown {
  const text = new TextDecoder().decode(bytes);
  // JSON.parse of deep nesting costs far more memory than the text's length.
  if (nestsDeeperThan(text, MAX_LINE_DEPTH)) {
    throw new ModelSourceError(`${source.id}/${name} nests deeper than ${MAX_LINE_DEPTH} levels; it is not a model file.`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ModelSourceError(`${source.id}/${name} is not valid JSON (${(e as Error).message}); the file may be damaged.`);
  }
}

/** A picked file with its path inside the picked folder ("config.json", "checkpoint-500/config.json"). */
export interface PickedModelFile {
  path: string;
  file: Blob;
}

/**
 * A picked file's path inside the folder it was picked with: webkitRelativePath less the folder's
 * own name, or the file's name when it was picked alone. File objects lose webkitRelativePath when
 * posted to a worker, so the page computes this before it posts them.
 */
export function pickedModelFiles(files: readonly { name: string; webkitRelativePath?: string }[]): PickedModelFile[] {
  return files.map((f) => {
    const rel = f.webkitRelativePath;
    return { path: rel && rel.includes('/') ? rel.slice(rel.indexOf('/') + 1) : f.name, file: f as unknown as Blob };
  });
}

/**
 * Files picked with <input type=file webkitdirectory> or dropped on the page, by their path in the
 * folder: a nested checkpoint-500/config.json is not the folder's config.json.
 */
export class FileListSource implements ModelSource {
  private readonly files = new Map<string, Blob>();
  readonly id: string;

  constructor(files: Iterable<PickedModelFile>, id = 'picked files') {
    for (const f of files) this.files.set(f.path, f.file);
    this.id = id;
  }

  async has(name: string): Promise<boolean> {
    return this.files.has(name);
  }

  async bytes(name: string, onProgress?: (p: FileProgress) => void): Promise<Uint8Array> {
    const f = this.files.get(name);
    if (!f) throw new ModelSourceError(`${name} is not among the picked files; pick the whole model folder.`);
    const limit = modelFileLimit(name);
    if (f.size > limit) throw overLimit(`${this.id}/${name}`, f.size, limit);
    const out = new Uint8Array(await f.arrayBuffer());
    onProgress?.({ file: name, loaded: out.byteLength, total: out.byteLength, fromCache: false });
    return out;
  }
}

/** A hub model id ("HuggingFaceTB/SmolLM2-135M-Instruct") or a base URL ending in /resolve/main. */
export function hubBaseUrl(idOrUrl: string, revision = DEFAULT_REVISION, endpoint = DEFAULT_HUB_ENDPOINT): string {
  if (/^https?:\/\//.test(idOrUrl)) return idOrUrl.replace(/\/+$/, '');
  return `${endpoint}/${hubRepo(idOrUrl)}/resolve/${revisionSegment(revision)}`;
}

function hubRepo(id: string): string {
  if (!HUB_REPO_ID.test(id)) throw new ModelSourceError(`"${id}" is not a hub model id (owner/name) or an https URL.`);
  return id;
}

/** How often a download may be redirected (the hub sends large files to its CDN once). */
const MAX_REDIRECTS = 5;

export interface HubSourceOptions {
  fetchFn?: typeof fetch;
  /** The page's Cache Storage (the default where there is one); null: none. Unused when `store` is given. */
  cacheStorage?: CacheStorage | null;
  /** Where downloaded files are kept (Node: the Hugging Face cache on disk); replaces Cache Storage. */
  store?: HubStore;
  /** A branch, tag or commit; absent: main. A branch or tag is asked of the hub, a commit is used as it is. */
  revision?: string;
  /** Sent as a Bearer token to the hub's own host only, never to a host it redirects to. */
  token?: string;
  /** The hub's base URL (HF_ENDPOINT); absent: huggingface.co. */
  endpoint?: string;
  /** Never ask the hub which commit a revision is: take the one the store kept (HF_HUB_OFFLINE). */
  offline?: boolean;
}

/**
 * Downloads from the hub with progress and keeps each file in a store, so a model downloads once.
 * A hub id is read at one commit: the revision's, asked of the hub once, before the first file.
 */
export class HubSource implements ModelSource {
  readonly id: string;
  private readonly endpoint: string;
  private readonly revision: string;
  private snapshot: Promise<{ base: string; commit: string | null }> | null = null;
  private resolved: string | null = null;

  constructor(
    idOrUrl: string,
    private readonly options: HubSourceOptions = {},
  ) {
    this.id = idOrUrl;
    this.endpoint = (options.endpoint ?? DEFAULT_HUB_ENDPOINT).replace(/\/+$/, '');
    this.revision = checkRevision(options.revision ?? DEFAULT_REVISION);
    if (!/^https?:\/\//.test(idOrUrl)) hubRepo(idOrUrl);
    else if (options.revision !== undefined)
      throw new ModelSourceError(`${idOrUrl} is a URL, which names its files itself; a revision applies to a hub model id.`);
  }

  /** The commit the files were read at, once one was read; null for a URL, which has none. */
  commit(): string | null {
    return this.resolved;
  }

  private get store(): HubStore | null {
    if (this.options.store) return this.options.store;
    const caches = this.options.cacheStorage !== undefined ? this.options.cacheStorage : typeof globalThis.caches === 'undefined' ? null : globalThis.caches;
    return caches ? cacheStorageStore(caches) : null;
  }

  private file(name: string): Promise<HubFile> {
    this.snapshot ??= this.resolve().catch((e: unknown) => {
      // A failed lookup is not remembered: the next call asks again.
      this.snapshot = null;
      throw e;
    });
    return this.snapshot.then(({ base, commit }) => ({ url: `${base}/${name}`, name, snapshot: commit ? { repo: this.id, commit } : null }));
  }

  private async resolve(): Promise<{ base: string; commit: string | null }> {
    if (/^https?:\/\//.test(this.id)) return { base: hubBaseUrl(this.id), commit: null };
    const commit = await this.commitOf(this.id, this.revision);
    this.resolved = commit;
    return { base: hubBaseUrl(this.id, commit, this.endpoint), commit };
  }

  private async commitOf(repo: string, revision: string): Promise<string> {
    if (COMMIT.test(revision)) return revision;
    const store = this.store;
    const kept = () => store?.ref?.(repo, revision) ?? Promise.resolve(null);
    if (this.options.offline) {
      const commit = await kept();
      if (!commit)
        throw new ModelSourceError(
          `HF_HUB_OFFLINE is set and ${repo} at ${revision} was never downloaded here; unset it or give --revision COMMIT of a cached one.`,
        );
      return commit;
    }
    let unreachable = false;
    const fetchFn = (url: string, init?: RequestInit) =>
      this.fetch(url, init).catch((e: unknown) => {
        unreachable = true;
        throw e;
      });
    let commit: string;
    try {
      commit = await resolveCommit(repo, revision, { endpoint: this.endpoint, fetchFn });
    } catch (e) {
      // Off the network, the commit this revision was last downloaded at is what the store has.
      const fallback = unreachable ? await kept() : null;
      if (fallback) return fallback;
      throw e;
    }
    await store?.saveRef?.(repo, revision, commit);
    return commit;
  }

  async has(name: string): Promise<boolean> {
    const file = await this.file(name);
    const store = this.store;
    if (await store?.holds(file)) return true;
    if (await store?.isAbsent?.(file)) return false;
    const res = await this.fetch(file.url, { method: 'HEAD' });
    const there = res.ok && !isWebPage(res);
    if (!there && res.status === 404) await store?.markAbsent?.(file);
    return there;
  }

  /** fetch, with the token on the hub's own host only: redirects are followed here so none carries it elsewhere. */
  private async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const fetchFn = this.options.fetchFn ?? fetch;
    const token = this.options.token;
    const hub = new URL(this.endpoint).origin;
    try {
      if (!token) return await fetchFn(url, init);
      let at = url;
      for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        const headers = new Headers(init.headers);
        if (new URL(at).origin === hub) headers.set('authorization', `Bearer ${token}`);
        const res = await fetchFn(at, { ...init, headers, redirect: 'manual' });
        const location = res.headers.get('location');
        if (res.status < 300 || res.status >= 400 || !location) return res;
        void res.body?.cancel().catch(() => {});
        at = new URL(location, at).href;
      }
    } catch (e) {
      throw new ModelSourceError(`could not reach ${url} (${(e as Error).message}); check the network or load the model from a folder.`);
    }
    throw new ModelSourceError(`${url} redirected more than ${MAX_REDIRECTS} times; check HF_ENDPOINT or the URL.`);
  }

  async bytes(name: string, onProgress?: (p: FileProgress) => void): Promise<Uint8Array> {
    const file = await this.file(name);
    const { url } = file;
    const store = this.store;
    const cached = await store?.read(file);
    if (cached) {
      onProgress?.({ file: name, loaded: cached.byteLength, total: cached.byteLength, fromCache: true });
      return cached;
    }
    if (file.snapshot && store?.download) return this.downloadInto(store.download.bind(store), { ...file, snapshot: file.snapshot }, onProgress);
    const res = await this.fetch(url);
    if (!res.ok) throw downloadFailed(url, res.status);
    if (isWebPage(res)) {
      void res.body?.cancel();
      throw new ModelSourceError(`${url} is not there: the server answered with a web page instead of the file. Check the model id or URL.`);
    }
    const declared = Number(res.headers.get('content-length'));
    const total = Number.isSafeInteger(declared) && declared > 0 ? declared : null;
    const limit = modelFileLimit(name);
    let out: Uint8Array;
    try {
      out = await readBody(res, { maxBytes: limit, onProgress: (loaded) => onProgress?.({ file: name, loaded, total, fromCache: false }) });
    } catch (e) {
      if (e instanceof BodyTooLargeError) throw overLimit(url, total !== null && total > limit ? total : null, limit);
      throw new ModelSourceError(`downloading ${url} failed (${(e as Error).message}); check the network and try again.`);
    }
    if (total !== null && out.byteLength !== total) {
      throw new ModelSourceError(`${url}: got ${out.byteLength} of ${total} bytes; the download was cut off, try again.`);
    }
    onProgress?.({ file: name, loaded: out.byteLength, total: out.byteLength, fromCache: false });
    await store?.write?.(file, out, res.headers.get('etag'));
    return out;
  }

  /**
   * A file downloaded by a store that downloads itself (@huggingface/hub into the Hugging Face
   * cache), every request of it through `this.fetch` (HF_TOKEN to the hub's host only; the library
   * is never given the token) and one byte budget: the file's cap, for all its bodies together, a
   * Content-Length over what is left refused before a byte is read.
   */
  private async downloadInto(
    download: NonNullable<HubStore['download']>,
    file: HubFile & { snapshot: NonNullable<HubFile['snapshot']> },
    onProgress?: (p: FileProgress) => void,
  ): Promise<Uint8Array> {
    const limit = modelFileLimit(file.name);
    let spent = 0;
    let loaded = 0;
    // The library turns a failed body into its message alone; the first refusal here is what is thrown.
    let refusal: Error | null = null;
    const refuse = (e: Error) => (refusal ??= e);
    const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const res = await this.fetch(url, init).catch((e: Error) => Promise.reject(refuse(e)));
      // The library's probes (the paths-info API, a Range of bytes 0-0) are not the file's bytes.
      const probe = url.includes('/api/') || new Headers(init?.headers).get('range') === 'bytes=0-0';
      if (res.ok && !probe && isWebPage(res)) {
        void res.body?.cancel();
        throw refuse(new ModelSourceError(`${url} is not there: the server answered with a web page instead of the file. Check the model id.`));
      }
      // The file's size as the library's probe learns it (a Xet file's X-Linked-Size, a range's total): over the cap, nothing more is asked.
      const size = Number(res.headers.get('x-linked-size') ?? res.headers.get('content-range')?.split('/').pop() ?? NaN);
      if (size > limit) {
        void res.body?.cancel().catch(() => {});
        throw refuse(overLimit(file.url, size, limit));
      }
      const declared = Number(res.headers.get('content-length'));
      const total = !probe && res.status === 200 && Number.isSafeInteger(declared) && declared > 0 ? declared : null;
      let seenHere = 0;
      try {
        // Bodies may overlap (the library may read a file in parallel ranges): each counts as its bytes pass.
        return cappedResponse(res, limit - spent, (seen) => {
          spent += seen - seenHere;
          if (!probe) loaded += seen - seenHere;
          seenHere = seen;
          if (spent > limit) throw refuse(overLimit(file.url, null, limit));
          if (!probe) onProgress?.({ file: file.name, loaded, total, fromCache: false });
        });
      } catch (e) {
        throw refuse(e instanceof BodyTooLargeError ? overLimit(file.url, declared > limit ? declared : null, limit) : (e as Error));
      }
    }) as typeof fetch;
    try {
      const out = await download(file, { endpoint: this.endpoint, fetch: fetchFn });
      onProgress?.({ file: file.name, loaded: out.byteLength, total: out.byteLength, fromCache: false });
      return out;
    } catch (e) {
      if (refusal) throw refusal;
      if (e instanceof BodyTooLargeError) throw overLimit(file.url, null, limit);
      if (e instanceof ModelSourceError) throw e;
      const status = (e as { statusCode?: unknown }).statusCode;
      // The library's HubApiError, for an answer that is not OK.
      if (typeof status === 'number') throw downloadFailed(file.url, status);
      throw new ModelSourceError(`downloading ${file.url} failed (${(e as Error).message}); check the network and try again.`);
    }
  }
}

/** The refusal of a download the server answered with `status`, not OK. */
function downloadFailed(url: string, status: number): ModelSourceError {
  const hint = status === 401 || status === 403 ? ' The model may be gated: set HF_TOKEN, or load it from a folder instead.' : '';
  return new ModelSourceError(`downloading ${url} failed with HTTP ${status}.${hint}`);
}

/**
 * Static hosts and single-page-app servers answer an unknown path with their index.html: no model
 * file is a web page, so such an answer means the file is not there (and is never cached).
 */
function isWebPage(res: Response): boolean {
  return (res.headers.get('content-type') ?? '').startsWith('text/html');
}
