/**
 * The device bench: the engine on a lent GPU, through Dawn in Node, on random-weight models of
 * two real shapes (Qwen2.5-0.5B's and Qwen3-4B's) in each weight format asked: prefill and
 * decode tokens/s at batch 1 and 16, a LoRA rank-16 step's tokens/s, peak memory, and a matmul's
 * share of the device's peak. `npm run bench:device` compiles this file into device-bundle/;
 * bench/README.md says how to run it. One JSON object on stdout, progress on stderr.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CausalLM } from '../../src/gpu/model';
import type { WeightFormat } from '../../src/gpu/quant';
import type { WebGPUBackend } from '../../src/gpu/webgpu/backend';
import { attempt } from '../lib/attempt';
import { measureModel } from '../lib/engine';
import { measureMatmul } from '../lib/matmul';
import { now, round } from '../lib/stats';
import { isSkipped, type MatmulCell, type Maybe, type Skipped } from '../lib/types';
import { prefillMacsPerToken } from '../lib/work';
import { log } from '../node/log';
import { machineInfo } from '../node/machine';
import { withDawn } from '../node/suite';
import { parseDeviceArgs, USAGE, type DeviceArgs } from './args';
import { describeAdapter, refusal, type DeviceAdapter } from './gpu';
import { devicePeak, shareOfPeak, type Peak } from './peak';
import { deviceWorkload, gflopsFrom, MATMUL_BUDGET_MS, matmulFits, msPerParam, planCell, type DeviceWorkload, type MatmulSize } from './plan';
import { randomModel } from '../../src/gpu/random-model';
import { summarize, type DeviceReport, type FormatRun } from './report';
import { deviceShape, shapeSummary, type Shape } from './shapes';

/** Set by scripts/build-device-bundle.mjs: what the bundle was built from. */
declare const __DEVICE_BUNDLE__: Record<string, string> | undefined;
const BUNDLE = typeof __DEVICE_BUNDLE__ === 'undefined' ? { built: 'not bundled (run from source)' } : __DEVICE_BUNDLE__;

/** Past the budget by this much, the run prints what it has and stops: a report beats a killed command. */
const GRACE_MS = 60_000;

class Refused extends Error {}

/** To --out, or else stdout (run.sh prints the file, so nothing native can mix into stdout). */
function emit(report: object, out: string | null): void {
  const json = JSON.stringify(report, null, 2) + '\n';
  if (!out) return void process.stdout.write(json);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, json);
}

const NOT_REACHED = { skipped: 'not reached: the run ended first' };
const CUT_OFF = { skipped: 'cut off: the run passed its hard deadline during this measurement' };

/**
 * Each size in turn on one device, while the last one's rate predicts the next fits. `track`
 * names the figure being measured, so the watchdog can say which one it cut off.
 */
async function matmulFigures(w: DeviceWorkload, peak: Maybe<Peak>, out: DeviceReport['matmul'], track: (key: string | null) => void): Promise<void> {
  const failed = await attempt(
    'the matmul',
    () =>
      withDawn(async (be) => {
        let prev: (MatmulSize & { gflops: number }) | null = null;
        let over: Skipped | null = null;
        for (const size of w.matmuls) {
          track(`n${size.n}`);
          const fits: true | Skipped = over ?? (prev ? matmulFits(prev, size, w.reps, MATMUL_BUDGET_MS) : true);
          const mw = { ...w, matmulN: size.n, budgetMs: MATMUL_BUDGET_MS, cheapMs: MATMUL_BUDGET_MS / 4 };
          const cell: Maybe<MatmulCell> = fits === true ? await measureMatmul(be, mw, size.productsPerRep) : fits;
          out[`n${size.n}`] = isSkipped(cell)
            ? cell
            : { ...cell, tflops: round(cell.gflops.median / 1000), shareOfPeak: shareOfPeak(cell.gflops.median, peak) };
          log(`matmul ${size.n}^3 x ${size.productsPerRep}: ${isSkipped(cell) ? cell.skipped : `${cell.gflops.median} GFLOP/s`}`);
          if (isSkipped(cell)) over ??= { skipped: `not tried: ${size.n}^3 was ${cell.skipped}` };
          else prev = { ...size, gflops: cell.gflops.median };
        }
      }),
    log,
  );
  track(null);
  if (isSkipped(failed)) for (const [key, cell] of Object.entries(out)) if (cell === NOT_REACHED) out[key] = failed;
}

/** One model in one format on a fresh device: create its random weights, then measure. */
async function measureFormat(be: WebGPUBackend, shape: Shape, format: WeightFormat, seed: number, w: DeviceWorkload, estimateMs: number, peak: Maybe<Peak>) {
  const label = `${shape.name} ${format}`;
  be.resetPeakMemory();
  const t0 = now();
  const model: CausalLM = randomModel(shape.config, be, { format, seed });
  // Weights are written through the queue; a read waits for the uploads to finish.
  const probe = be.zeros([1]);
  await be.read(probe);
  be.dispose(probe);
  const create = { ms: round(now() - t0), estimateMs: round(estimateMs), allocatedBytes: be.memory().allocated };
  log(`${label}: random weights in ${create.ms} ms (expected ~${create.estimateMs}), ${(create.allocatedBytes / 2 ** 20).toFixed(0)} MiB on the device`);
  try {
    const figures = await measureModel(model, w, label, log);
    const big = figures.inference[`b${w.batches[w.batches.length - 1]}`];
    const shapeOfPrefill = { tokens: w.promptTokens, lossTokens: w.train.completionTokens };
    const prefillRate: FormatRun['prefillRate'] =
      !big || isSkipped(big)
        ? { skipped: 'no prefill figure at the largest batch' }
        : (() => {
            const gflops = gflopsFrom(prefillMacsPerToken(shape.config, shapeOfPrefill), big.prefillTokensPerS.median);
            return { batch: big.batch, gflops, shareOfPeak: shareOfPeak(gflops, peak) };
          })();
    const run: FormatRun = {
      format,
      budgetMsPerMeasurement: w.budgetMs,
      create,
      ...figures,
      prefillRate,
      peakBytes: be.memory().peak,
    };
    return { run, createMs: create.ms };
  } finally {
    for (const t of new Set(model.weights.values())) be.dispose(t);
  }
}

async function main(args: DeviceArgs): Promise<void> {
  const startedAt = new Date();
  const deadline = now() + args.budgetS * 1000;
  const w = deviceWorkload(args.quick);
  log(`device bench: ${args.quick ? 'quick' : 'full'} run, ${args.budgetS} s budget`);
  let adapter: DeviceAdapter;
  try {
    adapter = await withDawn(async (be) => describeAdapter(be));
  } catch (e) {
    throw new Refused(`no WebGPU adapter: ${(e as Error).message}`);
  }
  log(`adapter: ${adapter.vendor} / ${adapter.architecture} / ${adapter.description} (shader-f16 ${adapter.shaderF16}, ${adapter.kernels} kernels)`);
  const refused = refusal(adapter, args.allowCpu);
  if (refused) throw new Refused(refused);
  const peak = devicePeak(adapter, args.peakTflops);

  const shapes = args.shapes.map((name) => deviceShape(name, args.quick));
  const models: DeviceReport['models'] = {};
  // Formats outer, shapes inner: the first format's figures for every shape come first, so a
  // short budget drops the comparison format, not a shape.
  const cells = args.formats.flatMap((format) => shapes.map((shape) => ({ shape, format })));
  for (const { shape, format } of cells) {
    models[shape.name] ??= { shape: shapeSummary(shape), formats: {} };
    models[shape.name]!.formats[format] = NOT_REACHED;
  }
  const report: DeviceReport = {
    benchmark: 'next-state-lab engine on a GPU: random-weight models through Dawn in Node',
    startedAt: startedAt.toISOString(),
    durationS: 0,
    complete: false,
    bundle: BUNDLE,
    args: { quick: args.quick, allowCpu: args.allowCpu, budgetS: args.budgetS, seed: args.seed },
    machine: machineInfo(),
    adapter,
    peak,
    workload: (({ budgetMs: _b, cheapMs: _c, ...rest }) => rest)(w),
    summary: {},
    matmul: Object.fromEntries(w.matmuls.map((m) => [`n${m.n}`, NOT_REACHED])),
    models,
  };
  const finish = (complete: boolean) => {
    report.complete = complete;
    report.durationS = Math.round((Date.now() - startedAt.getTime()) / 1000);
    report.summary = summarize(models);
    emit(report, args.out);
  };
  /** Marks the figure being measured as cut off; set while one is. */
  let cutOff: (() => void) | null = null;
  // Timers fire while the engine awaits the device, so a stuck measurement still ends in a report.
  const watchdog = setTimeout(
    () => {
      log(`the hard deadline (budget + ${GRACE_MS / 1000} s) passed; printing what was measured`);
      cutOff?.();
      finish(false);
      process.exit(0);
    },
    args.budgetS * 1000 + GRACE_MS,
  );

  await matmulFigures(w, peak, report.matmul, (key) => {
    cutOff = key ? () => (report.matmul[key] = CUT_OFF) : null;
  });

  const created: { ms: number; params: number }[] = [];
  for (let i = 0; i < cells.length; i++) {
    const { shape, format } = cells[i];
    const plan = planCell(
      deadline - now(),
      cells.slice(i).map((c) => shapeSummary(c.shape).parameters),
      msPerParam(created),
    );
    if (isSkipped(plan)) {
      log(`${shape.name} ${format}: ${plan.skipped}`);
      models[shape.name]!.formats[format] = plan;
      continue;
    }
    cutOff = () => (models[shape.name]!.formats[format] = CUT_OFF);
    const cw = { ...w, budgetMs: plan.budgetMs, cheapMs: plan.cheapMs };
    log(`${shape.name} ${format}: ${(plan.budgetMs / 1000).toFixed(1)} s per measurement`);
    const result = await attempt(
      `${shape.name} ${format}`,
      () => withDawn((be) => measureFormat(be, shape, format, args.seed, cw, plan.createEstimateMs, peak)),
      log,
    );
    if (!isSkipped(result)) created.push({ ms: result.createMs, params: shapeSummary(shape).parameters });
    models[shape.name]!.formats[format] = isSkipped(result) ? result : result.run;
    cutOff = null;
  }
  clearTimeout(watchdog);
  finish(true);
  log(`done in ${report.durationS} s${args.out ? `; written to ${args.out}` : ''}`);
}

let args: DeviceArgs | null;
try {
  args = parseDeviceArgs(process.argv.slice(2));
} catch (e) {
  process.stderr.write(`device bench: ${(e as Error).message}\n${USAGE}\n`);
  process.exit(2);
}
if (!args) {
  process.stderr.write(USAGE + '\n');
  process.exit(0);
}
const out = args.out;
main(args).then(
  // Dawn keeps worker threads alive for good (src/gpu/webgpu/node.ts), so exit explicitly.
  () => process.exit(0),
  (e) => {
    if (e instanceof Refused) {
      const line = e.message.replace(/\s+/g, ' ');
      process.stderr.write(`device bench: ${line}\n`);
      emit({ failed: line }, out);
      process.exit(3);
    }
    log(`failed: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
