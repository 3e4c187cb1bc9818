import { defineConfig } from '@playwright/test';
import { chromiumArgs, chromiumPath } from './chromium.config.ts';
import { PREVIEW_PORT } from './e2e/ports.ts';

/**
 * End-to-end tests against the built app (run `vite build` first; `npm test` does), served by
 * `vite preview` so the COOP/COEP/CSP headers are the real ones. Chromium is the system one
 * (CHROMIUM_PATH, default /usr/bin/chromium), never a Playwright download. The port is E2E_PORT's
 * (e2e/ports.ts, default 4173).
 */
export const BASE_URL = `http://127.0.0.1:${PREVIEW_PORT}`;

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  outputDir: 'test-results',
  timeout: 120_000,
  expect: { timeout: 60_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [['list']],
  use: {
    baseURL: BASE_URL,
    browserName: 'chromium',
    headless: true,
    launchOptions: { executablePath: chromiumPath, args: chromiumArgs },
    trace: 'retain-on-failure',
  },
  webServer: {
    command: `npx vite preview --host 127.0.0.1 --port ${PREVIEW_PORT} --strictPort`,
    url: BASE_URL,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
