/**
 * The engine's figures for one model on one backend: load and memory, prefill and decode at
 * each batch, a full LoRA step. Written against the Backend interface only, so the same code
 * runs in Node (CPU, Dawn) and in the bench page (WebGPU, CPU).
 */
import type { Backend } from '../../src/gpu/backend';
import { generate } from '../../src/gpu/generate';
import { loadModel } from '../../src/gpu/load';
import { DEFAULT_LORA, LoraAdapter } from '../../src/gpu/lora';
import type { CausalLM } from '../../src/gpu/model';
import type { ModelSource } from '../../src/models/source';
import { LoraTrainer } from '../../src/gpu/train';
import { DEFAULT_TRAIN, type TrainSample } from '../../src/gpu/train-types';
import { measureBatches, type Generator } from './inference';
import { now, rate, repsFor, round, warmUp } from './stats';
import { isSkipped, type EngineRun, type LoadFigures, type Maybe, type TrainingCell } from './types';
import { prefillMacsPerToken, trainingMacsPerToken } from './work';
import { promptIds, type Workload } from './workload';

export type Log = (line: string) => void;

function engineGenerator(model: CausalLM, batch: number, w: Workload): Generator {
  const prompts = promptIds(batch, w.promptTokens, model.config.vocabSize);
  // No stop ids: every call generates exactly maxNewTokens.
  return (maxNewTokens, onStep) => generate(model, prompts, { maxNewTokens, onStep });
}

function trainSamples(model: CausalLM, w: Workload): TrainSample[] {
  const c = w.train.completionTokens;
  return promptIds(w.train.batch, w.promptTokens, model.config.vocabSize).map((ids, b) => ({
    prompt: ids.slice(0, ids.length - c),
    completion: ids.slice(ids.length - c),
    // Mixed signs, as a group-normalized batch has; the values do not change the cost.
    advantages: Array(c).fill(b % 2 ? 1 : -1),
  }));
}

/** One full LoRA step (forward with tape, backward, AdamW) per repetition. */
export async function measureTraining(model: CausalLM, w: Workload, prefillTokensPerS: Maybe<number>): Promise<Maybe<TrainingCell>> {
  const be = model.backend;
  const adapter = LoraAdapter.init(be, model.config, DEFAULT_LORA, 1);
  const trainer = new LoraTrainer(model, adapter, DEFAULT_TRAIN);
  const samples = trainSamples(model, w);
  const tokens = w.train.batch * w.promptTokens;
  try {
    const warm = await warmUp(() => trainer.trainStep(samples), w.reps, w.budgetMs);
    if (isSkipped(warm)) return warm;
    const perS: number[] = [];
    let peakBytes = 0;
    for (let i = repsFor(warm, w.reps, w.maxReps, w.cheapMs); i > 0; i--) {
      be.resetPeakMemory();
      const stats = await trainer.trainStep(samples);
      if (stats.skipped) return { skipped: `the trainer skipped the step: ${stats.skipped}` };
      peakBytes = Math.max(peakBytes, be.memory().peak);
      perS.push(tokens / (stats.stepMs / 1000));
    }
    const tokensPerS = rate(perS, warm.warmups);
    const shape = { tokens: w.promptTokens, lossTokens: w.train.completionTokens };
    const workRatio = trainingMacsPerToken(model.config, DEFAULT_LORA, shape) / prefillMacsPerToken(model.config, shape);
    const ratioToPrefill = isSkipped(prefillTokensPerS) ? prefillTokensPerS : round(tokensPerS.median / prefillTokensPerS);
    return {
      batch: w.train.batch,
      tokensPerStep: tokens,
      lossTokensPerStep: w.train.batch * w.train.completionTokens,
      lora: { rank: DEFAULT_LORA.rank, targets: [...DEFAULT_LORA.targets] },
      tokensPerS,
      ratioToPrefill,
      workRatio: round(workRatio),
      relativeFlopRate: isSkipped(ratioToPrefill) ? ratioToPrefill : round(ratioToPrefill * workRatio),
      peakBytes,
    };
  } finally {
    trainer.dispose();
    adapter.dispose(be);
  }
}

async function load(source: ModelSource, be: Backend): Promise<{ model: CausalLM; figures: LoadFigures }> {
  const before = be.memory().allocated;
  be.resetPeakMemory();
  const t0 = now();
  // f32, as the peer runs (transformers.js with fp32 weights): the ratios compare the two on the
  // same numbers. What f16 and q4 cost and save is the device bench's (bench/device).
  const loaded = await loadModel(source, be, { weightFormat: 'f32' });
  const ms = now() - t0;
  const after = be.memory();
  return {
    model: loaded.model,
    figures: {
      ms: round(ms),
      weightFormat: loaded.weightFormat,
      weightBytes: loaded.weightBytes,
      allocatedBytes: after.allocated - before,
      peakBytes: after.peak,
    },
  };
}

/** What the engine measures on a model already on its backend: inference at each batch, then a LoRA step. */
export type ModelFigures = Pick<EngineRun, 'inference' | 'decodeBatchScaling' | 'training'>;

export async function measureModel(model: CausalLM, w: Workload, label: string, log: Log): Promise<ModelFigures> {
  const inference = await measureBatches(
    w,
    (batch) => engineGenerator(model, batch, w),
    (line) => log(`${label} ${line}`),
  );
  const cells = w.batches.map((b) => inference[`b${b}`]);
  const over = cells.find(isSkipped);
  const [first, last] = [cells[0], cells[cells.length - 1]];
  const decodeBatchScaling =
    isSkipped(first) || isSkipped(last) ? { skipped: 'not every batch was measured' } : round(last.decodeTokensPerS.median / first.decodeTokensPerS.median);
  // The training batch has this inference batch's shape; see Workload.train.
  const sameShape = inference[`b${w.train.batch}`];
  const prefill = !sameShape || isSkipped(sameShape) ? { skipped: `no prefill figure at batch ${w.train.batch}` } : sameShape.prefillTokensPerS.median;
  // A step costs more than a batch's prefill and decode: no point trying once those were over.
  const training = over ? { skipped: `not tried: inference was ${over.skipped}` } : await measureTraining(model, w, prefill);
  log(
    `${label} training: ${isSkipped(training) ? training.skipped : `${training.tokensPerS.median} tok/s, ${JSON.stringify(training.ratioToPrefill)} of prefill`}`,
  );
  return { inference, decodeBatchScaling, training };
}

/** Everything the engine reports for one model on one backend (the backend is not disposed). */
export async function measureEngine(source: ModelSource, be: Backend, where: EngineRun['where'], w: Workload, log: Log): Promise<EngineRun> {
  const label = `${source.id} engine ${be.kind}-${where}`;
  const { model, figures } = await load(source, be);
  log(`${label}: loaded in ${figures.ms} ms, ${figures.allocatedBytes} bytes allocated`);
  try {
    return { backend: be.kind, where, load: figures, ...(await measureModel(model, w, label, log)) };
  } finally {
    for (const t of new Set(model.weights.values())) be.dispose(t);
  }
}
