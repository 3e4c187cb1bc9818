import { describe, expect, it } from 'vitest';
import { STORIES260K_CONFIG as storiesConfig } from '../../../test/fixtures/stories-config';
import { planMemoryFromJson } from '../../gpu/plan';
import { estimateMemory, hubModelFiles, microBatchText, pickedModelFiles, shippedConfig } from './memory';

describe('memory estimate from config.json (the planner, fed with the Setup)', () => {
  const input = { backend: 'cpu' as const, loraRank: 8, loraTargets: ['q_proj', 'v_proj'], batch: 4, contextTokens: 64, trainSequences: 16 };

  it('is planMemory of a lab run: three adapter copies, a 2048-token micro-batch, a generation batch', () => {
    const e = estimateMemory(storiesConfig, input);
    const plan = planMemoryFromJson(storiesConfig, {
      quantize: 'f16',
      backend: 'cpu',
      shaderF16: false,
      lora: { rank: 8, targets: ['q_proj', 'v_proj'] },
      adapterCopies: 3,
      train: { sequences: 16, tokens: 64 },
      microBatchTokens: 2048,
      generate: { batch: 4, tokens: 64 },
    });
    expect(e).toEqual(plan);
    // stories260K: 260,032 parameters (its SOURCE.md): f16 matrices (the CPU decodes them per op), 11 f32 norms of 64.
    expect(e.parameters).toBe(260_032);
    expect(e.bytes.weights).toBe((260_032 - 11 * 64) * 2 + 11 * 64 * 4);
    // LoRA: 5 layers x rank 8 x (q 64+64, v 32+64): three copies and the gradient; AdamW m and v.
    expect(e.bytes.lora).toBe(5 * 8 * (128 + 96) * 4 * 4);
    expect(e.bytes.optimizer).toBe(5 * 8 * (128 + 96) * 4 * 2);
    expect(e.microBatches).toEqual({ count: 1, sequences: 16, tokens: 64 });
  });

  it('stores f16 matrices with or without shader-f16, which only decides how the kernels read them', () => {
    const native = estimateMemory(storiesConfig, { ...input, backend: 'webgpu', f16: true });
    const unpacked = estimateMemory(storiesConfig, { ...input, backend: 'webgpu', f16: false });
    expect([native.weightFormat.storage, unpacked.weightFormat.storage]).toEqual(['f16', 'f16']);
    expect(unpacked.bytes.weights).toBe(native.bytes.weights);
    expect(unpacked.notes.join(' ')).toMatch(/unpacked from u32 words/);
  });

  it('plans serving only without a training batch, and q4 weights', () => {
    const serve = estimateMemory(storiesConfig, { ...input, trainSequences: 0 });
    expect(serve.microBatches).toBeNull();
    expect(serve.bytes.activations).toBe(0);
    const q4 = estimateMemory(storiesConfig, { ...input, quantize: 'q4' });
    expect(q4.weightFormat).toEqual({ storage: 'q4', bitsPerWeight: 4.5, groupSize: 32 });
    expect(q4.bytes.weights).toBeLessThan(serve.bytes.weights / 2.5);
  });

  it('plans a full fine-tune of the preset in f32', () => {
    const full = estimateMemory(storiesConfig, { ...input, backend: 'webgpu', f16: true, finetune: 'full' });
    expect(full.training).toBe('full');
    expect(full.weightFormat.storage).toBe('f32');
    expect(full.bytes.optimizer).toBe(2 * full.bytes.lora);
  });

  it('knows the shipped config.json of the models people pick, by hub id only', () => {
    expect(shippedConfig('Qwen/Qwen3-4B')).toMatchObject({ architectures: ['Qwen3ForCausalLM'], hidden_size: 2560 });
    expect(shippedConfig('HuggingFaceTB/SmolLM2-360M')).toMatchObject({ hidden_size: 960 });
    expect(shippedConfig('someone/Qwen3-4B')).toBeNull();
    expect(shippedConfig('Qwen/Qwen3-235B')).toBeNull();
  });

  it('refuses architectures the engine does not run', () => {
    expect(() => estimateMemory({ architectures: ['GPT2LMHeadModel'] }, input)).toThrow(/architecture/);
  });
});

describe('micro-batches in words', () => {
  it('adds up to the step’s sequences', () => {
    expect(microBatchText(8, 6)).toBe('2 micro-batches (6 + 2 sequences, one after another)');
    expect(microBatchText(16, 6)).toBe('3 micro-batches (2 × 6 + 4 sequences, one after another)');
    expect(microBatchText(12, 6)).toBe('2 micro-batches (2 × 6 sequences, one after another)');
    expect(microBatchText(8, 8)).toBe('1 micro-batch of 8 sequences');
    expect(microBatchText(1, 6)).toBe('1 micro-batch of 1 sequence');
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
      if (url.endsWith('config.json') && !url.endsWith('tokenizer_config.json'))
        return new Response(JSON.stringify(storiesConfig), { headers: { 'content-length': '300' } });
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
