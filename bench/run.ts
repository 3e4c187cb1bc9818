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
import { serveSuite } from './node/serve';
import { hostileSuite } from './node/hostile';
import { resolveDataPath } from '../test/data-dir';

const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'results');
const RESULTS = join(RESULTS_DIR, 'latest.json');

async function write(file: string, report: object): Promise<void> {
  const json = JSON.stringify(report, null, 2);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, json + '\n');
  process.stdout.write(json + '\n');
}

/**
 * `--only PART`: one part's figures in a report of their own, `bench/results/PART.json`, after the
 * run's time and the machine it ran on (`measure` gives the report's other fields).
 */
async function partOnly(name: string, benchmark: string, startedAt: Date, load: LoadWatch, measure: () => Promise<Record<string, unknown>>): Promise<void> {
  const fields = await measure();
  const file = join(RESULTS_DIR, `${name}.json`);
  await write(file, {
    benchmark,
    startedAt: startedAt.toISOString(),
    durationS: Math.round((Date.now() - startedAt.getTime()) / 1000),
    machine: { ...machineInfo(), load: load.stop() },
    ...fields,
  });
  log(`done; written to ${file}`);
}

/** The storage figure alone, without the engine's minutes. */
async function durabilityPart(): Promise<Record<string, unknown>> {
  return { durability: await attempt('the durability measurement', durabilityInChromium, log) };
}

/** A judged turn with transformers.js as the judge, on the models' ONNX copies. */
async function judgePart(quick: boolean, extra: string[], budgetS: number | undefined): Promise<Record<string, unknown>> {
  const models = (await benchModels(extra)).filter((m): m is BenchModel => !isSkipped(m));
  const plan = { maxNewTokens: quick ? 16 : 64, reps: quick ? 2 : 3, budgetMs: (budgetS ?? (quick ? 20 : 45)) * 1000 };
  const turns = await attempt('the judged-turn measurement', () => judgeInChromium(models, plan), log);
  return { models: Object.fromEntries(models.map((m) => [m.name, m.summary])), judge: turns };
}

/** The weight formats against f32; TinyStories-656K from data/models joins the usual models. */
async function accuracyPart(quick: boolean, extra: string[], dawn: boolean): Promise<Record<string, unknown>> {
  const models = (await benchModels([resolveDataPath('models/TinyStories-656K'), ...extra])).filter((m): m is BenchModel => !isSkipped(m));
  return { accuracy: await accuracySuite(models, { sequences: quick ? 4 : 8, tokens: quick ? 24 : 48, dawn }) };
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const load = new LoadWatch();
  const args = parseBenchArgs(process.argv.slice(2));
  const only = (name: string, benchmark: string, measure: () => Promise<Record<string, unknown>>) => partOnly(name, benchmark, startedAt, load, measure);
  if (args.only === 'durability') return only('durability', 'next-state-lab IndexedDB durability per training step', durabilityPart);
  if (args.only === 'judge') {
    return only('judge', 'next-state-lab judged turn with transformers.js as the judge', () => judgePart(args.quick, args.models, args.budgetS));
  }
  if (args.only === 'accuracy') return only('accuracy', 'next-state-lab weight formats against f32', () => accuracyPart(args.quick, args.models, args.dawn));
  if (args.only === 'paper') return only('paper', "next-state-lab the paper's policy size", async () => ({ paper: await paperSuite(args) }));
  if (args.only === 'serve')
    return only('serve', 'next-state-lab nextstate serve under concurrent clients', async () => ({ serve: await serveSuite(args.quick, log) }));
  if (args.only === 'hostile') return only('hostile', 'next-state-lab hostile inputs to the nextstate command', () => hostileSuite(log));
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
