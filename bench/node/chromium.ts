/**
 * The browser half of a run: the bench server, headless Chromium with the test flags
 * (chromium.config.ts), one call of window.__bench.run, the page's console on stderr.
 */
import { chromium } from 'playwright-core';
import { chromiumArgs, chromiumPath } from '../../chromium.config';
import type { Workload } from '../lib/workload';
import { isSkipped } from '../lib/types';
import type { PagePlan, PageResult } from '../page/protocol';
import type { BenchModel } from './models';
import { log } from './log';
import { startServer } from './server';

export interface BrowserRun {
  chromiumVersion: string;
  page: PageResult;
}

/** The page's plan and the folders to serve: each model's own, and its ONNX copy for the peer. */
function planFor(models: BenchModel[], workload: Workload): { plan: PagePlan; folders: Record<string, string> } {
  const folders: Record<string, string> = {};
  const plan: PagePlan = { workload, models: [] };
  for (const m of models) {
    folders[m.key] = m.dir;
    const peerKey = `${m.key}-onnx`;
    if (!isSkipped(m.peerDir)) folders[peerKey] = m.peerDir;
    plan.models.push({ key: m.key, name: m.name, peerKey: isSkipped(m.peerDir) ? m.peerDir : peerKey });
  }
  return { plan, folders };
}

export async function runInChromium(models: BenchModel[], workload: Workload): Promise<BrowserRun> {
  const { plan, folders } = planFor(models, workload);
  const { url, server } = await startServer(folders);
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
  try {
    const page = await browser.newPage();
    // Vite's client announces its HMR socket; nothing else the page logs is noise.
    page.on('console', (m) => !m.text().startsWith('[vite]') && log(`page: ${m.text()}`));
    page.on('pageerror', (e) => log(`page error: ${e.stack ?? e.message}`));
    // Probes for optional files 404 by design; the URL says whether one matters.
    page.on('response', (r) => r.status() >= 400 && log(`page: HTTP ${r.status()} for ${r.url()}`));
    log(`bench page at ${url} in Chromium ${browser.version()}`);
    await page.goto(url);
    await page.waitForFunction(() => window.__bench !== undefined, undefined, { timeout: 120_000 });
    const result = await page.evaluate((p) => window.__bench!.run(p), plan);
    return { chromiumVersion: browser.version(), page: result };
  } finally {
    await browser.close();
    await server.close();
  }
}
