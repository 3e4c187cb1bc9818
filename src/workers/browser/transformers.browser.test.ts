/**
 * A judge played by transformers.js in its worker, on the tiny random Qwen3 fixture in ONNX (the
 * real Qwen3 tokenizer and chat template), served by the test server: nothing from the network.
 * WASM gets every check; WebGPU (SwiftShader here, 30-50x slower than WASM) one load with its
 * progress, a chat answer, seeds and an abort.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { WorkerGenerator } from './generator-client';
import type { GeneratorLoadRequest, GeneratorProgress } from './generator-host';
import type { ChatMessage } from '../../rl/messages';
import type { TransformersDevice } from '../../generators/transformers';

const onnxDir = inject('tinyOnnxDir');
const plainDir = inject('tinyModelDir');
const brokenDir = inject('brokenConfigDir');

const parent = (dir: string) => `/@fs${dir.slice(0, dir.lastIndexOf('/'))}/`;
const base = (dir: string) => dir.slice(dir.lastIndexOf('/') + 1);

function request(dir: string, device: TransformersDevice): GeneratorLoadRequest {
  return { kind: 'transformers', model: base(dir), localModelPath: parent(dir), allowRemoteModels: false, device, dtype: 'fp32' };
}

const judgeChat: ChatMessage[] = [
  { role: 'system', content: 'You are a process reward model. Answer \\boxed{1}, \\boxed{-1} or \\boxed{0}.' },
  { role: 'user', content: 'Assistant said: 2 + 2 = 4.\nUser replied: thanks, next question.' },
];

async function load(req: GeneratorLoadRequest, progress: GeneratorProgress[] = []) {
  return WorkerGenerator.load(req, (p) => progress.push(p), 'judge');
}

/** The text of greedy token 1..n, so a test can pick a stop string that is one whole token. */
async function tokenTexts(gen: WorkerGenerator, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let k = 1; k <= n; k++) out.push(await gen.generate(judgeChat, { temperature: 0, maxNewTokens: k }));
  return out;
}

beforeAll(async () => {
  // The second load below must find what the first one cached, and nothing older.
  await caches.delete('transformers-cache');
});

/** A fresh load reports every file, and the weights' bytes in several reports, not one at the end. */
function expectLoadProgress(gen: WorkerGenerator, device: TransformersDevice, progress: GeneratorProgress[]) {
  expect(gen.kind).toBe('transformers');
  expect(gen.source).toMatchObject({ kind: 'transformers', device, model: base(onnxDir), dtype: 'fp32' });
  expect(gen.source?.library).toMatch(/^@huggingface\/transformers \d+\.\d+/);
  const files = new Set(progress.map((p) => p.file));
  for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx']) expect(files).toContain(f);
  const weights = progress.filter((p) => p.file === 'onnx/model.onnx');
  const last = weights.at(-1)!;
  expect(last.total).toBeGreaterThan(10_000_000);
  expect(last.loaded).toBe(last.total);
  expect(weights.filter((p) => p.loaded > 0 && p.loaded < p.total!).length).toBeGreaterThan(0);
}

/** A chat request, through the Qwen3 chat template: random weights answer garbage, but an answer. */
async function expectChatAnswer(gen: WorkerGenerator): Promise<string> {
  const answer = await gen.generate(judgeChat, { temperature: 0, maxNewTokens: 6 });
  expect(typeof answer).toBe('string');
  expect(answer.length).toBeGreaterThan(0);
  return answer;
}

/** A seeded sample repeats, also when another call runs beside it; another seed changes it. */
async function expectSeeds(gen: WorkerGenerator) {
  const sample = (seed: number) => gen.generate(judgeChat, { temperature: 1, topP: 0.95, maxNewTokens: 5, seed });
  const a = await sample(7);
  const [a2, b] = await Promise.all([sample(7), sample(8)]);
  expect(a2).toBe(a);
  expect(b).not.toBe(a);
}

/** An aborted request rejects with AbortError, and the same worker serves the next one. */
async function expectAbortThenServe(gen: WorkerGenerator) {
  const controller = new AbortController();
  const pending = gen.generate(judgeChat, { temperature: 1, maxNewTokens: 400, seed: 1, signal: controller.signal });
  setTimeout(() => controller.abort(), 50);
  await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  expect(await gen.generate(judgeChat, { temperature: 0, maxNewTokens: 3 })).not.toBe('');
}

describe('transformers.js judge in its worker (wasm)', () => {
  it('loads with file and byte progress, then again from the cache; answers a chat, honours max tokens, stop strings and seeds', async () => {
    const first: GeneratorProgress[] = [];
    const gen = await load(request(onnxDir, 'wasm'), first);
    let answer: string;
    try {
      expectLoadProgress(gen, 'wasm', first);
      answer = await expectChatAnswer(gen);
      // Greedy, the same twice.
      expect(await gen.generate(judgeChat, { temperature: 0, maxNewTokens: 6 })).toBe(answer);
      // Max tokens: each longer budget extends the greedy text it had.
      const texts = await tokenTexts(gen, 4);
      expect(answer.startsWith(texts[3])).toBe(true);
      for (let k = 1; k < texts.length; k++) expect(texts[k].startsWith(texts[k - 1])).toBe(true);
      expect(texts[0].length).toBeLessThan(answer.length);

      // A stop string: the answer ends before it, and generation stops there.
      const k = [2, 3, 1].find((i) => texts[i].length > texts[i - 1].length && !texts[i].includes('\uFFFD'));
      if (k !== undefined) {
        const stop = texts[k].slice(texts[k - 1].length);
        const expected = answer.slice(0, answer.indexOf(stop));
        expect(await gen.generate(judgeChat, { temperature: 0, maxNewTokens: 6, stop: [stop] })).toBe(expected);
      }
      await expectSeeds(gen);
    } finally {
      gen.terminate();
    }

    // A second load in a new worker reads the files from Cache Storage and answers the same.
    const second: GeneratorProgress[] = [];
    const again = await load(request(onnxDir, 'wasm'), second);
    try {
      expect(second.filter((p) => p.file === 'onnx/model.onnx').every((p) => p.fromCache)).toBe(true);
      expect(second.some((p) => p.file === 'onnx/model.onnx')).toBe(true);
      expect(await again.generate(judgeChat, { temperature: 0, maxNewTokens: 6 })).toBe(answer);
    } finally {
      again.terminate();
    }
  });

  it('rejects an aborted request with AbortError and serves the next one', async () => {
    const gen = await load(request(onnxDir, 'wasm'));
    try {
      await expectAbortThenServe(gen);
    } finally {
      gen.terminate();
    }
  });
});

// One load on WebGPU: which files load, from the network or the cache, does not depend on the
// device, and SwiftShader makes every load and token slow.
describe('transformers.js judge in its worker (webgpu)', () => {
  it('loads with file and byte progress, answers a chat, repeats a seeded sample, and rejects an aborted request with AbortError, then serves the next one', async () => {
    const progress: GeneratorProgress[] = [];
    const gen = await load(request(onnxDir, 'webgpu'), progress);
    try {
      expectLoadProgress(gen, 'webgpu', progress);
      await expectChatAnswer(gen);
      await expectSeeds(gen);
      await expectAbortThenServe(gen);
    } finally {
      gen.terminate();
    }
  });
});

describe('transformers.js model folders', () => {
  it('a picked folder of ONNX files loads like the served one and answers the same', async () => {
    const names = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'];
    const files = await Promise.all(names.map(async (path) => ({ path, file: await (await fetch(`${parent(onnxDir)}${base(onnxDir)}/${path}`)).blob() })));
    const progress: GeneratorProgress[] = [];
    const picked = await load({ kind: 'transformers', model: 'my-judge-folder', device: 'wasm', files }, progress);
    const served = await load(request(onnxDir, 'wasm'));
    try {
      // The folder holds only model.onnx, so fp32 is the variant it runs.
      expect(picked.source).toMatchObject({ model: 'my-judge-folder', dtype: 'fp32', device: 'wasm' });
      expect(progress.some((p) => p.file === 'onnx/model.onnx' && p.fromCache === false)).toBe(true);
      const opts = { temperature: 0, maxNewTokens: 5 };
      expect(await picked.generate(judgeChat, opts)).toBe(await served.generate(judgeChat, opts));
    } finally {
      picked.terminate();
      served.terminate();
    }
  });

  it('a folder without ONNX files gets a one-line error that says what to do', async () => {
    const error = await load(request(plainDir, 'wasm')).then(
      () => null,
      (e: Error) => e,
    );
    expect(`${error?.name}: ${error?.message}`).toMatch(/^NoOnnxWeightsError: /);
    expect(error?.message).toMatch(/has no onnx\/model\.onnx/);
    expect(error?.message).toMatch(/Pick a folder exported for transformers\.js/);
    expect(error?.message).not.toMatch(/\n/);

    const picked = await load({
      kind: 'transformers',
      model: 'safetensors-only',
      device: 'wasm',
      files: [{ path: 'config.json', file: new Blob(['{}']) }],
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(picked?.name).toBe('NoOnnxWeightsError');
  });

  it('a broken config.json gets a one-line error that says what to do', async () => {
    const error = await load(request(brokenDir, 'wasm')).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.name).toBe('BadModelConfigError');
    expect(error?.message).toMatch(/config\.json is not valid JSON/);
    expect(error?.message).toMatch(/download the model folder again, or fix its config\.json\.$/);
    expect(error?.message).not.toMatch(/\n/);
  });
});
