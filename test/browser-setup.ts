/**
 * Global setup of the browser test project (runs in Node): writes the tiny fixture model and
 * tells the browser tests where it and stories260K (test/data-dir.ts) are. The test server serves
 * both through Vite's /@fs/ paths (server.fs.allow in vitest.config.ts).
 */
import type { TestProject } from 'vitest/node';
import { tinyModel } from './fixtures/tiny-model';
import { dataPath } from './data-dir';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of the tiny Qwen3 fixture (HF layout). */
    tinyModelDir: string;
    /** Absolute path of the stories260K model folder (setup throws when it is missing). */
    stories260KDir: string;
  }
}

export default async function setup(project: TestProject) {
  const { dir } = await tinyModel({ family: 'qwen3' });
  project.provide('tinyModelDir', dir);
  project.provide('stories260KDir', dataPath('models/stories260K'));
}
