import { afterEach, describe, expect, inject, it } from 'vitest';
import { commands } from 'vitest/browser';
import { makePreset } from '../../rl/presets';
import type { RunRecord } from '../../rl/records';
import { RunStore } from '../../storage/index';
import { WatchedRun } from '../lab/watched.svelte';
import WatchView from './WatchView.svelte';
import { HOSTILE, hostileTurn, recordedRun, render } from '../../../test/support/views/testing';

const ROOT = 'http://127.0.0.1:30000';

const stores: RunStore[] = [];
/** A run store of its own for each watch: what the lab keeps of it. */
function newStore(): RunStore {
  const store = new RunStore({ name: `watch-${Date.now()}-${Math.random().toString(36).slice(2)}` });
  stores.push(store);
  return store;
}
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});
const runEvent = {
  type: 'run',
  label: 'serve Qwen3-0.6B (combined)',
  created: 1_700_000_000_000,
  config: {
    preset: makePreset('combined'),
    scenario: { id: 'talk' },
    models: { policy: { model: 'Qwen/Qwen3-0.6B', backend: 'cpu' } },
    sampling: { policy: { maxNewTokens: 64 } },
  },
};
const event = (e: object) => `data: ${JSON.stringify(e)}\n\n`;

/**
 * A server's record feed, played by the test: each connection gets the run event and then what
 * the test sends, until the test drops it. Records it was asked for from `from` on.
 */
class FakeServer {
  asked: number[] = [];
  private open: ReadableStreamDefaultController<Uint8Array> | null = null;
  private readonly encoder = new TextEncoder();

  fetch = (async (url: string) => {
    this.asked.push(Number(new URL(url).searchParams.get('from')));
    return new Response(
      new ReadableStream<Uint8Array>({
        start: (c) => {
          this.open = c;
          c.enqueue(this.encoder.encode(event(runEvent)));
        },
      }),
      { headers: { 'content-type': 'text/event-stream', 'access-control-allow-origin': '*' } },
    );
  }) as typeof fetch;

  send(from: number, records: RunRecord[]): void {
    this.open!.enqueue(this.encoder.encode(event({ type: 'records', from, records })));
  }

  drop(): void {
    this.open!.error(new TypeError('network error'));
    this.open = null;
  }
}

describe('watching a server run', () => {
  it('shows the run’s charts, conversations and tokens as records arrive, says when the connection is lost, and carries on', async () => {
    const server = new FakeServer();
    const watched = new WatchedRun(ROOT, newStore(), { fetch: server.fetch, backoffMs: [50] });
    using view = render(WatchView, { watched });
    watched.connect();
    const t = view.target;
    const line = () => t.querySelector('[data-testid="watch-line"]')!.textContent;
    const summary = () => t.querySelector('[data-testid="run-summary"]')?.textContent?.replace(/\s+/g, ' ');

    await expect.poll(line).toBe(`Live from ${ROOT}: new records show as the server commits them.`);
    await expect.poll(() => t.querySelector('h2')?.textContent).toBe('serve Qwen3-0.6B (combined)');
    expect(t.querySelector('[data-testid="read-only"]')).not.toBeNull();
    // The OpenClaw entry is filled from the server and its run.
    const entry = JSON.parse(t.querySelector('[data-testid="openclaw-entry"]')!.textContent!);
    expect(entry.models.providers.nextstate).toMatchObject({ baseUrl: `${ROOT}/v1`, models: [{ id: 'Qwen3-0.6B', maxTokens: 64 }] });
    expect(entry.agents.defaults.model.primary).toBe('nextstate/Qwen3-0.6B');

    const all = recordedRun();
    const half = 40;
    server.send(1, all.slice(0, half));
    await expect.poll(() => t.querySelectorAll('[data-session]').length).toBeGreaterThan(0);
    const firstSessions = t.querySelectorAll('[data-session]').length;
    expect(t.querySelector('.uplot, canvas')).not.toBeNull();

    // The connection drops: one line says so, and the watcher asks again from the next record.
    server.drop();
    await expect.poll(line).toMatch(new RegExp(`^Lost the connection to ${ROOT.replace(/\./g, '\\.')}: .*retrying in 0 s`));
    await expect.poll(() => server.asked).toEqual([1, half + 1]);
    await expect.poll(line).toMatch(/^Live from/);
    // A repeat of what it has is skipped; the rest and a hostile turn are shown, as text.
    server.send(half - 1, all.slice(half - 2));
    // (Its evaluation record carries a field validateRecord refuses, which would stop the watch.)
    const hostile = hostileTurn().filter((r) => r.kind !== 'evaluation');
    server.send(all.length + 1, hostile);
    await expect.poll(summary).toBe('2 training steps · 2 evaluations · 6 conversations · 13 judged turns · Qwen/Qwen3-0.6B on cpu');
    expect(line()).toMatch(/^Live from/);
    expect(t.querySelectorAll('[data-session]').length).toBeGreaterThan(firstSessions);
    expect(t.textContent).toContain(HOSTILE);
    expect(t.querySelector('script, img[src="x"], b')).toBeNull();
    expect((window as { __pwned?: number }).__pwned).toBeUndefined();
    expect(watched.records).toHaveLength(all.length + hostile.length);

    // A judged turn opens in the token view.
    const inspect = [...t.querySelectorAll('button')].find((b) => b.textContent?.includes('Inspect tokens'));
    inspect!.click();
    await expect.poll(() => t.querySelector('.token-view .meta')).not.toBeNull();
    watched.stop();
  });

  it('asks for the key when the server wants one, and sends it', async () => {
    const keys: (string | null)[] = [];
    const fetchWithKey = (async (_url: string, init: RequestInit) => {
      const key = new Headers(init.headers).get('authorization');
      keys.push(key);
      return key === 'Bearer sk-right' ? new Response(event(runEvent)) : new Response('{}', { status: 401 });
    }) as typeof fetch;
    const watched = new WatchedRun(ROOT, newStore(), { fetch: fetchWithKey, backoffMs: [10_000] });
    using view = render(WatchView, { watched });
    watched.connect();
    const t = view.target;
    await expect.poll(() => t.querySelector('[data-testid="watch-line"]')!.textContent).toContain('wants its API key');
    const input = t.querySelector<HTMLInputElement>('[data-testid="watch-key"]')!;
    input.value = 'sk-right';
    input.dispatchEvent(new Event('input', { bubbles: true }));
    t.querySelector<HTMLButtonElement>('form button[type="submit"]')!.click();
    await expect.poll(() => t.querySelector('h2')?.textContent).toBe('serve Qwen3-0.6B (combined)');
    expect(keys).toEqual([null, 'Bearer sk-right']);
    watched.stop();
  });

  it('keeps a real nextstate serve run in this browser as it arrives, and a reload asks the server only for newer records', async () => {
    const modelDir = inject('tinyModelDir');
    const model = modelDir.split('/').pop()!;
    // The server lets this page (the lab's origin here) read its records, as `--allow-origin` does for the lab.
    const root = await commands.startServe(modelDir, ['--max-tokens', '2', '--allow-origin', location.origin]);
    try {
      const chat = async (content: string) => {
        const reply = await commands.serveChat(root, { model, messages: [{ role: 'user', content }] });
        expect(reply.status).toBe(200);
      };
      const store = newStore();
      const kept: string[] = [];
      const first = new WatchedRun(root, store, { backoffMs: [50], onKept: (id) => kept.push(id) });
      {
        using view = render(WatchView, { watched: first });
        await first.connect();
        await expect.poll(() => first.status.kind).toBe('live');
        await chat('first');
        await chat('second');
        await expect.poll(() => first.records.length).toBe(2);
        expect(kept).toEqual([first.runId]);
        await expect.poll(() => view.target.querySelector('[data-testid="watch-kept"]')).not.toBeNull();
        // What the page shows was stored first, at the server's record numbers.
        const stored = await store.records(first.runId!);
        expect(stored.map((r) => r.seq)).toEqual([1, 2]);
        expect(stored.map((r) => r.record)).toEqual(first.records);
        expect(await store.getRun(first.runId!)).toMatchObject({ readOnly: true, watch: { server: root } });
        first.stop();
      }

      // A reload: the kept records show before the server is asked, and it is asked from record 3.
      await chat('while away');
      const asked: string[] = [];
      const counting = ((url: string, init: RequestInit) => {
        asked.push(new URL(url).searchParams.get('from')!);
        return fetch(url, init);
      }) as typeof fetch;
      const again = new WatchedRun(root, store, { fetch: counting, backoffMs: [50] });
      using view = render(WatchView, { watched: again });
      await again.connect();
      expect(again.runId).toBe(first.runId);
      expect(again.records).toHaveLength(2);
      await expect.poll(() => again.records.length).toBe(3);
      expect(asked).toEqual(['3']);
      await chat('third');
      await expect.poll(() => again.records.length).toBe(4);
      const contents = (await store.records(first.runId!)).map((r) => (r.record.kind === 'interaction' ? r.record.messages.at(-1)?.content : r.record.kind));
      expect(contents).toEqual(['first', 'second', 'while away', 'third']);
      await expect.poll(() => view.target.querySelectorAll('[data-session]').length).toBeGreaterThan(0);
      again.stop();
    } finally {
      await commands.stopServe(root);
    }
  });
});
