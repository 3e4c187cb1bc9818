/**
 * The capped body reader: the cap holds against an endless body and a lying Content-Length, and
 * memory follows the bytes that arrived, never the header.
 */
import { describe, expect, it } from 'vitest';
import { BodyTooLargeError, cappedResponse, readBody } from './read-body';

/** A response of `chunks` chunks of `size` bytes (endless when chunks is Infinity), with `headers`. */
function response(chunks: number, size: number, headers: Record<string, string> = {}): { res: Response; pulled: () => number } {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= chunks) controller.close();
      else {
        pulled++;
        controller.enqueue(new Uint8Array(size).fill(0x61));
      }
    },
  });
  return { res: new Response(body, { headers }), pulled: () => pulled };
}

describe('readBody', () => {
  it('reads a body within its cap, whatever its chunks', async () => {
    const { res } = response(5, 1000);
    const out = await readBody(res, { maxBytes: 10_000 });
    expect(out.byteLength).toBe(5000);
    expect(out.every((b) => b === 0x61)).toBe(true);
  });

  it('stops an endless body one chunk past the cap', async () => {
    const { res, pulled } = response(Infinity, 64 * 1024);
    await expect(readBody(res, { maxBytes: 1_000_000 })).rejects.toThrow(BodyTooLargeError);
    expect(pulled()).toBeLessThanOrEqual(17);
  });

  it('refuses a declared size over the cap without reading, and allocates nothing from a lying header', async () => {
    const liar = response(Infinity, 1000, { 'content-length': String(1e12) });
    await expect(readBody(liar.res, { maxBytes: 1_000_000 })).rejects.toThrow('the body is larger than 1.0 MB');
    expect(liar.pulled()).toBeLessThanOrEqual(1);
    // Under the cap but far above what arrives: the buffer follows the 10 bytes, not the 900 kB.
    const small = response(1, 10, { 'content-length': '900000' });
    const out = await readBody(small.res, { maxBytes: 1_000_000 });
    expect(out.byteLength).toBe(10);
    expect(out.buffer.byteLength).toBeLessThanOrEqual(64 * 1024);
  });

  it('with truncate, keeps the first maxBytes of a longer body', async () => {
    const { res } = response(Infinity, 1000);
    const out = await readBody(res, { maxBytes: 2500, truncate: true });
    expect(out.byteLength).toBe(2500);
  });

  it('cappedResponse holds a body a library reads itself to the same cap, as the bytes pass', async () => {
    const within = cappedResponse(response(3, 100, { 'content-type': 'application/json' }).res, 1000);
    expect(within.headers.get('content-type')).toBe('application/json');
    expect((await within.arrayBuffer()).byteLength).toBe(300);
    await expect(cappedResponse(response(Infinity, 100).res, 1000).arrayBuffer()).rejects.toThrow(BodyTooLargeError);
    expect(() => cappedResponse(response(1, 10, { 'content-length': String(1e12) }).res, 1000)).toThrow('the body is larger than 1.0 kB');
  });
});
