import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BYTES, RunFileError } from '../../storage/index';
import { fetchSharedRun, SharedLinkError, shareLink, sharedRunAddress } from './shared-link';

const BASE = 'https://lab.example/';
const gz = new Uint8Array([0x1f, 0x8b, 1, 2, 3]);

/** A fetch that answers every request with `body` and records what it was asked. */
function fakeFetch(body: BodyInit | null, init: ResponseInit = {}, seen: RequestInit[] = []): typeof fetch {
  return (async (_url: string, options: RequestInit) => {
    seen.push(options);
    return new Response(body, init);
  }) as typeof fetch;
}

describe('sharedRunAddress', () => {
  it('reads the url parameter of #/open, and nothing else', () => {
    expect(sharedRunAddress(`#/open?url=${encodeURIComponent('https://x.test/a b.nsrun?v=1')}`)).toBe('https://x.test/a b.nsrun?v=1');
    expect(sharedRunAddress('#/open?other=1')).toBe('');
    expect(sharedRunAddress('#/runs')).toBeNull();
    expect(sharedRunAddress('#/run/abc')).toBeNull();
  });

  it('round-trips through shareLink', () => {
    const link = shareLink('https://files.test/run 1.nsrun', 'https://lab.example/sub/#/runs');
    expect(link.startsWith('https://lab.example/sub/#/open?url=')).toBe(true);
    expect(sharedRunAddress(new URL(link).hash)).toBe('https://files.test/run 1.nsrun');
  });
});

describe('fetchSharedRun', () => {
  it('fetches without credentials and names the file after the address', async () => {
    const seen: RequestInit[] = [];
    const { file, url } = await fetchSharedRun('https://files.test/runs/my%20run.nsrun', { base: BASE, fetch: fakeFetch(gz, {}, seen) });
    expect(file.name).toBe('my run.nsrun');
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(gz);
    expect(url).toBe('https://files.test/runs/my%20run.nsrun');
    expect(seen[0]).toMatchObject({ credentials: 'omit', mode: 'cors' });
  });

  it('says where redirects ended, names the file from there, and refuses an end over plain http', async () => {
    const redirected = (to: string) =>
      (async () => {
        const response = new Response(gz);
        // What fetch reports after following redirects.
        Object.defineProperty(response, 'url', { value: to });
        return response;
      }) as typeof fetch;
    const got = await fetchSharedRun('https://trusted.test/go?to=x', { base: BASE, fetch: redirected('https://elsewhere.test/files/other.nsrun') });
    expect(got).toMatchObject({ url: 'https://elsewhere.test/files/other.nsrun', named: 'https://trusted.test/go?to=x' });
    expect(got.file.name).toBe('other.nsrun');
    await expect(fetchSharedRun('https://trusted.test/go', { base: BASE, fetch: redirected('http://elsewhere.test/r.nsrun') })).rejects.toThrow(
      'http://elsewhere.test/r.nsrun is not an https address',
    );
  });

  it('takes an address relative to the lab', async () => {
    const { url, file } = await fetchSharedRun('runs/', { base: BASE, fetch: fakeFetch(gz) });
    expect(url).toBe('https://lab.example/runs/');
    expect(file.name).toBe('shared.nsrun');
  });

  it('refuses what is not an https address (plain http only to this machine)', async () => {
    for (const address of ['http://files.test/r.nsrun', 'ftp://files.test/r.nsrun', 'javascript:alert(1)', 'data:application/gzip;base64,H4s=']) {
      await expect(fetchSharedRun(address, { base: BASE, fetch: fakeFetch(gz) }), address).rejects.toThrow(SharedLinkError);
    }
    await expect(fetchSharedRun('', { base: BASE, fetch: fakeFetch(gz) })).rejects.toThrow(/names no run file/);
    await expect(fetchSharedRun('http://127.0.0.1:8000/r.nsrun', { base: BASE, fetch: fakeFetch(gz) })).resolves.toBeTruthy();
  });

  it('says what to do when the server refuses or fails', async () => {
    await expect(
      fetchSharedRun('https://files.test/r.nsrun', { base: BASE, fetch: fakeFetch('no', { status: 404, statusText: 'Not Found' }) }),
    ).rejects.toThrow('https://files.test/r.nsrun answered HTTP 404 Not Found: check the link, or ask for the file itself.');
    const blocked = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof fetch;
    await expect(fetchSharedRun('https://files.test/r.nsrun', { base: BASE, fetch: blocked })).rejects.toThrow(
      /CORS: Access-Control-Allow-Origin.*drop it on Runs/,
    );
  });

  it('applies the importer limit: a declared size over it is refused unread, a stream is cut at it', async () => {
    const declared = fakeFetch(gz, { headers: { 'content-length': String(DEFAULT_MAX_BYTES + 1) } });
    const big = fetchSharedRun('https://files.test/r.nsrun', { base: BASE, fetch: declared });
    await expect(big).rejects.toThrow(RunFileError);
    await expect(big).rejects.toThrow(/larger than the import limit/);
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(new Uint8Array(1000));
      },
    });
    await expect(fetchSharedRun('https://files.test/r.nsrun', { base: BASE, maxBytes: 5000, fetch: fakeFetch(endless) })).rejects.toThrow(
      /larger than the import limit of/,
    );
    expect(pulled).toBeLessThan(10);
  });
});
