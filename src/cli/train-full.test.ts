/**
 * `nextstate train --full` on stories260K: advantage +1 raises the completion's log-prob, and the
 * folder it writes scores the same under `nextstate score --model OUT` as under an independent
 * reading of its safetensors: parsed here by hand, run by the engine (identical numbers) and by
 * onnxruntime on an ONNX graph of the same weights (oracle 2).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { buildDecoderOnnx } from '../../test/fixtures/onnx-decoder';
import { OrtOracle } from '../../test/fixtures/ort-oracle';
import { parseModelConfig } from '../models/config';
import { CpuBackend } from '../gpu/cpu/backend';
import { CausalLM } from '../gpu/model';
import { Policy } from '../gpu/policy';
import { score } from '../gpu/score';
import { DirSource } from '../models/source-node';
import { exampleConfig } from '../runtime/run-config';
import { runCli } from '../../test/support/cli/run-cli';
import { runToFile } from './run';

const stories = dataPath('models/stories260K');
const prompt = 'The cat';
const completion = ' sat on the big red mat.';

/** safetensors read without the engine's reader: header length, JSON header, F32 little-endian payloads. */
function readSafetensorsByHand(bytes: Uint8Array): Map<string, { shape: number[]; data: Float32Array }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    expect(t.dtype).toBe('F32');
    const [a, b] = t.data_offsets;
    const data = new Float32Array((b - a) / 4);
    for (let i = 0; i < data.length; i++) data[i] = view.getFloat32(8 + n + a + 4 * i, true);
    out.set(name, { shape: t.shape, data });
  }
  return out;
}

describe('nextstate train --full on stories260K', () => {
  it('raises the completion log-prob with A = +1 and writes a folder that scores the same however it is read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-full-'));
    const data = join(dir, 'data.jsonl');
    writeFileSync(
      data,
      [
        { prompt: 'Once upon a time', completion: ' there was a dog named Max.', advantage: 1 },
        { prompt, completion, advantage: 1 },
      ]
        .map((x) => JSON.stringify(x))
        .join('\n'),
    );
    const out = join(dir, 'full');
    // The reference's defaults: lr 1e-5, weight decay 0.1, betas (0.9, 0.98).
    const r = await runCli('train', '--full', '--model', stories!, '--data', data, '--out', out, '--steps', '3', '--json');
    // Nothing on stderr but the closing note (stdout carries only the JSON lines).
    expect(r.err).toEqual([`model written to ${out}`]);
    expect(r.code).toBe(0);
    const { before, after } = JSON.parse(r.out[3]);
    expect(after).toBeGreaterThan(before);
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors', 'optimizer.safetensors']) {
      expect(existsSync(join(out, f)), f).toBe(true);
    }
    expect(readFileSync(join(out, 'tokenizer.json'))).toEqual(readFileSync(join(stories!, 'tokenizer.json')));

    const base = JSON.parse((await runCli('score', '--model', stories!, '--prompt', prompt, '--completion', completion, '--json')).out[0]);
    // On the reference backend, which the hand-read weights below run on too.
    const cli = JSON.parse(
      (await runCli('score', '--model', out, '--prompt', prompt, '--completion', completion, '--backend', 'cpu-reference', '--json')).out[0],
    );
    expect(cli.sum).toBeGreaterThan(base.sum);

    // The same weights read by hand, run by the engine: identical log-probs.
    const config = parseModelConfig(JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')));
    const tensors = readSafetensorsByHand(readFileSync(join(out, 'model.safetensors')));
    const be = new CpuBackend();
    const model = new CausalLM(be, config, new Map([...tensors].map(([n, t]) => [n, be.tensor(t.data, t.shape)])));
    const tokenizer = await Policy.load(new DirSource(out), be);
    const promptIds = tokenizer.promptIds(prompt);
    const [own] = await score(model, [{ prompt: promptIds, completion: cli.tokens }]);
    expect(Array.from(own.logprobs)).toEqual(cli.logprobs);

    // And by onnxruntime on an ONNX graph built from them (f32 there too: 1e-4).
    const onnxDir = join(dir, 'onnx-oracle');
    mkdirSync(join(onnxDir, 'onnx'), { recursive: true });
    writeFileSync(join(onnxDir, 'config.json'), readFileSync(join(out, 'config.json')));
    writeFileSync(
      join(onnxDir, 'onnx', 'model.onnx'),
      buildDecoderOnnx(config, (name) => tensors.get(name)!),
    );
    const oracle = await OrtOracle.open(onnxDir);
    try {
      const ids = [...promptIds, ...cli.tokens];
      const { logits } = await oracle.run([ids]);
      const ortLogp = cli.tokens.map((tok: number, k: number) => {
        const row = logits[0][promptIds.length - 1 + k];
        const max = Math.max(...row);
        const lse = max + Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0));
        return row[tok] - lse;
      });
      ortLogp.forEach((lp: number, k: number) => expect(Math.abs(lp - cli.logprobs[k])).toBeLessThan(1e-4));
    } finally {
      await oracle.close();
    }
  });

  it('resumes from its own folder with the optimizer state, and refuses LoRA options or a folder without one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-full-resume-'));
    const data = join(dir, 'data.jsonl');
    writeFileSync(data, JSON.stringify({ prompt, completion, advantage: 1 }));
    const first = join(dir, 'first');
    expect((await runCli('train', '--full', '--model', stories!, '--data', data, '--out', first, '--steps', '1', '--json')).code).toBe(0);
    const second = join(dir, 'second');
    const r = await runCli('train', '--full', '--resume', '--model', first, '--data', data, '--out', second, '--steps', '1', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out[0]).step).toBe(2);
    const bad = await runCli('train', '--full', '--lora-rank', '4', '--model', stories!, '--data', data, '--out', join(dir, 'x'));
    expect(bad.code).not.toBe(0);
    expect(bad.err[0]).toMatch(/--lora-rank is a LoRA option/);
    const none = await runCli('train', '--full', '--resume', '--model', stories!, '--data', data, '--out', join(dir, 'y'));
    expect(none.err[0]).toMatch(/optimizer\.safetensors not found/);
  });

  it("nextstate run with finetune.mode 'full' trains every weight and writes the model folder beside the run file", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-full-run-'));
    const config = exampleConfig('storyteller', stories!, 'binary');
    config.preset.finetune.mode = 'full';
    config.preset.optimizer.lr = 1e-5;
    config.schedule.steps = 1;
    config.schedule.evalProblems = 2;
    const file = join(dir, 'run.nsrun');
    const r = await runToFile(config, { file });
    expect(r.status).toBe('finished');
    expect(r.modelDir).toBe(join(dir, 'run.model'));
    expect(r.records.filter((x) => x.kind === 'train_step')).toHaveLength(1);
    const trained = await Policy.load(new DirSource(r.modelDir!), new CpuBackend());
    const base = await Policy.load(new DirSource(stories!), new CpuBackend());
    const w = await trained.model.backend.read(trained.model.w('model.norm.weight'));
    const w0 = await base.model.backend.read(base.model.w('model.norm.weight'));
    expect(Array.from(w)).not.toEqual(Array.from(w0));
    expect(existsSync(join(r.modelDir!, 'optimizer.safetensors'))).toBe(true);
  });
});
