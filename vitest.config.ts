import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { playwright } from '@vitest/browser-playwright';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { chromiumArgs, chromiumPath } from './chromium.config.ts';
import { TINY_MODEL_ROOT } from './test/fixtures/paths.ts';
import { dataRoot } from './test/data-dir.ts';
import { serveCommands } from './test/support/cli/serve-commands.ts';
import { LongFirstSequencer } from './test/support/long-first-sequencer.ts';

export default defineConfig({
  test: {
    sequence: { sequencer: LongFirstSequencer },
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['**/*.browser.test.ts', 'node_modules/**'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Vitest's default leaves a core idle (one worker on two cores); the learning claims are
          // minutes of single-threaded CPU each, so every core runs test files.
          maxWorkers: availableParallelism(),
        },
      },
      {
        plugins: [svelte()],
        // Browser tests fetch the generated fixtures and the data/ models (or NEXTSTATE_SHARED's)
        // through /@fs/.
        server: {
          fs: { allow: ['.', TINY_MODEL_ROOT, dataRoot] },
          // Cross-origin isolated, as the lab is (src/deploy/headers.ts): the fast CPU backend's
          // shared memory needs it.
          headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
        },
        // Pre-bundled up front: discovering them mid-run makes Vite reload the test page.
        optimizeDeps: {
          include: ['comlink', '@huggingface/transformers', '@huggingface/tokenizers', 'dexie', 'uplot', '@noble/hashes/sha2.js', '@noble/hashes/utils.js'],
        },
        test: {
          name: 'browser',
          globalSetup: ['test/browser-setup.ts'],
          include: ['src/**/*.browser.test.ts', 'test/**/*.browser.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({
              launchOptions: { executablePath: chromiumPath, args: chromiumArgs },
            }),
            instances: [{ browser: 'chromium' }],
            // A real `nextstate serve` for the tests that watch or drive one.
            commands: serveCommands,
          },
        },
      },
    ],
  },
});
