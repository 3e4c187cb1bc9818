/**
 * Global setup of the browser test project (runs in Node): writes the tiny fixture model and
 * tells the browser tests where it and ../shared are. The test server serves both through
 * Vite's /@fs/ paths (server.fs.allow in vitest.config.ts).
 */
import type { TestProject } from 'vitest/node';
import { tinyModel } from './fixtures/tiny-model';
import { requireShared } from './shared-dir';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of the tiny Qwen3 fixture (HF layout). */
    tinyModelDir: string;
    /** Absolute path of ../shared, or '' when it is missing (the loud line is printed here). */
    sharedDir: string;
  }
}

export default async function setup(project: TestProject) {
  const { dir } = await tinyModel({ family: 'qwen3' });
  project.provide('tinyModelDir', dir);
  project.provide('sharedDir', requireShared('.') ?? '');
}
