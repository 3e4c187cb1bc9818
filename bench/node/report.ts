/** Puts the Node and browser halves of a run together into the one JSON object it prints. */
import { ratio } from '../lib/ratios';
import { isSkipped, type DurabilityCell, type Maybe } from '../lib/types';
import type { Workload } from '../lib/workload';
import type { PageModelResult, PageResult } from '../page/protocol';
import type { BrowserRun } from './chromium';
import { machineInfo, type LoadWatch } from './machine';
import type { ModelEntry } from './models';
import type { NodeRun } from './suite';

export const NOTES = [
  'Rates are medians over `reps` timed repetitions after `warmups` untimed calls; a decode repetition is the rate over `decodeSteps` consecutive steps of one generation.',
  'Prefill is timed to the first token: forward over the prompt, logits and greedy pick. Both compute logits at the last prompt position only: the ONNX copies take num_logits_to_keep, which transformers.js sets to 1 when it generates.',
  'A measurement whose warm-up shows it would run past the time budget is reported as skipped with the warm-up time; --budget raises the limit.',
  'Ratios are engine / peer, like with like in the same Chromium: engine WebGPU over onnxruntime-web WebGPU, engine CPU (TypeScript, one thread) over onnxruntime-web WASM (SIMD; threads in machine.chromium.peerRuntime). Above 1: the engine is faster.',
  "Training: one full LoRA step (forward with tape, backward, AdamW; old log-probs given, so no scoring pass) on a batch of the largest inference batch's shape; ratioToPrefill divides by that batch's prefill rate (mark to beat: 0.33); workRatio is the step's projection and LM-head work over a prefill's (bench/lib/work.ts), so 1 / workRatio bounds ratioToPrefill at equal FLOP rates, and relativeFlopRate = ratioToPrefill * workRatio.",
  'Memory: backend.memory() bytes. load.allocatedBytes is the loaded model on the device; training.peakBytes the peak during a step.',
  'Load includes hashing what was read (SHA-256 of config.json and every weights file), which run files name the model by.',
  "cpu: the fast CPU backend in Node. simdPeakGflopsPerCore is one core running the kernels' own loop of vector multiply-adds (a multiply and an add are two FLOPs); fractionOfPeak divides a matmul's median by that peak times the threads it ran on. cpu.ops times the other ops of a training step (loss, norms, activations, sampling, gradient norm and AdamW) on the reference backend and on the fast one, same inputs, same run, with speedup = reference median / fast median. cpu-node is the fast backend on all threads, cpu-reference-node the plain-loop oracle; cpu-chromium is the fast backend on the bench page's main thread, one thread, since a page's main thread may not block.",
  "storage.durability: one training step's IndexedDB writes as the lab makes them, in Chromium with a profile on disk; msPerStep.default has every write at the browser's default durability, msPerStep.strict has the run row, step records and checkpoint strict, as the app writes them; extraMsPerStep is the difference of the medians.",
];

export interface Report {
  benchmark: string;
  startedAt: string;
  durationS: number;
  mode: 'full' | 'quick';
  workload: Omit<Workload, 'budgetMs'> & { budgetS: number };
  machine: ReturnType<typeof machineInfo> & {
    load: ReturnType<LoadWatch['stop']>;
    chromium: Maybe<Record<string, unknown>>;
    dawn: NodeRun['dawnAdapter'];
  };
  matmul: Record<string, unknown>;
  cpu: NodeRun['cpu'];
  models: unknown[];
  storage: { durability: Maybe<DurabilityCell> };
  notes: string[];
}

export function buildReport(o: {
  startedAt: Date;
  workload: Workload;
  models: ModelEntry[];
  node: NodeRun;
  browser: Maybe<BrowserRun>;
  durability: Maybe<DurabilityCell>;
  load: ReturnType<LoadWatch['stop']>;
}): Report {
  const { budgetMs, ...w } = o.workload;
  const page: Maybe<PageResult> = isSkipped(o.browser) ? o.browser : o.browser.page;
  const chromium = isSkipped(o.browser)
    ? o.browser
    : {
        version: o.browser.chromiumVersion,
        userAgent: o.browser.page.userAgent,
        hardwareConcurrency: o.browser.page.hardwareConcurrency,
        crossOriginIsolated: o.browser.page.crossOriginIsolated,
        webgpuAdapter: o.browser.page.adapter,
        peerRuntime: o.browser.page.peerRuntime,
      };
  return {
    benchmark: 'next-state-lab engine vs transformers.js',
    startedAt: o.startedAt.toISOString(),
    durationS: Math.round((Date.now() - o.startedAt.getTime()) / 1000),
    mode: w.quick ? 'quick' : 'full',
    workload: { ...w, budgetS: budgetMs / 1000 },
    machine: { ...machineInfo(), load: o.load, chromium, dawn: o.node.dawnAdapter },
    matmul: { 'webgpu-node': o.node.matmul, 'webgpu-chromium': isSkipped(page) ? page : page.matmul },
    cpu: o.node.cpu,
    models: o.models.map((m) => modelReport(m, o.node, page)),
    storage: { durability: o.durability },
    notes: NOTES,
  };
}

function modelReport(m: ModelEntry, node: NodeRun, page: Maybe<PageResult>) {
  if (isSkipped(m)) return m;
  const inPage: Maybe<PageModelResult> = isSkipped(page) ? page : (page.models[m.key] ?? { skipped: 'the page did not report this model' });
  const fromPage = <T>(pick: (r: PageModelResult) => Maybe<T>): Maybe<T> => (isSkipped(inPage) ? inPage : pick(inPage));
  const engine = {
    'cpu-node': node.models[m.key]['cpu-node'],
    'cpu-reference-node': node.models[m.key]['cpu-reference-node'],
    'webgpu-node': node.models[m.key]['webgpu-node'],
    'webgpu-chromium': fromPage((r) => r['webgpu-chromium']),
    'cpu-chromium': fromPage((r) => r['cpu-chromium']),
  };
  const peer = {
    'transformers.js-webgpu': fromPage((r) => r.peer['transformers.js-webgpu']),
    'transformers.js-wasm': fromPage((r) => r.peer['transformers.js-wasm']),
  };
  return {
    name: m.name,
    dir: m.dir,
    ...m.summary,
    peerOnnx: m.peerDir,
    engine,
    peer,
    ratios: {
      'engine webgpu-chromium / transformers.js-webgpu': ratio(engine['webgpu-chromium'], peer['transformers.js-webgpu']),
      'engine cpu-chromium / transformers.js-wasm': ratio(engine['cpu-chromium'], peer['transformers.js-wasm']),
      'engine cpu-node / transformers.js-wasm': ratio(engine['cpu-node'], peer['transformers.js-wasm']),
      'engine cpu-node / cpu-reference-node': ratio(engine['cpu-node'], engine['cpu-reference-node']),
    },
  };
}
