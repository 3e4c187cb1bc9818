/** Checkpoint loading beyond the single-file case: shards, the hub with its cache, bad folders. */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { sizeOf } from './backend';
import { expectedTensors } from '../models/config';
import { CpuBackend } from './cpu/backend';
import type { ConvertProgress } from './load';
import { ModelSourceError, WeightsError } from './errors';
import { Policy } from './policy';
import { parseSafetensors, tensorToFloat32, writeSafetensors } from '../models/safetensors';
import { HubSource, type FileProgress } from '../models/source';
import { DirSource } from '../models/source-node';

const stories = dataPath('models/stories260K');
const documented = ', there was a little girl named Lily. She loved to play outside in the park.';

function copyTokenizer(to: string) {
  for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(stories, f), join(to, f));
}

const sha256sum = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('loading checkpoints', () => {
  it('names what it loaded by the SHA-256 of config.json and the weights, as sha256sum would', async () => {
    const policy = await Policy.load(new DirSource(stories), new CpuBackend());
    expect(policy.files).toEqual({
      'config.json': sha256sum(join(stories, 'config.json')),
      'model.safetensors': sha256sum(join(stories, 'model.safetensors')),
    });
  });

  it('loads a sharded checkpoint (model.safetensors.index.json) with F16 and BF16 shards', async () => {
    const { tensors } = parseSafetensors(readFileSync(join(stories, 'model.safetensors')));
    const entries = [...tensors.values()];
    const dir = mkdtempSync(join(tmpdir(), 'sharded-'));
    copyTokenizer(dir);
    const half = Math.ceil(entries.length / 2);
    const shards = [entries.slice(0, half), entries.slice(half)];
    const weightMap: Record<string, string> = {};
    shards.forEach((part, i) => {
      const name = `model-0000${i + 1}-of-00002.safetensors`;
      // The second shard in F16: loading converts whatever dtype each tensor has.
      writeFileSync(
        join(dir, name),
        writeSafetensors(part.map((t) => ({ name: t.name, shape: t.shape, data: tensorToFloat32(t), dtype: i === 1 ? 'F16' : 'F32' }))),
      );
      for (const t of part) weightMap[t.name] = name;
    });
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
    const policy = await Policy.load(new DirSource(dir), new CpuBackend());
    // Every file the weights came from, the index that maps them included.
    expect(Object.keys(policy.files).sort()).toEqual([
      'config.json',
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
      'model.safetensors.index.json',
    ]);
    expect(policy.files['model-00002-of-00002.safetensors']).toBe(sha256sum(join(dir, 'model-00002-of-00002.safetensors')));
    const [g] = await policy.generate(['Once upon a time'], { maxNewTokens: 12 });
    // F16 rounding of half the weights may change late tokens, not the opening words.
    expect(g.text.startsWith(', there was a little')).toBe(true);
  });

  it('downloads from the hub once, with byte progress, then serves from Cache Storage', async () => {
    const files = new Map<string, Uint8Array>();
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'model.safetensors']) files.set(f, readFileSync(join(stories, f)));
    let gets = 0;
    const commit = 'c0ffee'.padEnd(40, '0');
    const fetched: string[] = [];
    const fetchFn = (async (url: string, init?: RequestInit) => {
      // The hub's answer to which commit main is: files are fetched at it, so the cache never holds a moved branch.
      if (String(url) === 'https://huggingface.co/api/models/karpathy/stories260K/revision/main') return Response.json({ sha: commit });
      fetched.push(String(url));
      const name = String(url).split('/').pop()!;
      const body = files.get(name);
      if (!body) return new Response('not found', { status: 404 });
      if (init?.method === 'HEAD') return new Response(null, { status: 200, headers: { 'content-length': String(body.byteLength) } });
      gets++;
      // Stream in small chunks, as a real download arrives.
      const stream = new ReadableStream({
        start(c) {
          for (let i = 0; i < body.byteLength; i += 65536) c.enqueue(body.subarray(i, i + 65536));
          c.close();
        },
      });
      return new Response(stream, { status: 200, headers: { 'content-length': String(body.byteLength) } });
    }) as typeof fetch;
    const store = new Map<string, Response>();
    const cache = { match: async (u: string) => store.get(u)?.clone(), put: async (u: string, r: Response) => void store.set(u, r) };
    const cacheStorage = { open: async () => cache } as unknown as CacheStorage;
    const progress: FileProgress[] = [];
    const source = new HubSource('karpathy/stories260K', { fetchFn, cacheStorage });
    const policy = await Policy.load(source, new CpuBackend(), { onProgress: (p) => progress.push(p) });
    const weights = progress.filter((p) => p.file === 'model.safetensors');
    expect(weights.length).toBeGreaterThan(2);
    expect(weights.at(-1)).toMatchObject({
      loaded: files.get('model.safetensors')!.byteLength,
      total: files.get('model.safetensors')!.byteLength,
      fromCache: false,
    });
    const [g] = await policy.generate(['Once upon a time'], { maxNewTokens: 20 });
    expect(documented.startsWith(g.text)).toBe(true);
    expect(source.commit()).toBe(commit);
    expect(fetched.every((u) => u.startsWith(`https://huggingface.co/karpathy/stories260K/resolve/${commit}/`))).toBe(true);

    const before = gets;
    progress.length = 0;
    await Policy.load(new HubSource('karpathy/stories260K', { fetchFn, cacheStorage }), new CpuBackend(), { onProgress: (p) => progress.push(p) });
    expect(gets).toBe(before);
    expect(progress.every((p) => p.fromCache)).toBe(true);
  });

  it('reports storing the weights from nothing to every parameter the config implies, in the format asked', async () => {
    const seen: ConvertProgress[] = [];
    const policy = await Policy.load(new DirSource(stories), new CpuBackend(), { weightFormat: 'q8', onConvert: (p) => seen.push(p) });
    const params = expectedTensors(policy.config).reduce((n, e) => n + sizeOf(e.shape), 0);
    expect(seen[0]).toEqual({ done: 0, total: params, format: 'q8' });
    expect(seen.at(-1)).toEqual({ done: params, total: params, format: 'q8' });
    // One event per tensor, each further than the last.
    expect(seen).toHaveLength(expectedTensors(policy.config).length + 1);
    expect(seen.every((p, i) => i === 0 || p.done > seen[i - 1].done)).toBe(true);
  });

  it('refuses a config.json implying far more tensors than the file holds, from the count', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'manylayers-'));
    copyTokenizer(dir);
    copyFileSync(join(stories, 'model.safetensors'), join(dir, 'model.safetensors'));
    const config = JSON.parse(readFileSync(join(stories, 'config.json'), 'utf8'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, num_hidden_layers: 1000 }));
    const held = parseSafetensors(readFileSync(join(stories, 'model.safetensors'))).tensors.size;
    await expect(Policy.load(new DirSource(dir), new CpuBackend())).rejects.toThrow(
      `${dir}: the weights hold ${held} tensors but config.json implies ${2 + 1000 * 9}. Check that config.json and the safetensors come from the same model.`,
    );
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, num_hidden_layers: 1e9 }));
    // Refused from config.json alone, before the weights are read or a tensor list is built.
    const source = new DirSource(dir);
    const read: string[] = [];
    const bytes = source.bytes.bind(source);
    source.bytes = (name, onProgress) => (read.push(name), bytes(name, onProgress));
    await expect(Policy.load(source, new CpuBackend())).rejects.toThrow(/"num_hidden_layers" must be a positive integer of at most 1,024/);
    expect(read).not.toContain('model.safetensors');
  });

  it('refuses a checkpoint holding NaN or infinite weights, naming the tensor', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nanweights-'));
    copyTokenizer(dir);
    const file = new Uint8Array(readFileSync(join(stories, 'model.safetensors')));
    const t = parseSafetensors(file).tensors.get('model.layers.2.mlp.up_proj.weight')!;
    new DataView(t.bytes.buffer, t.bytes.byteOffset).setFloat32(8, Infinity, true);
    writeFileSync(join(dir, 'model.safetensors'), file);
    await expect(Policy.load(new DirSource(dir), new CpuBackend())).rejects.toThrow(
      `${dir}: tensor model.layers.2.mlp.up_proj.weight holds 1 NaN or infinite value of ${t.bytes.byteLength / 4}; the weights are damaged`,
    );
  });

  it('names what is wrong with a folder that is not a safetensors checkpoint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nosafetensors-'));
    copyTokenizer(dir);
    await expect(Policy.load(new DirSource(dir), new CpuBackend())).rejects.toThrow(WeightsError);
    await expect(Policy.load(new DirSource(dir), new CpuBackend())).rejects.toThrow(/neither model.safetensors nor model.safetensors.index.json/);
    await expect(Policy.load(new DirSource(join(dir, 'missing')), new CpuBackend())).rejects.toThrow(ModelSourceError);
    const failing = new HubSource('owner/gated', { fetchFn: (async () => new Response('', { status: 401 })) as typeof fetch, cacheStorage: null });
    await expect(failing.bytes('config.json')).rejects.toThrow(/HTTP 401.*gated/);
    expect(() => new HubSource('not a model id')).toThrow(/not a hub model id/);
  });
});
