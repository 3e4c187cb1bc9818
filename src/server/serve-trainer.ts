/**
 * Where a served run's steps train: on serve's trainer thread, a second copy of the model beside
 * the one serving (the default for LoRA), or on the serving thread, and why. /healthz and the
 * event stream say which; --max-memory keeps the thread from starting where the two copies would
 * not fit together.
 */
import type { ModelConfig } from '../models/config';
import { planMemory, quantizeOf, type MemoryPlan, type PlanInput } from '../gpu/plan';
import { MICRO_BATCH_TOKENS, TrainerUnavailableError, type EnginePolicyService } from '../runtime/policy-service';
import type { RunConfig } from '../runtime/run-config';
import { TrainerThread, type TrainerThreadOptions } from '../workers/node/trainer-thread';
import { gib } from '../base/bytes';
import type { TrainerPlace } from './serve-chat';

export type { TrainerPlace };

/** What tests change about the trainer thread: hold its steps in flight, or make it fail to start. */
export type TrainerThreadHooks = Partial<Pick<TrainerThreadOptions, 'hold' | 'spawn'>>;

/** --max-memory has no room for the trainer thread's copy: steps train on the serving thread. */
export class TrainerMemoryError extends TrainerUnavailableError {
  constructor(needed: number, limit: number) {
    super(
      `the model and the trainer thread's copy of it need about ${gib(needed)}, over --max-memory ${gib(limit)}: steps train on the serving thread, and chat requests get 503 with Retry-After during each. ` +
        'Raise --max-memory, or lower --batch-size or use a smaller --quantize, to train beside serving',
    );
  }
}

/** The memory of serving with a trainer thread beside it, by copy, in bytes. */
export interface BesideMemory {
  /** The serving copy: weights and the adapters it holds (the initial one, the serving one, a finished step's). */
  serving: MemoryPlan;
  /** The trainer's copy: weights, adapter, gradient, AdamW moments and one micro-batch's activations. */
  trainer: MemoryPlan;
  total: number;
}

/**
 * The planner's estimate (src/gpu/plan.ts) for a LoRA run served with a trainer thread. A step's
 * samples are taken to fill a micro-batch (MICRO_BATCH_TOKENS padded tokens, or the model's
 * positions where fewer): the most a step of samples up to that length holds at once, whatever
 * the batch size, since micro-batches run one after another. Generation's KV cache is left out:
 * serving needs it with or without the thread.
 */
export function besideMemory(model: ModelConfig, config: RunConfig): BesideMemory {
  const { preset } = config;
  const base: PlanInput = {
    quantize: quantizeOf(config.models.policy.weightFormat ?? 'f32'),
    backend: (config.models.policy.backend ?? 'cpu') === 'webgpu' ? 'webgpu' : 'cpu',
    lora: { rank: preset.finetune.lora.rank, targets: preset.finetune.lora.targets },
    train: null,
  };
  const serving = planMemory(model, { ...base, adapterCopies: 3 });
  const trainer = planMemory(model, {
    ...base,
    // The adapter being trained and the last step's, which is exported to the serving thread.
    adapterCopies: 2,
    train: { sequences: preset.batch.size, tokens: Math.max(2, Math.min(model.maxPositions, MICRO_BATCH_TOKENS)) },
    microBatchTokens: MICRO_BATCH_TOKENS,
    recompute: preset.finetune.recompute ?? 'none',
  });
  return { serving, trainer, total: serving.bytes.total + trainer.bytes.total };
}

export interface StepsPlace {
  /** The trainer thread, where one was started (serve closes it). */
  trainer: TrainerThread | null;
  /** Where steps train now (a thread that stops leaves them to the serving thread). */
  now(): TrainerPlace;
}

/**
 * Puts steps on a trainer thread where they can go there: a LoRA run (full fine-tuning has no
 * adapter to hand between threads), the thread not turned off, and both copies within
 * `maxMemory`. Where a thread is wanted but cannot be had, steps on the serving thread refuse
 * requests with 503 meanwhile (an agent retries) instead of holding them; `unavailable` hears why.
 */
export function placeSteps(
  policy: EnginePolicyService,
  config: RunConfig,
  model: ModelConfig,
  o: { thread: boolean; maxMemory?: number; hooks?: TrainerThreadHooks; unavailable: (e: TrainerUnavailableError) => void },
): StepsPlace {
  const here = (why: string): StepsPlace => ({ trainer: null, now: () => ({ thread: false, why }) });
  if (config.preset.finetune.mode === 'full')
    return here('full fine-tuning has no adapter to hand between threads: steps train on the serving thread, and requests wait for each');
  if (!o.thread) return here('the trainer thread is off (--no-trainer-thread): steps train on the serving thread, and requests wait for each');
  if (o.maxMemory !== undefined) {
    const needed = besideMemory(model, config).total;
    if (needed > o.maxMemory) {
      const e = new TrainerMemoryError(needed, o.maxMemory);
      policy.refuseDuringSteps();
      o.unavailable(e);
      return here(e.message);
    }
  }
  let why: string | undefined;
  const trainer = new TrainerThread({ config, backend: config.models.policy.backend ?? 'cpu', ...o.hooks });
  policy.trainBeside(trainer, (e) => {
    why = e.message;
    o.unavailable(e);
  });
  return { trainer, now: () => ({ thread: policy.trainsBeside, ...(why ? { why } : {}) }) };
}
