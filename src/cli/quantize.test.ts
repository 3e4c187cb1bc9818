/** --quantize on generate, score, train and run, on stories260K: the format is used, reported and recorded. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { runCli } from '../../test/support/cli/run-cli';

const stories = dataPath('models/stories260K');
const prompt = ['--model', stories, '--prompt', 'Once upon a time'];

function trainData(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nextstate-quantize-'));
  const file = join(dir, 'data.jsonl');
  writeFileSync(file, JSON.stringify({ prompt: 'Once upon a time', completion: ' there was a dog named Max.', advantage: 1 }));
  return file;
}

describe('nextstate --quantize', () => {
  it('generate --quantize q4 writes text and says q4; without it the CPU backend loads f32', async () => {
    const q4 = JSON.parse((await runCli('generate', ...prompt, '--max-new-tokens', '16', '--greedy', '--quantize', 'q4', '--json')).out[0]);
    expect(q4.weightFormat).toBe('q4');
    expect(q4.text.trim().length).toBeGreaterThan(0);
    expect(q4.tokens).toHaveLength(16);
    const plain = JSON.parse((await runCli('generate', ...prompt, '--max-new-tokens', '2', '--json')).out[0]);
    expect(plain.weightFormat).toBe('f32');
  });

  it('score --quantize q8 gives log-probs within a few percent of f32 (none), and says which it used', async () => {
    const args = ['score', ...prompt, '--completion', ' there was a little girl named Lily.', '--json'];
    const f32 = JSON.parse((await runCli(...args, '--quantize', 'none')).out[0]);
    const q8 = JSON.parse((await runCli(...args, '--quantize', 'q8')).out[0]);
    expect([f32.weightFormat, q8.weightFormat]).toEqual(['f32', 'q8']);
    expect(q8.tokens).toEqual(f32.tokens);
    expect(Math.abs(q8.sum - f32.sum)).toBeLessThan(0.05 * Math.abs(f32.sum));
    const text = await runCli('score', ...prompt, '--completion', ' the end.', '--quantize', 'f16');
    expect(text.out.at(-1)).toMatch(/ over \d+ tokens \(weights f16\)$/);
  });

  it('a bad value, or a packed format for full fine-tuning, is one usage line', async () => {
    for (const command of [
      ['generate', ...prompt],
      ['score', ...prompt, '--completion', ' x'],
      ['train', '--model', stories, '--data', trainData(), '--out', tmpdir()],
      ['run', '--config', 'run.json'],
      ['plan', '--model', stories],
    ]) {
      const r = await runCli(...command, '--quantize', 'q3');
      expect(r.code).toBe(2);
      expect(r.err[0]).toBe(`nextstate ${command[0]}: --quantize must be one of none, f16, q8, q4 (none: f32), got "q3"`);
      expect(r.err[1]).toMatch(/^usage: [^]*--quantize none\|f16\|q8\|q4/);
    }
    const full = await runCli('train', '--full', '--model', stories, '--data', trainData(), '--out', tmpdir(), '--quantize', 'q4');
    expect(full.code).toBe(2);
    expect(full.err[0]).toBe('nextstate train: --full trains every weight in f32, so it loads f32 weights; use --quantize none (or leave it out), not q4');
  });

  it('train --quantize q4 trains a LoRA adapter over frozen q4 weights (QLoRA) and says so', async () => {
    const out = mkdtempSync(join(tmpdir(), 'nextstate-qlora-'));
    const r = await runCli(
      'train',
      '--model',
      stories,
      '--data',
      trainData(),
      '--out',
      out,
      '--steps',
      '3',
      '--lr',
      '0.003',
      '--lora-rank',
      '4',
      '--quantize',
      'q4',
      '--json',
    );
    expect(r.code).toBe(0);
    const { before, after, weightFormat } = JSON.parse(r.out.at(-1)!);
    expect(weightFormat).toBe('q4');
    expect(after).toBeGreaterThan(before);
  });

  it('run --quantize q8 loads the policy as q8 and the run file records it, in the config and in the header', async () => {
    const config = JSON.parse((await runCli('run', '--example', 'storyteller')).out.join('\n'));
    config.schedule = { ...config.schedule, steps: 1, evalEvery: 0 };
    config.preset.batch.size = 2;
    config.sampling.policy.maxNewTokens = 8;
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-run-q8-'));
    writeFileSync(join(dir, 'run.json'), JSON.stringify(config));
    const file = join(dir, 'run.nsrun');
    const r = await runCli('run', '--config', join(dir, 'run.json'), '--policy', stories, '--out', file, '--quantize', 'q8', '--json');
    // Nothing on stderr but the closing note (stdout carries only the JSON lines).
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toBe(`run finished: ${r.err[0].match(/(\d+) records/)?.[1]} records written to ${file}`);
    const inspected = JSON.parse((await runCli('inspect', file, '--json')).out[0]);
    expect(inspected.header.run.config.models.policy.weightFormat).toBe('q8');
    expect(inspected.header.models.policy.weightFormat).toBe('q8');
    expect((await runCli('inspect', file)).out).toContainEqual(expect.stringMatching(/^ {2}policy: stories260K, weights q8 \(sha-256/));

    // The run file's config runs again as it is: the same format, now from the config.
    writeFileSync(join(dir, 'again.json'), JSON.stringify({ ...inspected.header.run.config, modelRefs: undefined }));
    const again = join(dir, 'again.nsrun');
    expect((await runCli('run', '--config', join(dir, 'again.json'), '--policy', stories, '--out', again, '--json')).code).toBe(0);
    expect(JSON.parse((await runCli('inspect', again, '--json')).out[0]).header.models.policy.weightFormat).toBe('q8');
  }, 120_000);
});
