/**
 * `npm run bench -- --only paper`: the paper's policy size on this machine (lib/paper.ts):
 * Qwen3-4B's real config with random q4 weights in Node on Dawn, and Qwen3-0.6B's in headless
 * Chromium; `--quick` runs Qwen3-0.6B in both places instead.
 */
import { readFileSync } from 'node:fs';
import { createNodeWebGPUBackend } from '../../src/gpu/webgpu/node';
import { adapterReport } from '../lib/adapter';
import { attempt } from '../lib/attempt';
import { paperRun, type PaperPlan } from '../lib/paper';
import { paperInChromium } from './chromium';
import { log } from './log';

function plan(name: string): PaperPlan {
  const config = JSON.parse(readFileSync(new URL(`../../data/model-configs/${name}.json`, import.meta.url), 'utf8')) as unknown;
  // A short batch: one sequence of 16 tokens, the prompt's first token and 15 trained ones.
  return { name, config, format: 'q4', promptTokens: 8, newTokens: 4, train: { sequences: 1, tokens: 16 }, loraRank: 16 };
}

export async function paperSuite(opts: { quick: boolean; dawn: boolean; browser: boolean }) {
  const nodeModel = opts.quick ? 'Qwen3-0.6B' : 'Qwen3-4B';
  const dawn = opts.dawn
    ? await attempt(
        `${nodeModel} on Dawn`,
        async () => {
          const be = await createNodeWebGPUBackend();
          try {
            return await paperRun(be, plan(nodeModel), adapterReport(be.adapter!), log);
          } finally {
            be.destroy();
          }
        },
        log,
      )
    : { skipped: '--no-dawn' };
  const chromium = opts.browser
    ? await attempt('Qwen3-0.6B in headless Chromium', () => paperInChromium(plan('Qwen3-0.6B')), log)
    : { skipped: '--no-browser' };
  return { dawn, chromium };
}
