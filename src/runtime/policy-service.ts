/**
 * The policy as the run loop sees it: serve generations, score completions for OPD teachers,
 * train on batches. EnginePolicyService runs the engine in this thread (Node, or inside the
 * browser's policy worker, which exposes this same interface over comlink).
 *
 * Serving and training use different adapters: the server answers with the snapshot of
 * version v while the trainer updates its own copy; the swap to v+1 happens between two
 * generation calls, so no request ever waits for training (DESIGN.md section 3).
 */
import type { ChatMessage } from '../rl/messages';
import type { MethodPreset, TeacherSource } from '../rl/presets';
import type { Projection } from '../gpu/config';
import { LoraAdapter } from '../gpu/lora';
import { adapterFromPeft, adapterToPeft, type PeftFiles } from '../gpu/peft';
import type { Policy } from '../gpu/policy';
import type { SamplingOptions } from '../gpu/sampler';
import { score } from '../gpu/score';
import { LoraTrainer, type StepStats } from '../gpu/train';

export interface PolicyRequest {
  messages: ChatMessage[];
  /** Tools the chat template lists (the tool-call track's calculator); absent: none. */
  tools?: readonly object[];
  maxNewTokens: number;
  sampling: SamplingOptions;
  seed: number;
}

export interface PolicyReply {
  text: string;
  tokenIds: number[];
  logprobs: number[];
  /** Each token decoded alone, for the token view. */
  tokenTexts: string[];
  /** The adapter version that generated the reply. */
  version: number;
  startedAt: number;
  finishedAt: number;
}

export interface TrainItem {
  messages: ChatMessage[];
  /** The tools the prompt was rendered with when it was generated (see PolicyRequest). */
  tools?: readonly object[];
  tokenIds: number[];
  advantages: number[];
  rolloutLogp: number[];
  /** false: the buffer's loss mask; keeps its slot in the sample mean and contributes nothing else. */
  trainable: boolean;
  /** w_opd when `advantages` hold an OPD term against `rolloutLogp` (TrainSample.opdWeight). */
  opdWeight?: number;
}

export interface TrainResult {
  /** The version the step produced; it serves from the next generation call on. */
  version: number;
  stats: StepStats;
  startedAt: number;
  finishedAt: number;
}

export interface PolicyService {
  readonly label: string;
  /** The version generations are served with now. */
  servingVersion(): number;
  generate(requests: PolicyRequest[], signal?: AbortSignal): Promise<PolicyReply[]>;
  /** Log-probs of each completion after its prompt, under the initial or the current policy. */
  score(items: { messages: ChatMessage[]; tokenIds: number[] }[], teacher: TeacherSource): Promise<number[][]>;
  train(items: TrainItem[], onMicroBatch?: (i: number, n: number) => void): Promise<TrainResult>;
  /** The newest adapter (the last finished step's, even before serving swaps to it) as PEFT files. */
  exportAdapter(): Promise<PeftFiles>;
  /** Continue from a saved adapter (resume after reload, or after a lost GPU device). */
  restore(files: PeftFiles, version: number): Promise<void>;
  /** Device memory the engine holds now and at its peak (where the service can tell). */
  memory?(): Promise<{ allocated: number; peak: number }>;
}

export class EnginePolicyService implements PolicyService {
  private version = 0;
  /**
   * The version of the newest trained adapter. Two steps can finish before a generation call
   * lets the first swap in; the second then replaces the pending adapter, and numbering by the
   * trained steps (not by swaps) keeps version = steps taken.
   */
  private latest = 0;
  private serving: LoraAdapter;
  private pending: LoraAdapter | null = null;
  private inFlight = 0;
  /** Adapters replaced while something held them, freed once nothing does. */
  private retired: LoraAdapter[] = [];
  private trainer: LoraTrainer;
  private training: LoraAdapter;

  constructor(
    readonly policy: Policy,
    private readonly preset: MethodPreset,
    private readonly seed: number,
    private readonly clock: () => number = Date.now,
  ) {
    const lora = preset.finetune.lora;
    this.training = LoraAdapter.init(policy.model.backend, policy.config, { rank: lora.rank, alpha: lora.alpha, targets: lora.targets as Projection[] }, seed);
    this.serving = this.training;
    this.trainer = this.makeTrainer();
    this.label = `engine: ${policy.source.id} (${policy.model.backend.kind})`;
  }

  readonly label: string;

  private makeTrainer(): LoraTrainer {
    const p = this.preset;
    return new LoraTrainer(this.policy.model, this.training, {
      epsLow: p.loss.epsLow,
      epsHigh: p.loss.epsHigh,
      klCoef: p.loss.klCoef,
      aggregation: p.loss.aggregation,
      lr: p.optimizer.lr,
      betas: p.optimizer.betas,
      adamEps: p.optimizer.eps,
      weightDecay: p.optimizer.weightDecay,
      maxGradNorm: 1,
      microBatchTokens: 2048,
    });
  }

  servingVersion(): number {
    return this.version;
  }

  /**
   * When nothing holds an adapter: frees the retired ones and swaps in a finished step's
   * adapter, retiring the one it replaces.
   */
  private swapIfReady(): void {
    if (this.inFlight > 0) return;
    if (this.pending) {
      if (this.serving !== this.training) this.retired.push(this.serving);
      this.serving = this.pending;
      this.pending = null;
      this.version = this.latest;
    }
    for (const a of this.retired) a.dispose(this.policy.model.backend);
    this.retired = [];
  }

  /**
   * Runs fn on the serving adapter, or on the pending one with `newest`, holding off the swap
   * that would dispose the serving adapter until fn is done: fn reads tensors across awaits.
   */
  private async holding<T>(fn: (lora: LoraAdapter, version: number) => Promise<T>, newest = false): Promise<T> {
    this.swapIfReady();
    this.inFlight++;
    try {
      return newest && this.pending ? await fn(this.pending, this.latest) : await fn(this.serving, this.version);
    } finally {
      this.inFlight--;
      this.swapIfReady();
    }
  }

  generate(requests: PolicyRequest[], signal?: AbortSignal): Promise<PolicyReply[]> {
    return this.holding(async (lora, version) => {
      const startedAt = this.clock();
      const s = requests[0].sampling;
      const gens = await this.policy.generate(requests.map((r) => r.messages), {
        maxNewTokens: Math.max(...requests.map((r) => r.maxNewTokens)),
        sampling: s,
        seeds: requests.map((r) => r.seed),
        tools: requests.map((r) => r.tools),
        lora,
        signal,
      });
      const finishedAt = this.clock();
      const tok = this.policy.tokenizer;
      return gens.map((g) => ({
        text: g.text,
        tokenIds: g.tokens,
        logprobs: g.logprobs,
        tokenTexts: g.tokens.map((id) => tok.decode([id], false)),
        version,
        startedAt,
        finishedAt,
      }));
    });
  }

  score(items: { messages: ChatMessage[]; tokenIds: number[] }[], teacher: TeacherSource): Promise<number[][]> {
    return this.holding(async (serving) => {
      // The initial adapter has B = 0, so the frozen initial policy is the base model itself.
      const lora = teacher === 'current' ? serving : undefined;
      const scored = await score(this.policy.model, items.map((it) => ({ prompt: this.policy.promptIds(it.messages), completion: it.tokenIds })), { lora });
      return scored.map((s) => Array.from(s.logprobs));
    });
  }

  async train(items: TrainItem[], onMicroBatch?: (i: number, n: number) => void): Promise<TrainResult> {
    const startedAt = this.clock();
    if (this.serving === this.training) {
      // Serving and training share one adapter only before the first step after start or a
      // restore, when the trainer has no optimizer state yet: train a copy, so generations
      // in flight keep an adapter that AdamW does not touch.
      this.training = await this.serving.clone(this.policy.model.backend);
      this.trainer.dispose();
      this.trainer = this.makeTrainer();
    }
    const stats = await this.trainer.trainStep(
      items.map((it) => ({
        prompt: this.policy.promptIds(it.messages, { tools: it.tools }),
        completion: it.tokenIds,
        advantages: it.advantages,
        rolloutLogp: it.rolloutLogp,
        trainable: it.trainable,
        opdWeight: it.opdWeight,
      })),
      { onMicroBatch, scoreAfter: true },
    );
    if (this.pending) this.retired.push(this.pending);
    this.pending = await this.training.clone(this.policy.model.backend);
    this.latest++;
    this.swapIfReady();
    return { version: this.latest, stats, startedAt, finishedAt: this.clock() };
  }

  async memory(): Promise<{ allocated: number; peak: number }> {
    return this.policy.model.backend.memory();
  }

  exportAdapter(): Promise<PeftFiles> {
    return this.holding((lora) => adapterToPeft(this.policy.model.backend, lora, this.policy.source.id), true);
  }

  async restore(files: PeftFiles, version: number): Promise<void> {
    const be = this.policy.model.backend;
    const loaded = adapterFromPeft(be, this.policy.config, { weights: files['adapter_model.safetensors'], config: files['adapter_config.json'] });
    this.trainer.dispose();
    if (this.serving !== this.training) this.serving.dispose(be);
    this.training.dispose(be);
    this.pending?.dispose(be);
    this.pending = null;
    for (const a of this.retired) a.dispose(be);
    this.retired = [];
    this.training = loaded;
    this.serving = loaded;
    this.trainer = this.makeTrainer();
    this.version = version;
    this.latest = version;
  }
}
