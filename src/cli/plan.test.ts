import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { runCli } from '../../test/support/cli/run-cli';

describe('nextstate plan', () => {
  it('plans a shipped config by name: Qwen3-4B, q4, LoRA 16, a 16x512 step, as JSON', async () => {
    const r = await runCli('plan', '--model', 'Qwen3-4B', '--quantize', 'q4', '--lora-rank', '16', '--train', '16x512', '--recompute', 'layer', '--json');
    expect(r.code).toBe(0);
    const p = JSON.parse(r.out[0]);
    expect(p.config).toMatch(/model-configs[/\\]Qwen3-4B\.json$/);
    expect(p.weightFormat).toEqual({ storage: 'q4', bitsPerWeight: 4.5, groupSize: 32 });
    expect(Object.keys(p.bytes)).toEqual(['weights', 'kvCache', 'activations', 'lora', 'optimizer', 'scratch', 'total']);
    expect(p.microBatches).toEqual({ count: 4, sequences: 4, tokens: 512 });
    expect(p.bytes.total).toBeLessThan(6e9);
    expect(p.limits.map((l: { name: string }) => l.name)).toEqual(['2 GiB', '4 GiB']);
  });

  it('reads a model folder or a config.json path, and prints a table naming the format', async () => {
    const folder = await runCli('plan', '--model', dataPath('models/stories260K'), '--quantize', 'none', '--train', '4x64', '--json');
    const file = await runCli('plan', '--model', dataPath('models/stories260K/config.json'), '--quantize', 'none', '--train', '4x64', '--json');
    expect(JSON.parse(folder.out[0]).bytes).toEqual(JSON.parse(file.out[0]).bytes);
    const text = await runCli('plan', '--model', dataPath('models/stories260K'), '--quantize', 'q8');
    expect(text.code).toBe(0);
    expect(text.out.join('\n')).toMatch(/weights as q8 \(groups of 32, f16 scales, 8\.5 bits a weight\)\n/);
    expect(text.out.join('\n')).toMatch(/^ {2}total +/m);
  });

  it('plans full fine-tuning: f32 weights, their gradient and AdamW moments', async () => {
    const r = await runCli('plan', '--model', 'SmolLM2-135M', '--full', '--train', '4x128', '--json');
    const p = JSON.parse(r.out[0]);
    expect(p.training).toBe('full');
    expect(p.weightFormat.storage).toBe('f32');
    // The gradient has the weights' shapes, in pooled buffers (rounded up by at most 1/8); m and v too.
    expect(p.bytes.lora).toBeGreaterThanOrEqual(p.bytes.weights);
    expect(p.bytes.lora).toBeLessThan(1.125 * p.bytes.weights);
    expect(p.bytes.optimizer).toBe(2 * p.bytes.lora);
    const text = await runCli('plan', '--model', 'SmolLM2-135M', '--full', '--train', '4x128');
    expect(text.out.join('\n')).toMatch(/weight gradient/);
    expect((await runCli('plan', '--model', 'SmolLM2-135M', '--full', '--quantize', 'q4', '--train', '4x128')).err[0]).toMatch(/f32 weights, not q4/);
  });

  it('refuses bad options and unsupported configs with one line', async () => {
    const bad = await runCli('plan', '--model', 'Qwen3-4B', '--quantize', 'q3');
    expect(bad.code).toBe(2);
    expect(bad.err[0]).toMatch(/--quantize must be one of none, f16, q8, q4/);
    expect((await runCli('plan', '--model', 'Qwen3-4B', '--train', '16*512')).err[0]).toMatch(/SEQUENCESxTOKENS/);
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-plan-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ architectures: ['GPT2LMHeadModel'] }));
    const gpt2 = await runCli('plan', '--model', dir);
    expect(gpt2.code).toBe(1);
    expect(gpt2.err[0]).toMatch(/architecture GPT2LMHeadModel/);
  });
});
