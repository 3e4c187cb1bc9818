/**
 * The one reader of downloaded bodies (hub and URL model files, endpoint responses, dataset
 * pages), in the page and in Node. A server decides how much it sends and what its
 * Content-Length says: an endless body, or a header claiming 1e12 bytes, must cost no more
 * than the cap. The body is streamed and refused as soon as it passes `maxBytes`; memory
 * follows the bytes that arrived (the buffer at most doubles past them), never the header,
 * which only says early that a body is over the cap and how large a grown buffer need be.
 */
import { formatBytes } from '../base/bytes';

/** A body larger than its cap; not worth retrying, since the same server would send the same. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the body is larger than ${formatBytes(limit)}`);
    this.name = 'BodyTooLargeError';
  }
}

export interface ReadBodyOptions {
  maxBytes: number;
  /** Keep the first maxBytes and drop the rest instead of refusing (error bodies quoted in a message). */
  truncate?: boolean;
  /** Bytes received so far, after every chunk. */
  onProgress?: (loaded: number) => void;
}

/** The first buffer: small, so a lying header or an empty body costs nothing. */
const FIRST_BUFFER = 64 * 1024;

/**
 * The response's body as bytes, at most `maxBytes` of them.
 *
 * @throws BodyTooLargeError when the declared or received size passes maxBytes (unless truncate)
 */
export async function readBody(response: Response, o: ReadBodyOptions): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length'));
  const known = Number.isSafeInteger(declared) && declared >= 0 ? declared : null;
  if (!o.truncate && known !== null && known > o.maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new BodyTooLargeError(o.maxBytes);
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  let buf = new Uint8Array(0);
  let loaded = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let chunk = value;
      if (loaded + chunk.byteLength > o.maxBytes) {
        await reader.cancel().catch(() => {});
        if (!o.truncate) throw new BodyTooLargeError(o.maxBytes);
        chunk = chunk.subarray(0, o.maxBytes - loaded);
      }
      const need = loaded + chunk.byteLength;
      if (need > buf.byteLength) {
        // Doubling, within the cap, and within the declared size once the bytes reach toward it.
        let size = Math.min(o.maxBytes, Math.max(FIRST_BUFFER, buf.byteLength * 2, need));
        if (known !== null && known >= need) size = Math.min(size, known);
        const bigger = new Uint8Array(size);
        bigger.set(buf.subarray(0, loaded));
        buf = bigger;
      }
      buf.set(chunk, loaded);
      loaded = need;
      o.onProgress?.(loaded);
      if (loaded >= o.maxBytes && o.truncate) break;
    }
  } finally {
    reader.releaseLock();
  }
  return loaded === buf.byteLength ? buf : buf.subarray(0, loaded);
}

/** readBody as UTF-8 text. */
export async function readBodyText(response: Response, o: ReadBodyOptions): Promise<string> {
  return new TextDecoder().decode(await readBody(response, o));
}

/**
 * `response` with its body cut off past `maxBytes` (BodyTooLargeError), for bodies a library
 * reads itself (transformers.js and @huggingface/hub through their fetch): the same cap, enforced
 * as the bytes pass, with the bytes received so far told before each chunk passes.
 *
 * @throws BodyTooLargeError at once when the declared size is over the cap
 */
export function cappedResponse(response: Response, maxBytes: number, onProgress?: (loaded: number) => void): Response {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isSafeInteger(declared) && declared > maxBytes) {
    void response.body?.cancel().catch(() => {});
    throw new BodyTooLargeError(maxBytes);
  }
  if (!response.body) return response;
  let seen = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) controller.error(new BodyTooLargeError(maxBytes));
        else {
          // Before the chunk passes, so a caller's own budget (onProgress throwing) stops it too.
          onProgress?.(seen);
          controller.enqueue(chunk);
        }
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
