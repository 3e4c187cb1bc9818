/**
 * What a training step takes and gives: samples, settings with the reference's defaults, the
 * step's statistics, the KL reference, what is trained and the optimizer's checkpointed state.
 * Apart from the Trainer, so the callers that only build samples or read statistics need not
 * import the trainer.
 */
import type { PpoSettings } from '../rl/ppo';
import type { TopKDistillTarget } from '../rl/topk-distill';
import type { Tensor } from './backend';
import type { LoraAdapter } from './lora';
import type { CausalLM, Recompute } from './model';
import type { ScoreItem } from './score';

export interface TrainSample extends ScoreItem {
  /** One advantage per completion token (a sequence-level reward repeated is fine). */
  advantages: number[];
  /** Log-probs the rollout reported; only for the rollout-vs-train gap statistic. */
  rolloutLogp?: number[];
  /** Fixed old log-probs; by default those of the current weights, from the step's own forward. */
  oldLogp?: number[];
  /**
   * w_opd when `advantages` hold an OPD term w_opd * (log pi_teacher - log pi_rollout). The
   * reference subtracts the trainer's old log-prob, not the rollout's, so the step re-bases the
   * term on the policy it trains: teacher - old = (teacher - rollout) + (rollout - old), i.e.
   * A_t + w_opd * (rollout_t - old_t). Needs `rolloutLogp`.
   */
  opdWeight?: number;
  /**
   * With opdWeight: the OPD term is w_opd * clip(log pi_teacher - log pi, -clip, +clip) (top-k
   * hint selection's bound), so re-basing cannot be a shift; the step takes the clipped
   * rollout term out and puts clip(teacher - old) in. Needs one teacher log-prob per token.
   */
  opdClip?: { clip: number; teacherLogp: readonly number[] };
  /**
   * The top-k distillation term (src/rl/topk-distill.ts): the student's top-k set at every
   * completion position and the teacher's log-probs over it. Its old log-probs are the step's
   * own forward's, so it does not go with a fixed `oldLogp`. With `term`, a reverse KL
   * (src/rl/reverse-kl.ts) over the teacher's sets; where every set holds the whole vocabulary
   * (term "reverse-kl"), the backend's reverseKl op computes it from the logits.
   */
  opdTopK?: TopKDistillTarget;
  /**
   * The loss mask (default true). A masked sample is neither scored nor trained: it adds no
   * loss, gradient, token or statistic, and only keeps its slot in the sample-mean's batch size.
   */
  trainable?: boolean;
  /**
   * Per-token loss mask over the completion (src/rl/loss-mask.ts): 1 on the policy's tokens, 0
   * on the tokens it only read (a tool's output inside a trajectory sample). A masked token is
   * scored, as part of the sequence, but adds no loss, gradient, advantage or statistic, and a
   * sample's token mean divides by its unmasked tokens. Absent: every token counts.
   */
  lossMask?: number[];
}

export interface TrainSettings extends PpoSettings {
  lr: number;
  betas: [number, number];
  adamEps: number;
  weightDecay: number;
  /** Global gradient-norm clip; 0 disables. */
  maxGradNorm: number;
  /** Padded tokens per micro-batch: bounds activation memory. */
  microBatchTokens: number;
  /** Largest logits block (rows x vocabulary) computed at once; default LOGITS_CHUNK_FLOATS. */
  logitsChunkFloats?: number;
  /**
   * 'layer': keep only each layer's input and re-run the layer in the backward (gradient
   * checkpointing per layer: activations and the KV cache of one layer instead of all, for about
   * one more forward pass; the same floats). Default 'none': every layer's tape kept.
   */
  recompute?: Recompute;
  /**
   * The rollouts' sampling temperature as scoringTemperature gives it: the old, new and
   * reference log-probs are all taken with the logits divided by it, so the ratio and the KL are
   * on the distribution the tokens were drawn from (slime's --rollout-temperature). Default 1.
   */
  temperature?: number;
}

/** LoRA's defaults: lr 1e-4, the reference's Tinker rate (its slime LoRA scripts keep 1e-5; presets.ts LORA_SETTINGS). */
export const DEFAULT_TRAIN: TrainSettings = {
  epsLow: 0.2,
  epsHigh: 0.28,
  klCoef: 0,
  aggregation: 'sample-mean',
  lr: 1e-4,
  betas: [0.9, 0.98],
  adamEps: 1e-8,
  weightDecay: 0.1,
  maxGradNorm: 1,
  microBatchTokens: 2048,
  recompute: 'none',
};

/** Full fine-tuning's: the reference's Adam lr 1e-5, weight decay 0.1, betas (0.9, 0.98). */
export const DEFAULT_FULL_TRAIN: TrainSettings = { ...DEFAULT_TRAIN, lr: 1e-5 };

export interface StepStats {
  step: number;
  loss: number;
  policyLoss: number;
  kl: number;
  clipFracLow: number;
  clipFracHigh: number;
  /** Mean entropy of the model's distribution at the sampled tokens. */
  entropy: number;
  meanAbsAdv: number;
  gradNorm: number;
  tokens: number;
  stepMs: number;
  /** Mean |rollout logp - old logp|, when rollouts reported log-probs. */
  rolloutGap: number | null;
  /**
   * Mean |A_OPD at training - A_OPD at sampling| over the tokens of samples with an OPD term
   * (w_opd * |rollout logp - old logp|), or null when the batch has none: how much the
   * rollout/train log-prob mismatch moved the directive signal.
   */
  opdGap: number | null;
  microBatches: number;
  /** Why the step was skipped (adapter untouched), or null. */
  skipped: string | null;
  /**
   * With `scoreAfter`: each sample's log-probs before (old policy) and after the update, and
   * the advantages the step used (OPD re-based on the old policy); null for a masked sample,
   * which is not scored.
   */
  perSample?: ({ before: number[]; after: number[]; advantages: number[] } | null)[];
}

/**
 * Where the reference log-probs of the KL term come from: the base model (LoRA: the weights
 * without an adapter), a frozen adapter, or another model (full fine-tuning changes the base
 * weights themselves, so its reference is a frozen copy).
 */
export type Reference = { kind: 'base' } | { kind: 'adapter'; adapter: LoraAdapter } | { kind: 'model'; model: CausalLM };

/** What a trainer updates: named tensors, and the LoRA adapter the forward applies, if any. */
export interface Trainable {
  /** Every trained tensor by name, in a fixed order; read at each step (the optimizer state follows the names). */
  parameters(): { name: string; tensor: Tensor }[];
  /** The adapter of LoRA training; absent in full fine-tuning, which trains the model's own weights. */
  readonly lora?: LoraAdapter;
}

/** The optimizer's state, for a checkpoint: the step count and both AdamW moments by parameter name. */
export interface OptimizerState {
  step: number;
  /** AdamW's moments by parameter; `shape`, where a file said it, is checked against the parameter's. */
  moments: Map<string, { m: Float32Array; v: Float32Array; shape?: readonly number[] }>;
}
