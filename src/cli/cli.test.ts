import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync, existsSync, cpSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { dataPath } from '../../test/data-dir';
import { runCli } from '../../test/support/cli/run-cli';
import { parseSafetensors, tensorToFloat32 } from '../models/safetensors';

const stories = dataPath('models/stories260K');
const bin = resolve(__dirname, '../../bin/nextstate.mjs');

describe('nextstate CLI on stories260K', () => {
  it('generate records log-probs at its temperature, and train --temperature scores them there: no gap to the rollout', async () => {
    const gen = JSON.parse(
      (await runCli('generate', '--model', stories!, '--prompt', 'Once upon a time', '--max-new-tokens', '8', '--temperature', '0.6', '--seed', '3', '--json'))
        .out[0],
    );
    const dir = mkdtempSync(join(tmpdir(), 'ns-temperature-'));
    const data = join(dir, 'rows.jsonl');
    const row = { prompt: 'Once upon a time', completion_ids: gen.tokens, advantages: gen.tokens.map(() => 1), rollout_log_probs: gen.logprobs };
    writeFileSync(data, JSON.stringify(row));
    const gap = async (...extra: string[]) => {
      const r = await runCli('train', '--model', stories!, '--data', data, '--out', join(dir, `out${extra.length}`), '--lora-rank', '2', '--json', ...extra);
      expect(r.code).toBe(0);
      return JSON.parse(r.out[0]).rolloutGap as number;
    };
    expect(await gap('--temperature', '0.6')).toBeLessThan(1e-5);
    expect(await gap()).toBeGreaterThan(1e-3);
  });

  it('generate --json prints the documented greedy continuation through the real bin', () => {
    const stdout = execFileSync(
      process.execPath,
      [bin, 'generate', '--model', stories!, '--prompt', 'Once upon a time', '--max-new-tokens', '25', '--greedy', '--json'],
      { encoding: 'utf8' },
    );
    const r = JSON.parse(stdout);
    expect(r.text.startsWith(', there was a little girl named Lily.')).toBe(true);
    expect(r.tokens.length).toBe(r.logprobs.length);
  });

  it('seeded sampling repeats itself and differs across seeds', async () => {
    const args = ['generate', '--model', stories!, '--prompt', 'Once upon a time', '--max-new-tokens', '20', '--temperature', '1', '--top-p', '0.9', '--json'];
    const a = JSON.parse((await runCli(...args, '--seed', '7')).out[0]);
    const b = JSON.parse((await runCli(...args, '--seed', '7')).out[0]);
    const c = JSON.parse((await runCli(...args, '--seed', '8')).out[0]);
    expect(a.tokens).toEqual(b.tokens);
    expect(a.tokens).not.toEqual(c.tokens);
  });

  it('score --json gives the completion tokens, their log-probs and the sum; matches generate', async () => {
    const gen = JSON.parse((await runCli('generate', '--model', stories!, '--prompt', 'Once upon a time', '--max-new-tokens', '12', '--json')).out[0]);
    const r = await runCli('score', '--model', stories!, '--prompt', 'Once upon a time', '--completion', gen.text, '--json');
    const s = JSON.parse(r.out[0]);
    expect(s.tokens).toEqual(gen.tokens);
    s.logprobs.forEach((lp: number, i: number) => expect(lp).toBeCloseTo(gen.logprobs[i], 4));
    expect(s.sum).toBeCloseTo(
      s.logprobs.reduce((a: number, b: number) => a + b, 0),
      6,
    );
  });

  it('train raises the mean log-prob of positively rewarded completions, writes PEFT files, and score --adapter applies them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-train-'));
    const data = join(dir, 'data.jsonl');
    writeFileSync(
      data,
      [
        { prompt: 'Once upon a time', completion: ' there was a dog named Max.', advantage: 1 },
        { prompt: 'The cat', completion: ' sat on the big red mat.', advantage: 1 },
      ]
        .map((x) => JSON.stringify(x))
        .join('\n'),
    );
    const out = join(dir, 'adapter');
    const r = await runCli('train', '--model', stories!, '--data', data, '--out', out, '--steps', '3', '--lr', '0.003', '--lora-rank', '4', '--json');
    expect(r.code).toBe(0);
    expect(r.out).toHaveLength(4);
    const steps = r.out.slice(0, 3).map((l) => JSON.parse(l));
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3]);
    const { before, after } = JSON.parse(r.out[3]);
    expect(after).toBeGreaterThan(before);
    expect(existsSync(join(out, 'adapter_model.safetensors'))).toBe(true);
    expect(JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8')).r).toBe(4);
    const base = JSON.parse((await runCli('score', '--model', stories!, '--prompt', 'The cat', '--completion', ' sat on the big red mat.', '--json')).out[0]);
    const tuned = JSON.parse(
      (await runCli('score', '--model', stories!, '--prompt', 'The cat', '--completion', ' sat on the big red mat.', '--adapter', out, '--json')).out[0],
    );
    expect(tuned.sum).toBeGreaterThan(base.sum);
  });

  it('train --recompute layer takes the same steps as without, and refuses another value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-recompute-'));
    const data = join(dir, 'data.jsonl');
    writeFileSync(data, JSON.stringify({ prompt: 'Once upon a time', completion: ' there was a dog named Max.', advantage: 1 }));
    const train = (...more: string[]) =>
      // --force: each run writes the same folder again.
      runCli(
        'train',
        '--model',
        stories!,
        '--data',
        data,
        '--out',
        join(dir, 'out'),
        '--steps',
        '2',
        '--lr',
        '0.003',
        '--lora-rank',
        '4',
        '--json',
        '--force',
        ...more,
      );
    const step = (l: string) => {
      const s = JSON.parse(l);
      return [s.loss, s.gradNorm, s.entropy];
    };
    const kept = await train();
    const rebuilt = await train('--recompute', 'layer');
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.out.slice(0, 2).map(step)).toEqual(kept.out.slice(0, 2).map(step));
    expect(JSON.parse(rebuilt.out[2]).after).toBe(JSON.parse(kept.out[2]).after);
    const bad = await train('--recompute', 'all');
    expect(bad.code).toBe(2);
    expect(bad.err[0]).toMatch(/--recompute must be none or layer/);
  });

  it('errors exit non-zero with one line naming the problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-bad-'));
    cpSync(stories!, dir, { recursive: true });
    const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...cfg, architectures: ['GPT2LMHeadModel'] }));
    const bad = await runCli('generate', '--model', dir, '--prompt', 'x');
    expect(bad.code).toBe(1);
    expect(bad.err[0]).toMatch(/GPT2LMHeadModel.*Llama/);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...cfg, hidden_size: 32 }));
    expect((await runCli('score', '--model', dir, '--prompt', 'x', '--completion', 'y')).err[0]).toMatch(/do not match config.json/);
    writeFileSync(join(dir, 'model.safetensors'), readFileSync(join(stories!, 'model.safetensors')).subarray(0, 5000));
    writeFileSync(join(dir, 'config.json'), JSON.stringify(cfg));
    expect((await runCli('generate', '--model', dir, '--prompt', 'x')).err[0]).toMatch(/truncated|past the end/);
    const usage = await runCli('generate', '--model', stories!, '--prompt', 'x', '--max-new-tokens', 'lots');
    expect(usage.code).toBe(2);
    // A data file's content is not a usage error: its file, line and field, in one line, exit 1.
    writeFileSync(join(dir, 'data.jsonl'), '{"prompt": "a", "completion": "b", "advantage": 1}\n{"prompt": "a", "completion": "", "advantage": 1}\n');
    const data = await runCli('train', '--model', stories!, '--data', join(dir, 'data.jsonl'), '--out', join(dir, 'adapter'), '--steps', '1');
    expect(data.code).toBe(1);
    expect(data.err).toEqual([expect.stringMatching(/data\.jsonl:2: "completion" must be a non-empty string/)]);
    const proc = spawnSync(process.execPath, [bin, 'frobnicate'], { encoding: 'utf8' });
    expect(proc.status).toBe(2);
    expect(proc.stderr).toMatch(/unknown command "frobnicate"/);
  });
});

describe('nextstate run on the tool-call track', () => {
  it('prints a complete tool-call example, and refuses a config of it with a bad track option, naming the field', async () => {
    const example = await runCli('run', '--example', 'toolcall');
    expect(example.code).toBe(0);
    const config = JSON.parse(example.out.join('\n'));
    expect(config).toMatchObject({
      format: 'nextstate-run-config',
      track: 'toolcall',
      method: 'binary',
      models: { policy: { model: 'Qwen/Qwen3-0.6B' }, judge: { kind: 'rules' } },
      toolcall: { rewardMode: 'integrated', groupSize: 8, maxSteps: 8, evalHeldOut: 50 },
    });
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-toolcall-'));
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ ...config, toolcall: { ...config.toolcall, rewardMode: 'prm-only' } }));
    const bad = await runCli('run', '--config', join(dir, 'run.json'));
    expect(bad.code).toBe(1);
    expect(bad.err[0]).toMatch(/toolcall\.rewardMode/);
  });

  it('runs a tool-call config headless on the tiny Qwen3 fixture and writes a run file inspect reads', async () => {
    const { dir: model } = await tinyModel({ family: 'qwen3' });
    const config = JSON.parse((await runCli('run', '--example', 'toolcall')).out.join('\n'));
    config.problems = { source: 'builtin', count: 2 };
    config.toolcall = { ...config.toolcall, groupSize: 2, maxSteps: 1, evalHeldOut: 1 };
    config.schedule = { concurrentGroups: 1, steps: 1, evalEvery: 1 };
    config.preset.batch.size = 2;
    config.sampling.policy.maxNewTokens = 4;
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-toolcall-run-'));
    writeFileSync(join(dir, 'run.json'), JSON.stringify(config));
    const file = join(dir, 'run.nsrun');
    const r = await runCli('run', '--config', join(dir, 'run.json'), '--policy', model, '--out', file, '--json');
    // stdout has the JSON events only; what was written is said on stderr.
    expect(r.err).toEqual([expect.stringMatching(new RegExp(`^run finished: \\d+ records written to ${file}$`))]);
    expect(r.code).toBe(0);
    const events = r.out.map((l) => JSON.parse(l));
    expect(events.map((e) => e.type)).toEqual(['evaluation', 'train_step', 'evaluation']);
    expect(events[0]).toMatchObject({ name: 'accuracy', step: 0, version: 0, n: 1 });
    expect(events[0].score).toBe(events[0].scores.accuracy);
    expect(events[1]).toMatchObject({ step: 1, version: 1, samples: 2, skipped: null });
    const inspected = JSON.parse((await runCli('inspect', file, '--json')).out[0]);
    expect(inspected.header.run.config.track).toBe('toolcall');
    expect(inspected.summary).toMatchObject({ steps: 1, evaluations: 2, lastVersion: 1 });
    expect(inspected.summary.byKind.tool_step).toBeGreaterThanOrEqual(2);
  }, 120_000);
});

describe('nextstate run, inspect and export', () => {
  it('prints an example config, runs it headless with JSON events, and writes a run file the other commands read', async () => {
    const example = await runCli('run', '--example', 'storyteller');
    const config = JSON.parse(example.out.join('\n'));
    expect(config).toMatchObject({ format: 'nextstate-run-config', method: 'combined', scenario: { id: 'storyteller' } });
    config.schedule = { ...config.schedule, steps: 1, evalEvery: 1, evalProblems: 3, evalVotes: 1 };
    config.preset.batch.size = 4;
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-run-'));
    writeFileSync(join(dir, 'run.json'), JSON.stringify(config));
    const file = join(dir, 'run.nsrun');
    const r = await runCli('run', '--config', join(dir, 'run.json'), '--policy', stories!, '--out', file, '--json');
    expect(r.code).toBe(0);
    const events = r.out.map((l) => JSON.parse(l));
    expect(events.map((e) => e.type)).toEqual(['evaluation', 'train_step', 'evaluation']);
    expect(events[1]).toMatchObject({ step: 1, version: 1, samples: 4, skipped: null });
    expect(events[2]).toMatchObject({ step: 1, version: 1, n: 3 });

    const inspected = JSON.parse((await runCli('inspect', file, '--json')).out[0]);
    // The run file names the local folder; its path stays on this machine.
    expect(inspected.header.run.config.models.policy.model).toBe(basename(stories));
    // ...and the model by content: the SHA-256 of what the run loaded, as sha256sum prints it.
    const sha256sum = (f: string) =>
      createHash('sha256')
        .update(readFileSync(join(stories!, f)))
        .digest('hex');
    expect(inspected.header.models.policy).toEqual({
      id: basename(stories),
      files: { 'config.json': sha256sum('config.json'), 'model.safetensors': sha256sum('model.safetensors') },
      weightFormat: 'f32',
    });
    expect(inspected.integrity).toBe('verified');
    expect(inspected.summary).toMatchObject({ steps: 1, evaluations: 2, lastVersion: 1 });
    expect(inspected.adapter.version).toBe(1);

    const peft = join(dir, 'peft');
    const samples = join(dir, 'samples.jsonl');
    expect((await runCli('export', file, '--peft', peft, '--samples', samples)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(peft, 'adapter_config.json'), 'utf8')).peft_type).toBe('LORA');
    const rows = readFileSync(samples, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const row of rows) {
      expect(row.advantages.length).toBe(row.completion_ids.length);
      expect(row.loss_mask).toEqual(row.completion_ids.map(() => (row.trainable ? 1 : 0)));
      expect(row.rollout_log_probs.length).toBe(row.completion_ids.length);
      expect(row.prompt_ids.length).toBeGreaterThan(0);
    }
    // A personal-track run's prompts list no tools, so its rows carry no tools column.
    expect(rows.some((row) => 'tools' in row)).toBe(false);

    // The rows train again: the run's own settings (storyteller preset: LoRA rank 8, alpha 16 on
    // every projection, lr 5e-4, seed 1) and its first batch give the adapter the run's step made.
    const again = join(dir, 'again');
    const lora = config.preset.finetune.lora;
    const trained = await runCli(
      'train',
      ...['--model', stories!, '--data', samples, '--out', again, '--steps', '1', '--batch', String(config.preset.batch.size)],
      ...['--lr', String(config.preset.optimizer.lr), '--lora-rank', String(lora.rank), '--lora-alpha', String(lora.alpha), '--seed', String(config.seed)],
    );
    expect(trained.code).toBe(0);
    const weights = (d: string) => parseSafetensors(readFileSync(join(d, 'adapter_model.safetensors'))).tensors;
    const [fromRun, fromRows] = [weights(peft), weights(again)];
    expect([...fromRows.keys()]).toEqual([...fromRun.keys()]);
    let moved = 0;
    for (const [name, t] of fromRun) {
      const a = tensorToFloat32(t);
      const b = tensorToFloat32(fromRows.get(name)!);
      a.forEach((x, i) => expect(b[i], name).toBeCloseTo(x, 6));
      if (name.includes('lora_B')) moved += a.filter((x) => x !== 0).length;
    }
    expect(moved).toBeGreaterThan(0);
    // The trained adapter from the file changes the policy's scores.
    const base = JSON.parse(
      (await runCli('score', '--model', stories!, '--prompt', 'Once upon a time', '--completion', ' the dog was happy.', '--json')).out[0],
    );
    const tuned = JSON.parse(
      (await runCli('score', '--model', stories!, '--prompt', 'Once upon a time', '--completion', ' the dog was happy.', '--adapter', peft, '--json')).out[0],
    );
    expect(tuned.sum).not.toBeCloseTo(base.sum, 6);
  });
});
