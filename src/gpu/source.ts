/**
 * Where model files come from: a folder on disk (Node, see source-node.ts), files the person
 * picked in the browser, or the Hugging Face hub with streamed download and Cache Storage.
 * The loader sees only this interface.
 */
import { formatBytes } from '../rl/bytes';
import { MAX_LINE_DEPTH, nestsDeeperThan } from '../rl/json-scan';
import { BodyTooLargeError, readBody } from './read-body';
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

export async function readText(source: ModelSource, name: string): Promise<string> {
  return new TextDecoder().decode(await source.bytes(name));
}

export async function readJson(source: ModelSource, name: string): Promise<unknown> {
  return parseJsonFile(source, name, await source.bytes(name));
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
