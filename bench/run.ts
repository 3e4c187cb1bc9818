/**
 * `npm run bench`: the engine's speed and memory on CPU and WebGPU, in Node and in headless
 * Chromium, against transformers.js on the same weights. One JSON object on stdout (also
 * bench/results/latest.json); progress on stderr. Flags: see node/args.ts or --help.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { attempt } from './lib/attempt';
import { isSkipped, type Maybe } from './lib/types';
import { workloadFor } from './lib/workload';
import { parseBenchArgs } from './node/args';
import { durabilityInChromium, judgeInChromium, runInChromium, type BrowserRun } from './node/chromium';
import { log } from './node/log';
import { LoadWatch, machineInfo } from './node/machine';
import { benchModels, type BenchModel } from './node/models';
import { buildReport } from './node/report';
import { runInNode } from './node/suite';
import { accuracySuite } from './node/accuracy';
import { paperSuite } from './node/paper';
import { resolveDataPath } from '../test/data-dir';

const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'results');
const RESULTS = join(RESULTS_DIR, 'latest.json');

async function write(file: string, report: object): Promise<void> {
  const json = JSON.stringify(report, null, 2);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, json + '\n');
  process.stdout.write(json + '\n');
}

/** `--only durability`: the storage figure alone, without the engine's minutes. */
async function durabilityOnly(startedAt: Date, load: LoadWatch): Promise<void> {
  const durability = await attempt('the durability measurement', durabilityInChromium, log);
  const file = join(RESULTS_DIR, 'durability.json');
  await write(file, {
    benchmark: 'next-state-lab IndexedDB durability per training step',
    startedAt: startedAt.toISOString(),
    durationS: Math.round((Date.now() - startedAt.getTime()) / 1000),
    machine: { ...machineInfo(), load: load.stop() },
    durability,
  });
  log(`done; written to ${file}`);
}

/** `--only judge`: a judged turn with transformers.js as the judge, on the models' ONNX copies. */
async function judgeOnly(startedAt: Date, load: LoadWatch, quick: boolean, extra: string[], budgetS: number | undefined): Promise<void> {
  const models = (await benchModels(extra)).filter((m): m is BenchModel => !isSkipped(m));
  const plan = { maxNewTokens: quick ? 16 : 64, reps: quick ? 2 : 3, budgetMs: (budgetS ?? (quick ? 20 : 45)) * 1000 };
  const judge = await attempt('the judged-turn measurement', () => judgeInChromium(models, plan), log);
  const file = join(RESULTS_DIR, 'judge.json');
  await write(file, {
    benchmark: 'next-state-lab judged turn with transformers.js as the judge',
    startedAt: startedAt.toISOString(),
    durationS: Math.round((Date.now() - startedAt.getTime()) / 1000),
    machine: { ...machineInfo(), load: load.stop() },
    models: Object.fromEntries(models.map((m) => [m.name, m.summary])),
    judge,
  });
  log(`done; written to ${file}`);
}

/** `--only accuracy` and `--only paper`: a report of their own, beside the machine it ran on. */
async function partOnly(name: 'accuracy' | 'paper', benchmark: string, startedAt: Date, load: LoadWatch, measure: () => Promise<object>): Promise<void> {
  const result = await measure();
  const file = join(RESULTS_DIR, `${name}.json`);
  await write(file, {
    benchmark,
    startedAt: startedAt.toISOString(),
    durationS: Math.round((Date.now() - startedAt.getTime()) / 1000),
    machine: { ...machineInfo(), load: load.stop() },
    [name]: result,
  });
  log(`done; written to ${file}`);
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const load = new LoadWatch();
  const args = parseBenchArgs(process.argv.slice(2));
  if (args.only === 'durability') return durabilityOnly(startedAt, load);
  if (args.only === 'judge') return judgeOnly(startedAt, load, args.quick, args.models, args.budgetS);
  if (args.only === 'accuracy') {
    return partOnly('accuracy', 'next-state-lab weight formats against f32', startedAt, load, async () => {
      const models = (await benchModels([resolveDataPath('models/TinyStories-656K'), ...args.models])).filter((m): m is BenchModel => !isSkipped(m));
      return accuracySuite(models, { sequences: args.quick ? 4 : 8, tokens: args.quick ? 24 : 48, dawn: args.dawn });
    });
  }
  if (args.only === 'paper') return partOnly('paper', "next-state-lab the paper's policy size", startedAt, load, () => paperSuite(args));
  const workload = workloadFor(args.quick, args.budgetS);
  log(`${args.quick ? 'quick' : 'full'} run, ${workload.budgetMs / 1000} s budget per measurement`);
  const models = await benchModels(args.models);
  const measured = models.filter((m): m is BenchModel => !isSkipped(m));
  const node = await runInNode(measured, workload, { dawn: args.dawn });
  const browser: Maybe<BrowserRun> = args.browser
    ? await attempt('the headless Chromium run', () => runInChromium(measured, workload), log)
    : { skipped: '--no-browser' };
  const durability = args.browser ? await attempt('the durability measurement', durabilityInChromium, log) : { skipped: '--no-browser' };
  const report = buildReport({ startedAt, workload, models, node, browser, durability, load: load.stop() });
  await write(RESULTS, report);
  log(`done in ${report.durationS} s; written to ${RESULTS}`);
}

main().then(
  // Dawn keeps worker threads alive for good (src/gpu/webgpu/node.ts), so exit explicitly.
  () => process.exit(0),
  (e) => {
    log(`failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
