/**
 * The storyteller demo model: stories260K fine-tuned on its own relabeled stories
 * (relabel.ts) so that an instruction in front of a story beginning steers the story. LoRA on
 * every projection, trained with the engine's own trainer (advantage 1 on every token and
 * token-mean aggregation is the supervised loss: on-policy rho = 1, so the gradient is that of
 * the mean log-likelihood), then merged into the weights, so the result is a plain model folder.
 */
import { mergedSafetensors } from '../gpu/peft';
import { LoraAdapter } from '../gpu/lora';
import type { Policy } from '../gpu/policy';
import { mulberry32, shuffled } from '../gpu/random';
import { score } from '../gpu/score';
import { LoraTrainer } from '../gpu/train';
import { DEFAULT_TRAIN, type TrainSample } from '../gpu/train-types';
import { PROJECTIONS } from '../models/config';
import { hintCases, hintEffect, type HintEffect } from './hint-check';
import { isInventedName } from './pools';
import { relabeledStories, type DemoExample } from './relabel';
import { STORY_MAX_NEW_TOKENS } from '../sims/scenarios/storyteller';

export interface DemoModelOptions {
  seed: number;
  /** Relabeled stories sampled for training. */
  examples: number;
  epochs: number;
  batch: number;
  lr: number;
  rank: number;
  /**
   * Sampling temperature of the training stories. Below 1 the base model's misspellings and lone
   * byte tokens ("telephours", "bed.\x07 the") become rare, and the demo model, sampled at 1 in
   * the lab, writes cleaner stories than the model it was fine-tuned from.
   */
  temperature: number;
  /** Tokens sampled per story, after any templated opening sentence; cut at its last full sentence. */
  maxNewTokens: number;
  unconditioned: number;
  /** Held-out cases the finished model is measured on. */
  checkCases: number;
  /** Held-out relabeled examples whose log-likelihood is followed during training. */
  heldOutExamples: number;
  /** The copy task (relabel.ts): made-up names from the whole alphabet for most named examples. Absent: off. */
  copyTask?: boolean;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

export const DEMO_DEFAULTS: Omit<DemoModelOptions, 'seed'> = {
  examples: 3000,
  epochs: 2,
  batch: 32,
  lr: 3e-3,
  rank: 32,
  temperature: 0.8,
  maxNewTokens: 56,
  unconditioned: 0.3,
  checkCases: 96,
  heldOutExamples: 64,
};

export interface DemoReport {
  seed: number;
  options: Omit<DemoModelOptions, 'log' | 'signal'>;
  examples: { total: number; unconditioned: number; withName: number; withInventedName: number; withFavourite: number; withBedtime: number };
  /** Mean log-likelihood per token of held-out examples, before and after. */
  heldOutLogp: { before: number; after: number };
  /**
   * On the evaluation openings, sampled at temperature 1 as the lab samples: in the held-out
   * wordings the rules judge writes (`demoNewNames` also asks for names and things the model never
   * saw), and for comparison in the fine-tuning wordings (`demoFineTuningWords`).
   */
  hint: { base: HintEffect; demo: HintEffect; demoNewNames: HintEffect; demoFineTuningWords: HintEffect };
  steps: number;
  seconds: number;
}

export interface DemoModel {
  safetensors: Uint8Array;
  report: DemoReport;
  adapter: LoraAdapter;
}

/** The story, then the end-of-text token: the model learns where a story stops. */
function toSample(policy: Policy, x: DemoExample): TrainSample {
  const prompt = policy.promptIds(x.prompt);
  const completion = [...policy.completionIds(x.prompt, x.completion), policy.tokenizer.stopIds[0]];
  return { prompt, completion, advantages: completion.map(() => 1) };
}

async function meanLogp(policy: Policy, samples: TrainSample[], lora?: LoraAdapter): Promise<number> {
  const scored = await score(policy.model, samples, { lora });
  let sum = 0;
  let n = 0;
  for (const s of scored) {
    for (const lp of s.logprobs) sum += lp;
    n += s.logprobs.length;
  }
  return sum / n;
}

export async function makeDemoModel(base: Policy, options: Partial<DemoModelOptions> & { seed: number }): Promise<DemoModel> {
  const o: DemoModelOptions = { ...DEMO_DEFAULTS, ...options };
  const { log: _log, signal: _signal, ...settings } = o;
  const log = o.log ?? (() => {});
  const t0 = performance.now();
  const seconds = () => ((performance.now() - t0) / 1000).toFixed(0);
  log(`sampling ${o.examples} stories from ${base.source.id} (seed ${o.seed})`);
  let nextReport = 200;
  const relabel = {
    maxNewTokens: o.maxNewTokens,
    temperature: o.temperature,
    unconditioned: o.unconditioned,
    batch: 32,
    copyTask: o.copyTask,
    signal: o.signal,
  };
  const examples = await relabeledStories(base, {
    ...relabel,
    count: o.examples,
    seed: o.seed,
    onProgress: (done, total) => {
      if (done < nextReport && done !== total) return;
      nextReport += 200;
      log(`  kept ${done}/${total} (${seconds()} s)`);
    },
  });
  const heldOut = (await relabeledStories(base, { ...relabel, count: o.heldOutExamples, seed: o.seed + 7777 }, 'heldOut')).map((x) => toSample(base, x));
  const samples = examples.map((x) => toSample(base, x));
  const rand = mulberry32(o.seed ^ 0x5eed);
  const adapter = LoraAdapter.init(base.model.backend, base.config, { rank: o.rank, alpha: o.rank, targets: [...PROJECTIONS] }, o.seed);
  const trainer = new LoraTrainer(base.model, adapter, { ...DEFAULT_TRAIN, lr: o.lr, weightDecay: 0, aggregation: 'token-mean', microBatchTokens: 4096 });
  const before = await meanLogp(base, heldOut);
  log(`held-out log-likelihood per token before: ${before.toFixed(4)}`);
  const stepsPerEpoch = Math.floor(samples.length / o.batch);
  const totalSteps = stepsPerEpoch * o.epochs;
  let step = 0;
  let after = before;
  for (let epoch = 0; epoch < o.epochs; epoch++) {
    const order = shuffled(samples, rand);
    for (let b = 0; b < stepsPerEpoch; b++) {
      o.signal?.throwIfAborted();
      // A cosine decay to a tenth: the last epoch settles instead of hopping between minima.
      const progress = step / totalSteps;
      trainer.settings.lr = o.lr * (0.1 + 0.9 * 0.5 * (1 + Math.cos(Math.PI * progress)));
      const stats = await trainer.trainStep(order.slice(b * o.batch, (b + 1) * o.batch));
      step++;
      if (stats.skipped) log(`  step ${step}: skipped (${stats.skipped})`);
      if (step % 10 === 0 || step === totalSteps) {
        after = await meanLogp(base, heldOut, adapter);
        log(
          `  step ${step}/${totalSteps} (epoch ${epoch + 1}): held-out log-likelihood ${after.toFixed(4)}, grad norm ${stats.gradNorm.toFixed(3)} (${seconds()} s)`,
        );
      }
    }
  }
  // The last step always measured the held-out set: `after` is the finished model's figure.
  log('measuring the hint on held-out wordings (and on held-out names and things)');
  const cases = hintCases(o.checkCases, o.seed + 99);
  // Measured at the lab's storyteller cap, stopping where the story ends.
  const check = { maxNewTokens: STORY_MAX_NEW_TOKENS, temperature: 1, seed: o.seed };
  const hint = {
    base: await hintEffect(base, cases, check),
    demo: await hintEffect(base, cases, { ...check, lora: adapter }),
    demoNewNames: await hintEffect(base, hintCases(o.checkCases, o.seed + 99, { names: 'heldOut' }), { ...check, lora: adapter }),
    demoFineTuningWords: await hintEffect(base, hintCases(o.checkCases, o.seed + 99, { words: 'fine-tuning' }), { ...check, lora: adapter }),
  };
  const report: DemoReport = {
    seed: o.seed,
    options: settings,
    examples: {
      total: examples.length,
      unconditioned: examples.filter((x) => !x.wish).length,
      withName: examples.filter((x) => x.wish?.name).length,
      withInventedName: examples.filter((x) => x.wish?.name && isInventedName(x.wish.name)).length,
      withFavourite: examples.filter((x) => x.wish?.favourite).length,
      withBedtime: examples.filter((x) => x.wish?.bedtime).length,
    },
    heldOutLogp: { before, after },
    hint,
    steps: step,
    seconds: (performance.now() - t0) / 1000,
  };
  return { safetensors: await mergedSafetensors(base.model, adapter), report, adapter };
}
