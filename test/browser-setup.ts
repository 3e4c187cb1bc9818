/**
 * Global setup of the browser test project (runs in Node): writes the tiny fixture model and
 * tells the browser tests where it and stories260K (test/data-dir.ts) are. The test server serves
 * both through Vite's /@fs/ paths (server.fs.allow in vitest.config.ts).
 */
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { TINY_MODEL_ROOT, tinyModel } from './fixtures/tiny-model';
import { dataPath } from './data-dir';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of the tiny Qwen3 fixture (HF layout). */
    tinyModelDir: string;
    /** Absolute path of the stories260K model folder (setup throws when it is missing). */
    stories260KDir: string;
    /** The tiny Qwen3 fixture with onnx/model.onnx (transformers.js's layout), same weights. */
    tinyOnnxDir: string;
    /** A copy of the tiny fixture's folder whose config.json is not JSON. */
    brokenConfigDir: string;
  }
}

/** The tiny model's tokenizer files beside a damaged config.json. */
async function brokenConfigModel(from: string): Promise<string> {
  const dir = join(TINY_MODEL_ROOT, 'broken-config-model');
  await mkdir(join(dir, 'onnx'), { recursive: true });
  await writeFile(join(dir, 'config.json'), '{ "model_type": "qwen3", "hidden_size": 32,');
  for (const f of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) await copyFile(join(from, f), join(dir, f));
  return dir;
}

export default async function setup(project: TestProject) {
  const { dir } = await tinyModel({ family: 'qwen3' });
  project.provide('tinyModelDir', dir);
  project.provide('tinyOnnxDir', (await tinyModel({ family: 'qwen3', onnx: true })).dir);
  project.provide('brokenConfigDir', await brokenConfigModel(dir));
  project.provide('stories260KDir', dataPath('models/stories260K'));
}
