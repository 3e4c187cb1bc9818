import { describe, expect, it } from 'vitest';
import { STORIES260K_CONFIG as storiesConfig } from '../../../test/fixtures/stories-config';
import { hubModelFiles, estimateMemory, pickedModelFiles } from './memory';

describe('memory estimate from config.json', () => {
  it('counts parameters and weight bytes by backend and dtype', () => {
    const input = { backend: 'cpu' as const, loraRank: 8, loraTargets: ['q_proj', 'v_proj'], batch: 4, contextTokens: 64 };
    const e = estimateMemory(storiesConfig, input);
    // stories260K: 260,032 parameters (its SOURCE.md).
    expect(e.parameters).toBe(260_032);
    expect(e.weightBytes).toBe(260_032 * 4);
    expect(estimateMemory(storiesConfig, { ...input, backend: 'webgpu', f16: true }).weightBytes).toBe(260_032 * 2);
    // f16 only where WebGPU offers it.
    expect(estimateMemory(storiesConfig, { ...input, f16: true }).weightBytes).toBe(260_032 * 4);
    // LoRA: 5 layers x rank 8 x (q 64+64, v 32+64), six f32 copies.
    expect(e.loraBytes).toBe(5 * 8 * (128 + 96) * 4 * 6);
    expect(e.kvBytes).toBe(2 * 5 * 4 * 8 * 64 * 4 * 4);
    expect(e.totalBytes).toBe(e.weightBytes + e.loraBytes + e.kvBytes + e.trainBytes);
  });

  it('refuses architectures the engine does not run', () => {
    expect(() => estimateMemory({ architectures: ['GPT2LMHeadModel'] }, { backend: 'cpu', loraRank: 8, loraTargets: [], batch: 1, contextTokens: 1 })).toThrow(/architecture/);
  });
});

describe('model files before download', () => {
  it('sums picked files and reads their config.json', async () => {
    const files = [
      new File([JSON.stringify(storiesConfig)], 'config.json'),
      new File([new Uint8Array(1000)], 'model.safetensors'),
      new File(['{}'], 'tokenizer.json'),
    ];
    const info = await pickedModelFiles(files);
    expect(info.totalBytes).toBe(files.reduce((n, f) => n + f.size, 0));
    expect(info.missing).toEqual(['tokenizer_config.json']);
    expect(info.config).toEqual(storiesConfig);
  });

  it('reads config.json and HEAD sizes from the hub without downloading the weights', async () => {
    const calls: string[] = [];
    const fake = (async (url: string, init?: RequestInit) => {
      calls.push(`${init?.method ?? 'GET'} ${url}`);
      if (url.endsWith('config.json') && !url.endsWith('tokenizer_config.json')) return new Response(JSON.stringify(storiesConfig), { headers: { 'content-length': '300' } });
      if (url.endsWith('model.safetensors')) return new Response(null, { headers: { 'x-linked-size': '1040000' } });
      if (url.endsWith('tokenizer.json')) return new Response(null, { headers: { 'content-length': '20000' } });
      return new Response('<html>', { status: 200, headers: { 'content-type': 'text/html' } });
    }) as typeof fetch;
    const info = await hubModelFiles('me/stories', fake);
    expect(info.files).toEqual({ 'config.json': 300, 'model.safetensors': 1_040_000, 'tokenizer.json': 20_000 });
    expect(info.missing).toEqual(['tokenizer_config.json']);
    expect(info.totalBytes).toBe(1_060_300);
    expect(calls).toContain('HEAD https://huggingface.co/me/stories/resolve/main/model.safetensors');
    expect(calls.filter((c) => c.startsWith('GET'))).toEqual(['GET https://huggingface.co/me/stories/resolve/main/config.json']);
  });

  it('says when a hub model cannot be reached or is gated', async () => {
    const down = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof fetch;
    await expect(hubModelFiles('me/x', down)).rejects.toThrow(/Could not reach/);
    const gated = (async () => new Response('', { status: 401 })) as typeof fetch;
    await expect(hubModelFiles('me/x', gated)).rejects.toThrow(/gated/);
    await expect(hubModelFiles('not a model id', gated)).rejects.toThrow(/hub model id/);
  });
});
