/**
 * The browser half of a run: the bench server, headless Chromium with the test flags
 * (chromium.config.ts), one call of window.__bench.run, the page's console on stderr; and the
 * storage durability figure, in a profile on disk.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { chromiumArgs, chromiumPath } from '../../chromium.config';
import type { Workload } from '../lib/workload';
import { isSkipped, type DurabilityCell } from '../lib/types';
import type { JudgePlan, PagePlan, PageResult } from '../page/protocol';
import type { PaperPlan } from '../lib/paper';
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
    log(`bench page at ${url} in Chromium ${browser.version()}`);
    await openBenchPage(page, url);
    const result = await page.evaluate((p) => window.__bench!.run(p), plan);
    return { chromiumVersion: browser.version(), page: result };
  } finally {
    await browser.close();
    await server.close();
  }
}

async function openBenchPage(page: Page, url: string): Promise<void> {
  // Vite's client announces its HMR socket; nothing else the page logs is noise.
  page.on('console', (m) => !m.text().startsWith('[vite]') && log(`page: ${m.text()}`));
  page.on('pageerror', (e) => log(`page error: ${e.stack ?? e.message}`));
  // Probes for optional files 404 by design; the URL says whether one matters.
  page.on('response', (r) => r.status() >= 400 && log(`page: HTTP ${r.status()} for ${r.url()}`));
  await page.goto(url);
  await page.waitForFunction(() => window.__bench !== undefined, undefined, { timeout: 120_000 });
}

/**
 * What strict IndexedDB durability costs a training step, in a persistent profile: a plain
 * browser context is incognito, whose IndexedDB lives in memory and never flushes.
 */
export async function durabilityInChromium(): Promise<DurabilityCell & { userAgent: string }> {
  const { url, server } = await startServer({});
  const profile = await mkdtemp(join(tmpdir(), 'nextstate-bench-profile-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, args: chromiumArgs, headless: true });
  try {
    const page = await context.newPage();
    await openBenchPage(page, url);
    log(`durability: ${url} in a profile on disk (${profile})`);
    const cell = await page.evaluate(() => window.__bench!.durability());
    return { userAgent: await page.evaluate(() => navigator.userAgent), ...cell };
  } finally {
    await context.close();
    await server.close();
    await rm(profile, { recursive: true, force: true });
  }
}

/**
 * What a judged turn costs with transformers.js as the judge, on each model's ONNX copy, WASM and
 * WebGPU (page/judge.ts).
 */
export async function judgeInChromium(models: BenchModel[], opts: Omit<JudgePlan, 'models'>) {
  const folders: Record<string, string> = {};
  const plan: JudgePlan = { ...opts, models: [] };
  for (const m of models) {
    if (isSkipped(m.peerDir)) continue;
    folders[`${m.key}-onnx`] = m.peerDir;
    plan.models.push({ name: m.name, peerKey: `${m.key}-onnx` });
  }
  const { url, server } = await startServer(folders);
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
  try {
    const page = await browser.newPage();
    await openBenchPage(page, url);
    const turns = await page.evaluate((p) => window.__bench!.judge(p), plan);
    return { chromiumVersion: browser.version(), userAgent: await page.evaluate(() => navigator.userAgent), plan: opts, turns };
  } finally {
    await browser.close();
    await server.close();
  }
}

/** The paper-size model (lib/paper.ts) on Chromium's WebGPU: nothing to serve, the weights are generated in the tab. */
export async function paperInChromium(plan: PaperPlan) {
  const { url, server } = await startServer({});
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
  try {
    const page = await browser.newPage();
    await openBenchPage(page, url);
    const run = await page.evaluate((p) => window.__bench!.paper(p), plan);
    return { chromiumVersion: browser.version(), run };
  } finally {
    await browser.close();
    await server.close();
  }
}
