/**
 * Sharing a run as a link: `#/open?url=ADDRESS` fetches the `.nsrun` file at ADDRESS and imports
 * it exactly as a dropped file (the importer's size limits and validation, a read-only run). This
 * module only turns the address into a File; the page hands that File to the importer.
 */
import { formatBytes } from '../../base/bytes';
import { DEFAULT_MAX_BYTES, RUN_FILE_EXTENSION } from '../../storage/index';
import { tooLarge } from '../../storage/streams';

export class SharedLinkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SharedLinkError';
  }
}

/** The setting that remembers where an imported run was fetched from, by run id. */
export const runSourceSetting = (runId: string) => `run-source:${runId}`;

/** The address a `#/open?url=…` hash names; null for any other hash. */
export function sharedRunAddress(hash: string): string | null {
  const m = /^#\/open\?(.*)$/.exec(hash);
  if (!m) return null;
  return new URLSearchParams(m[1]).get('url') ?? '';
}

/** The link that opens the run file at `fileUrl` in the lab at `lab` (this page by default). */
export function shareLink(fileUrl: string, lab: string = location.href): string {
  const page = new URL(lab);
  page.hash = `#/open?${new URLSearchParams({ url: fileUrl })}`;
  return page.href;
}

/** Whether a URL's hostname is this machine: the one place plain http is safe to read from. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The run file at `address` (absolute, or relative to `base`), as a File named after its last
 * path segment, with the address it came from after redirects (`url`) and the one the link named. Reads at most `maxBytes` (the importer's limit) and refuses a file the server
 * says is larger before downloading it.
 *
 * @throws SharedLinkError for an address that is not an https URL (http only to this machine),
 *   a fetch the server does not allow (CORS) or that fails, and a non-2xx answer
 * @throws RunFileError (the importer's) for a file over the size limit
 */
/**
 * A run file's address, checked: absolute or relative to `base`, https (plain http only from this
 * machine or this page's own origin, where nothing between can change it).
 *
 * @throws SharedLinkError naming what is wrong with it
 */
export function runFileAddress(address: string, base: string = location.href): URL {
  if (!address) throw new SharedLinkError('The link names no run file: it must end in #/open?url= and the address of a .nsrun file.');
  let url: URL;
  try {
    url = new URL(address, base);
  } catch {
    throw new SharedLinkError(`"${address}" is not an address: the link must end in #/open?url= and the address of a .nsrun file.`);
  }
  checkTransport(url);
  return url;
}

function checkTransport(url: URL): void {
  // A file from anywhere but over plain http could be changed on its way here.
  const sameOrigin = typeof location !== 'undefined' && url.origin === location.origin;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && (isLoopback(url.hostname) || sameOrigin))) {
    throw new SharedLinkError(`${url.href} is not an https address: share run files over https (plain http only from this machine).`);
  }
}

export async function fetchSharedRun(
  address: string,
  o: { base?: string; maxBytes?: number; fetch?: typeof fetch; signal?: AbortSignal } = {},
): Promise<{ file: File; url: string; named: string }> {
  const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
  const url = runFileAddress(address, o.base ?? location.href);
  let response: Response;
  try {
    // No cookies or credentials go with it: the link may come from anyone.
    response = await (o.fetch ?? fetch)(url.href, { credentials: 'omit', mode: 'cors', redirect: 'follow', signal: o.signal });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new SharedLinkError(
      `Could not fetch ${url.href} (${(e as Error).message}). The server must allow this site to read it (CORS: Access-Control-Allow-Origin), or download the file and drop it on Runs.`,
    );
  }
  // Where redirects ended is where the file came from: that, not the address in the link, is shown.
  const final = response.url ? new URL(response.url) : url;
  checkTransport(final);
  if (!response.ok)
    throw new SharedLinkError(
      `${url.href} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}: check the link, or ask for the file itself.`,
    );
  const declared = Number(response.headers.get('content-length'));
  if (declared > maxBytes) {
    void response.body?.cancel();
    throw tooLarge(formatBytes(declared), maxBytes);
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        void reader.cancel();
        throw tooLarge(`more than ${formatBytes(maxBytes)} downloaded`, maxBytes);
      }
      chunks.push(value);
    }
  }
  let name = final.pathname.split('/').pop() ?? '';
  try {
    name = decodeURIComponent(name);
  } catch {
    // Not percent-encoding: the name as written.
  }
  return {
    file: new File(chunks as BlobPart[], name || `shared${RUN_FILE_EXTENSION}`, { type: 'application/octet-stream' }),
    url: final.href,
    named: url.href,
  };
}
