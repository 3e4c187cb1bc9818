/**
 * Where model files come from: a folder on disk (Node, see source-node.ts), files the person
 * picked in the browser, or the Hugging Face hub with streamed download and Cache Storage.
 * The loader sees only this interface.
 */
import { ModelSourceError } from './errors';

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

export async function readText(source: ModelSource, name: string): Promise<string> {
  return new TextDecoder().decode(await source.bytes(name));
}

export async function readJson(source: ModelSource, name: string): Promise<unknown> {
  return parseJsonFile(source, name, await source.bytes(name));
}

/** A JSON file's bytes, already read (to be hashed too), parsed. */
export function parseJsonFile(source: ModelSource, name: string, bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (e) {
    throw new ModelSourceError(`${source.id}/${name} is not valid JSON (${(e as Error).message}); the file may be damaged.`);
  }
}

/** Files picked with <input type=file webkitdirectory> or dropped on the page. */
export class FileListSource implements ModelSource {
  private readonly files = new Map<string, Blob>();
  readonly id: string;

  constructor(files: Iterable<File>, id = 'picked files') {
    // A picked folder arrives with paths like "Qwen3-0.6B/config.json"; match by base name.
    for (const f of files) this.files.set(f.name.split('/').pop()!, f);
    this.id = id;
  }

  async has(name: string): Promise<boolean> {
    return this.files.has(name);
  }

  async bytes(name: string, onProgress?: (p: FileProgress) => void): Promise<Uint8Array> {
    const f = this.files.get(name);
    if (!f) throw new ModelSourceError(`${name} is not among the picked files; pick the whole model folder.`);
    const out = new Uint8Array(await f.arrayBuffer());
    onProgress?.({ file: name, loaded: out.byteLength, total: out.byteLength, fromCache: false });
    return out;
  }
}

/** A hub model id ("HuggingFaceTB/SmolLM2-135M-Instruct") or a base URL ending in /resolve/main. */
export function hubBaseUrl(idOrUrl: string, revision = 'main'): string {
  if (/^https?:\/\//.test(idOrUrl)) return idOrUrl.replace(/\/+$/, '');
  if (!/^[\w.-]+\/[\w.-]+$/.test(idOrUrl)) {
    throw new ModelSourceError(`"${idOrUrl}" is not a hub model id (owner/name) or an https URL.`);
  }
  return `https://huggingface.co/${idOrUrl}/resolve/${revision}`;
}

const CACHE_NAME = 'nextstate-models-v1';

/**
 * Downloads from the hub with progress, and keeps each file in Cache Storage so a model
 * downloads once. `fetchFn` and `caches` are injectable for tests and for Node.
 */
export class HubSource implements ModelSource {
  readonly id: string;
  private readonly base: string;

  constructor(
    idOrUrl: string,
    private readonly options: { fetchFn?: typeof fetch; cacheStorage?: CacheStorage | null; revision?: string } = {},
  ) {
    this.id = idOrUrl;
    this.base = hubBaseUrl(idOrUrl, options.revision);
  }

  private get cacheStorage(): CacheStorage | null {
    if (this.options.cacheStorage !== undefined) return this.options.cacheStorage;
    return typeof caches === 'undefined' ? null : caches;
  }

  private url(name: string): string {
    return `${this.base}/${name}`;
  }

  async has(name: string): Promise<boolean> {
    const cache = await this.cacheStorage?.open(CACHE_NAME);
    if (await cache?.match(this.url(name))) return true;
    const res = await this.fetch(this.url(name), { method: 'HEAD' });
    return res.ok && !isWebPage(res);
  }

  private async fetch(url: string, init?: RequestInit): Promise<Response> {
    try {
      return await (this.options.fetchFn ?? fetch)(url, init);
    } catch (e) {
      throw new ModelSourceError(`could not reach ${url} (${(e as Error).message}); check the network or load the model from a folder.`);
    }
  }

  async bytes(name: string, onProgress?: (p: FileProgress) => void): Promise<Uint8Array> {
    const url = this.url(name);
    const cache = await this.cacheStorage?.open(CACHE_NAME);
    const cached = await cache?.match(url);
    if (cached) {
      const out = new Uint8Array(await cached.arrayBuffer());
      onProgress?.({ file: name, loaded: out.byteLength, total: out.byteLength, fromCache: true });
      return out;
    }
    const res = await this.fetch(url);
    if (!res.ok) {
      const hint = res.status === 401 || res.status === 403 ? ' The model may be gated: load it from a folder instead.' : '';
      throw new ModelSourceError(`downloading ${url} failed with HTTP ${res.status}.${hint}`);
    }
    if (isWebPage(res)) {
      void res.body?.cancel();
      throw new ModelSourceError(`${url} is not there: the server answered with a web page instead of the file. Check the model id or URL.`);
    }
    const total = Number(res.headers.get('content-length')) || null;
    const out = await readStream(res, (loaded) => onProgress?.({ file: name, loaded, total, fromCache: false }), total);
    if (total !== null && out.byteLength !== total) {
      throw new ModelSourceError(`${url}: got ${out.byteLength} of ${total} bytes; the download was cut off, try again.`);
    }
    await cache?.put(url, new Response(out.slice().buffer, { headers: { 'content-type': 'application/octet-stream' } }));
    return out;
  }
}

/**
 * Static hosts and single-page-app servers answer an unknown path with their index.html: no model
 * file is a web page, so such an answer means the file is not there (and is never cached).
 */
function isWebPage(res: Response): boolean {
  return (res.headers.get('content-type') ?? '').startsWith('text/html');
}

async function readStream(res: Response, onChunk: (loaded: number) => void, total: number | null): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(await res.arrayBuffer());
  const reader = res.body.getReader();
  // One preallocated buffer when the size is known: a 1 GB model must not be held twice.
  let buf = new Uint8Array(total ?? 1 << 20);
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (loaded + value.byteLength > buf.byteLength) {
      const bigger = new Uint8Array(Math.max(buf.byteLength * 2, loaded + value.byteLength));
      bigger.set(buf.subarray(0, loaded));
      buf = bigger;
    }
    buf.set(value, loaded);
    loaded += value.byteLength;
    onChunk(loaded);
  }
  return buf.subarray(0, loaded);
}
