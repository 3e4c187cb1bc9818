/**
 * A model file the server answers with a web page is not there: static hosts and the preview
 * server answer an unknown path (the demo model's absent chat_template.jinja) with index.html.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { ModelSourceError } from './errors';
import { HubSource } from './source';
import { Tokenizer } from './tokenizer';

const APP_PAGE = '<!doctype html><html><head><title>Next-State Lab</title></head><body><div id="app"></div></body></html>';

/** A server that holds `files` and answers every other path with the app's page, as vite preview does. */
function spaServer(files: Record<string, string>, seen: string[] = []): typeof fetch {
  return (async (input: string, init?: RequestInit) => {
    const name = input.split('/').pop()!;
    seen.push(`${init?.method ?? 'GET'} ${name}`);
    const body = files[name] ?? APP_PAGE;
    const type = name in files ? 'application/json' : 'text/html';
    return new Response(init?.method === 'HEAD' ? null : body, { status: 200, headers: { 'content-type': type } });
  }) as typeof fetch;
}

const memoryCache = () => {
  const store = new Map<string, Response>();
  const cache = { match: async (u: string) => store.get(u)?.clone(), put: async (u: string, r: Response) => void store.set(u, r) };
  return { store, cacheStorage: { open: async () => cache } as unknown as CacheStorage };
};

describe('a model file answered with a web page', () => {
  it('is absent to has(), refused by bytes() in one line, and never cached', async () => {
    const { store, cacheStorage } = memoryCache();
    const source = new HubSource('https://lab.example/models/storyteller-demo', { fetchFn: spaServer({ 'config.json': '{}' }), cacheStorage });
    expect(await source.has('config.json')).toBe(true);
    expect(await source.has('chat_template.jinja')).toBe(false);
    await expect(source.bytes('tokenizer.json')).rejects.toThrow(ModelSourceError);
    await expect(source.bytes('tokenizer.json')).rejects.toThrow(
      'https://lab.example/models/storyteller-demo/tokenizer.json is not there: the server answered with a web page instead of the file. Check the model id or URL.',
    );
    expect([...store.keys()].some((u) => u.endsWith('tokenizer.json'))).toBe(false);
  });

  it('leaves a story model without a chat template rather than with the page as its template', async () => {
    const dir = dataPath('models/stories260K');
    const files = Object.fromEntries(['config.json', 'tokenizer.json', 'tokenizer_config.json'].map((f) => [f, readFileSync(`${dir}/${f}`, 'utf8')]));
    const seen: string[] = [];
    const source = new HubSource('https://lab.example/models/stories', { fetchFn: spaServer(files, seen), cacheStorage: null });
    const tokenizer = await Tokenizer.load(source);
    expect(seen).toContain('HEAD chat_template.jinja');
    expect(seen).not.toContain('GET chat_template.jinja');
    expect(tokenizer.hasChatTemplate).toBe(false);
  });
});
