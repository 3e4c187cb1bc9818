/**
 * The paper's policy size, for real: a model of a real config.json (Qwen3-4B, Qwen3-0.6B) with
 * random weights generated straight into q4 (src/gpu/random-model.ts: a row at a time, never an
 * f32 copy), which loads, generates a few greedy tokens and takes one QLoRA step (rank 16 on
 * every projection) on a short batch, with the device's peak bytes beside the planner's. Shared by
 * Node (Dawn) and the bench page (Chromium's WebGPU); each phase is timed once, since a phase of
 * a 4B model on a CPU-emulated adapter takes minutes.
 */
import type { Backend } from '../../src/gpu/backend';
import { parseModelConfig, PROJECTIONS } from '../../src/models/config';
import { generate } from '../../src/gpu/generate';
import { LoraAdapter } from '../../src/gpu/lora';
import { planMemoryFromJson, quantizeOf } from '../../src/gpu/plan';
import type { WeightFormat } from '../../src/gpu/quant';
import { randomModel } from '../../src/gpu/random-model';
import { LoraTrainer } from '../../src/gpu/train';
import { DEFAULT_TRAIN } from '../../src/gpu/train-types';
import { now } from './stats';
import type { AdapterReport } from './types';

export interface PaperPlan {
  name: string;
  /** The model's config.json, parsed. */
  config: unknown;
  format: WeightFormat;
  promptTokens: number;
  newTokens: number;
  /** One QLoRA step on this many sequences of this many tokens (prompt 1, the rest completion). */
  train: { sequences: number; tokens: number };
  loraRank: number;
}

export interface PaperRun {
  name: string;
  parameters: number;
  format: WeightFormat;
  adapter: AdapterReport;
  /** Seconds of each phase; `totalMinutes` is all of them. */
  seconds: { load: number; generate: number; trainStep: number };
  totalMinutes: number;
  generated: { promptTokens: number; newTokens: number; tokensPerS: number };
  trainStep: { sequences: number; tokens: number; loss: number; gradNorm: number };
  /** Bytes the engine counted (Backend.memory()) against the planner's figures for the same run. */
  memory: {
    weights: { measured: number; planned: number; ratio: number };
    peak: { measured: number; planned: number; ratio: number };
  };
}

export async function paperRun(be: Backend, plan: PaperPlan, adapter: AdapterReport, log: (line: string) => void): Promise<PaperRun> {
  const config = parseModelConfig(plan.config);
  const started = now();
  const before = be.memory().allocated;
  log(`${plan.name}: generating ${plan.format} weights`);
  const model = randomModel(config, be, { format: plan.format, seed: 1 });
  const weights = be.memory().allocated - before;
  // Reading one value back waits for the uploads, so the load phase includes them.
  const probe = be.gatherRows(model.embed, Int32Array.from([0]));
  await be.read(probe);
  be.dispose(probe);
  const loaded = now();
  log(`${plan.name}: loaded in ${((loaded - started) / 1000).toFixed(1)} s; generating ${plan.newTokens} tokens`);
  const prompt = Array.from({ length: plan.promptTokens }, (_, i) => (17 + 31 * i) % config.vocabSize);
  const [g] = await generate(model, [prompt], { maxNewTokens: plan.newTokens });
  const generated = now();
  log(`${plan.name}: generated in ${((generated - loaded) / 1000).toFixed(1)} s; one QLoRA step`);
  const lora = LoraAdapter.init(be, config, { rank: plan.loraRank, alpha: 2 * plan.loraRank, targets: [...PROJECTIONS] }, 1);
  const trainer = new LoraTrainer(model, lora, DEFAULT_TRAIN);
  const { sequences, tokens } = plan.train;
  const samples = Array.from({ length: sequences }, (_, s) => {
    const ids = Array.from({ length: tokens }, (_, t) => (101 + 7 * t + 13 * s) % config.vocabSize);
    return { prompt: ids.slice(0, 1), completion: ids.slice(1), advantages: ids.slice(1).map((_, t) => (t % 2 ? 0.5 : -0.5)) };
  });
  be.resetPeakMemory();
  const stats = await trainer.trainStep(samples);
  const peak = be.memory().peak - before;
  const trained = now();
  const planned = planMemoryFromJson(plan.config, {
    quantize: quantizeOf(plan.format),
    backend: be.kind,
    lora: { rank: plan.loraRank, targets: [...PROJECTIONS] },
    train: plan.train,
  });
  const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
  return {
    name: plan.name,
    parameters: planned.parameters,
    format: plan.format,
    adapter,
    seconds: { load: (loaded - started) / 1000, generate: (generated - loaded) / 1000, trainStep: (trained - generated) / 1000 },
    totalMinutes: (trained - started) / 60_000,
    generated: {
      promptTokens: plan.promptTokens,
      newTokens: g.tokens.length,
      tokensPerS: (plan.promptTokens + g.tokens.length) / ((generated - loaded) / 1000),
    },
    trainStep: { sequences, tokens, loss: stats.loss, gradNorm: stats.gradNorm },
    memory: {
      weights: { measured: weights, planned: planned.bytes.weights, ratio: ratio(weights, planned.bytes.weights) },
      peak: { measured: peak, planned: planned.bytes.total, ratio: ratio(peak, planned.bytes.total) },
    },
  };
}
