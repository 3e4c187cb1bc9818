/**
 * Hub models in Node as Hugging Face users expect: downloaded once into the standard cache
 * (HF_HOME), read at one commit (a revision asked of the hub, or pinned), with HF_TOKEN sent to
 * the hub alone. Against a mock hub on 127.0.0.1 serving the stories260K folder.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { utimes } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { getHFHubCachePath } from '@huggingface/hub';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { startStoriesHub, STORIES_REPO, type MockHub } from '../../test/support/gpu/mock-hub';
import { CpuBackend } from './cpu/backend';
import { Policy } from './policy';
import type { ModelSource } from '../models/source';
import { modelSource } from '../models/source-node';

const REPO = STORIES_REPO;
const stories = dataPath('models/stories260K');
let hub: MockHub;
let first = '';
let second = '';

beforeAll(async () => {
  ({
    hub,
    commits: [first, second],
  } = await startStoriesHub());
  hub.setRef(REPO, 'v2', second);
});
afterAll(() => hub.close());
afterEach(() => vi.unstubAllEnvs());

const freshHome = () => mkdtempSync(join(tmpdir(), 'nextstate-hfhome-'));
const envOf = (home: string, extra: Record<string, string> = {}) => ({ HF_HOME: home, HF_ENDPOINT: hub.url, ...extra });

/** The environment the hub's variables read: exactly `env`, none of this machine's own. */
function useEnv(env: Record<string, string>): void {
  for (const name of ['HF_HUB_CACHE', 'HUGGINGFACE_HUB_CACHE', 'HF_HOME', 'XDG_CACHE_HOME', 'HF_ENDPOINT', 'HF_TOKEN', 'HF_HUB_OFFLINE'])
    vi.stubEnv(name, env[name]);
}

/** Loads the model as the CLI does, and what it asked of the hub and its CDN meanwhile. */
async function load(env: Record<string, string>, revision?: string, repo = REPO): Promise<{ source: ModelSource; requests: MockHub['requests'] }> {
  useEnv(env);
  const from = hub.requests.length;
  const source = modelSource(repo, revision ? { revision } : {});
  await Policy.load(source, new CpuBackend());
  return { source, requests: hub.requests.slice(from) };
}

describe('hub models in the Hugging Face cache', () => {
  it('finds the cache where huggingface_hub does: HF_HUB_CACHE, then HF_HOME/hub, then XDG_CACHE_HOME or ~/.cache', () => {
    const cacheOf = (env: Record<string, string>) => (useEnv(env), getHFHubCachePath());
    expect(cacheOf({ HF_HUB_CACHE: '/c', HF_HOME: '/h' })).toBe('/c');
    expect(cacheOf({ HF_HOME: '/h', XDG_CACHE_HOME: '/x' })).toBe(join('/h', 'hub'));
    expect(cacheOf({ XDG_CACHE_HOME: '/x' })).toBe(join('/x', 'huggingface', 'hub'));
    expect(cacheOf({}).endsWith(join('.cache', 'huggingface', 'hub'))).toBe(true);
  });

  it('downloads once into the standard layout at the commit main names, then loads with no download', async () => {
    const home = freshHome();
    const { source, requests } = await load(envOf(home));
    expect(source.commit?.()).toBe(first);
    expect(requests[0].path).toBe(`/api/models/${REPO}/revision/main`);
    // Every file from the resolved commit, never from the moving branch.
    expect(requests.filter((r) => r.host === 'hub' && r.path.includes('/resolve/')).every((r) => r.path.includes(`/resolve/${first}/`))).toBe(true);

    const repo = join(home, 'hub', 'models--karpathy--stories260K');
    expect(readFileSync(join(repo, 'refs', 'main'), 'utf8')).toBe(first);
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json']) {
      const link = join(repo, 'snapshots', first, f);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readlinkSync(link).startsWith(join('..', '..', 'blobs'))).toBe(true);
      expect(readFileSync(link)).toEqual(readFileSync(join(stories, f)));
    }
    // Blob ids as huggingface_hub names them: the git blob id of a git file, the SHA-256 of an LFS one.
    const config = readFileSync(join(stories, 'config.json'));
    const weights = readFileSync(join(stories, 'model.safetensors'));
    expect(existsSync(join(repo, 'blobs', createHash('sha1').update(`blob ${config.byteLength}\0`).update(config).digest('hex')))).toBe(true);
    expect(existsSync(join(repo, 'blobs', createHash('sha256').update(weights).digest('hex')))).toBe(true);
    // A file the hub said is not there is remembered, so the next load need not ask.
    expect(existsSync(join(repo, '.no_exist', first))).toBe(true);

    const again = await load(envOf(home));
    expect(again.requests.map((r) => r.path)).toEqual([`/api/models/${REPO}/revision/main`]);
    const pinned = await load(envOf(home), first);
    expect(pinned.requests).toEqual([]);
    expect(pinned.source.commit?.()).toBe(first);
  });

  it('--revision pins a tag or commit; off the network a cached revision loads at the commit it last named', async () => {
    const home = freshHome();
    const tagged = await load(envOf(home), 'v2');
    expect(tagged.source.commit?.()).toBe(second);
    expect(tagged.requests.some((r) => r.path.includes(`/resolve/${second}/`))).toBe(true);
    expect(tagged.requests.some((r) => r.path.includes(`/resolve/${first}/`))).toBe(false);

    const unreachable = { HF_HOME: home, HF_ENDPOINT: 'http://127.0.0.1:9' };
    expect((await load(unreachable, 'v2')).source.commit?.()).toBe(second);
    expect((await load({ HF_HOME: home, HF_ENDPOINT: hub.url, HF_HUB_OFFLINE: '1' }, 'v2')).requests).toEqual([]);
    await expect(load({ HF_HOME: home, HF_HUB_OFFLINE: '1' })).rejects.toThrow(
      /HF_HUB_OFFLINE is set and karpathy\/stories260K at main was never downloaded here/,
    );
    await expect(load(envOf(home), 'no-such-branch')).rejects.toThrow(/has no revision "no-such-branch".*--revision/);
    expect(() => modelSource(REPO, { revision: '../etc' })).toThrow(/is not a hub revision/);
  });

  it('sends HF_TOKEN to the hub as a Bearer token and never to the host a download is redirected to', async () => {
    const gated = 'meta/gated-stories';
    hub.setRef(gated, 'main', hub.addCommit(gated, stories));
    hub.gate(gated, 'hf_secret');
    const home = freshHome();
    await expect(load(envOf(home), undefined, gated)).rejects.toThrow(/HTTP 401.*gated or private.*HF_TOKEN/);

    const { requests } = await load(envOf(home, { HF_TOKEN: 'hf_secret' }), undefined, gated);
    expect(requests.some((r) => r.host === 'cdn')).toBe(true);
    for (const r of requests) expect(r.authorization).toBe(r.host === 'hub' ? 'Bearer hf_secret' : undefined);
  });

  it("caps every download at its kind's size: a stated size or Content-Length of 1e12 is refused unread, an endless body at 64 MB, and none is cached", async () => {
    const hostile = 'liar/stories';
    const commit = hub.addCommit(hostile, stories);
    hub.setRef(hostile, 'main', commit);
    hub.lie(commit, 'config.json', 'huge-length');
    const home = freshHome();
    const url = `${hub.url}/${hostile}/resolve/${commit}`;
    await expect(load(envOf(home), undefined, hostile)).rejects.toThrow(
      `${url}/config.json is 1.0 TB, more than the 64 MB a model file of its kind may be; it is not a model file of a supported checkpoint.`,
    );
    hub.lie(commit, 'config.json', 'endless');
    await expect(load(envOf(home), undefined, hostile)).rejects.toThrow(
      `${url}/config.json is more than the 64 MB a model file of its kind may be; it is not a model file of a supported checkpoint.`,
    );
    // The size a byte range states is enough: the file is refused before it is asked for whole.
    hub.lie(commit, 'config.json', 'huge-size');
    const from = hub.requests.length;
    await expect(load(envOf(home), undefined, hostile)).rejects.toThrow(`${url}/config.json is 1.0 TB, more than the 64 MB`);
    expect(hub.requests.slice(from).filter((r) => r.method === 'GET' && r.path.endsWith('/config.json'))).toHaveLength(1);
    const repo = join(home, 'hub', 'models--liar--stories');
    expect(existsSync(join(repo, 'snapshots', commit, 'config.json'))).toBe(false);
    expect(readdirSync(join(repo, 'blobs')).filter((f) => !f.endsWith('.incomplete'))).toEqual([]);
  }, 30_000);

  it('downloads a model loaded several times at once into one cache once, each load getting whole files', async () => {
    useEnv(envOf(freshHome()));
    const from = hub.requests.length;
    const sources = [0, 1, 2].map(() => modelSource(REPO));
    const policies = await Promise.all(sources.map((s) => Policy.load(s, new CpuBackend())));
    for (const p of policies) expect(p.files).toEqual(policies[0].files);
    // The weights from the CDN once (and the library's 1-byte probe once): the other loads waited and found them cached.
    expect(hub.requests.slice(from).filter((r) => r.host === 'cdn' && r.method === 'GET')).toHaveLength(2);
  });

  it('takes a download lock left by a killed process once it is stale, and leaves none behind', async () => {
    const home = freshHome();
    const lock = join(home, 'hub', '.locks', 'models--karpathy--stories260K', 'nextstate-download.lock');
    mkdirSync(dirname(lock), { recursive: true });
    writeFileSync(lock, '');
    const longAgo = new Date(Date.now() - 3_600_000);
    utimesSync(lock, longAgo, longAgo);
    expect((await load(envOf(home))).source.commit?.()).toBe(first);
    expect(existsSync(lock)).toBe(false);
  });

  it('takes at once a lock that names a process of this host that is gone, and waits on one whose process runs', async () => {
    const home = freshHome();
    const lock = join(home, 'hub', '.locks', 'models--karpathy--stories260K', 'nextstate-download.lock');
    mkdirSync(dirname(lock), { recursive: true });
    // Touched all along: only its owner tells it was left behind.
    // The load removes the lock at any moment, so a touch may find it gone.
    const touch = setInterval(() => utimes(lock, new Date(), new Date()).catch(() => {}), 200);
    try {
      const gone = spawnSync(process.execPath, ['-e', '']).pid!;
      writeFileSync(lock, JSON.stringify({ pid: gone, host: hostname() }));
      expect((await load(envOf(home))).source.commit?.()).toBe(first);
      expect(existsSync(lock)).toBe(false);

      const other = freshHome();
      const held = join(other, 'hub', '.locks', 'models--karpathy--stories260K', 'nextstate-download.lock');
      mkdirSync(dirname(held), { recursive: true });
      writeFileSync(held, JSON.stringify({ pid: process.ppid, host: hostname() }));
      let done = false;
      const waiting = load(envOf(other)).then((r) => ((done = true), r));
      await new Promise((r) => setTimeout(r, 1500));
      expect(done).toBe(false);
      rmSync(held);
      expect((await waiting).source.commit?.()).toBe(first);
    } finally {
      clearInterval(touch);
    }
  });

  it('refuses a download whose bytes are not the ones the hub stated, and keeps none of it', async () => {
    const altered = 'altered/stories';
    const commit = hub.addCommit(altered, stories);
    hub.setRef(altered, 'main', commit);
    hub.lie(commit, 'model.safetensors', 'other-bytes');
    const home = freshHome();
    await expect(load(envOf(home), undefined, altered)).rejects.toThrow(
      `altered/stories/model.safetensors at ${commit} downloaded as other bytes than the hub stated (another download of it at the same time?); run again to download it afresh.`,
    );
    const repo = join(home, 'hub', 'models--altered--stories');
    expect(existsSync(join(repo, 'snapshots', commit, 'model.safetensors'))).toBe(false);
    const weights = readFileSync(join(stories, 'model.safetensors'));
    expect(existsSync(join(repo, 'blobs', createHash('sha256').update(weights).digest('hex')))).toBe(false);
  });

  it("keeps the library's download line off stdout, where the CLI's data goes", async () => {
    const lines: unknown[][] = [];
    const spy = vi.spyOn(console, 'debug').mockImplementation((...args: unknown[]) => void lines.push(args));
    try {
      await load(envOf(freshHome()));
      console.debug('a line of its own');
    } finally {
      spy.mockRestore();
    }
    expect(lines).toEqual([['a line of its own']]);
  });
});
