/**
 * The policy as the run loop sees it: serve generations, score completions for OPD teachers,
 * train on batches. EnginePolicyService runs the engine in this thread (Node, or inside the
 * browser's policy worker, which exposes this same interface over comlink).
 *
 * Serving and training use different copies of what is trained: the server answers with the
 * snapshot of version v while the trainer updates its own copy; the swap to v+1 happens between
 * two generation calls, so no request ever waits for training
 * (docs/architecture.md#workers-and-their-messages). With
 * finetune.mode 'lora' a copy is a LoRA adapter over the loaded model; with 'full' it is a whole
 * f32 copy of the weights, and the loaded model stays untouched as the frozen initial policy
 * (the OPD teacher 'initial' and the KL term's reference).
 */
import type { ChatMessage } from '../rl/messages';
import type { TurnType } from '../rl/sessions';
import { klTypeOf, type MethodPreset, type TeacherSource } from '../rl/presets';
import type { TopKDistillTarget } from '../rl/topk-distill';
import type { Projection } from '../models/config';
import { EngineError } from '../gpu/errors';
import { checkFullTrainingFits, copyModelF32, disposeModel, fullModelFolder, OPTIMIZER_FILE, optimizerToSafetensors, parameterShape } from '../gpu/full';
import { LoraAdapter } from '../gpu/lora';
import type { CausalLM } from '../gpu/model';
import { adapterFromPeft, adapterToPeft, PEFT_CONFIG, PEFT_WEIGHTS, type PeftFiles } from '../gpu/peft';
import type { Policy, PromptContinuation } from '../gpu/policy';
import type { FinishReason } from '../gpu/generate';
import { scoringTemperature, type SamplingOptions } from '../gpu/sampler';
import { score } from '../gpu/score';
import { FullTrainer, LoraTrainer, type Trainer } from '../gpu/train';
import { type StepStats, type TrainSettings } from '../gpu/train-types';

export interface PolicyRequest {
  messages: ChatMessage[];
  /** Tools the chat template lists (the tool-call track's calculator); absent: none. */
  tools?: readonly object[];
  /**
   * The ids an earlier step read and wrote for the first messages: the prompt continues them,
   * and the reply's promptIds start with them (a tool-call trajectory's next step). A policy
   * that renders each prompt itself (a server) renders `messages` whole; its promptIds tell.
   */
  continues?: PromptContinuation;
  maxNewTokens: number;
  sampling: SamplingOptions;
  seed: number;
  /** Text that ends this reply (an OpenAI client's `stop`); the reply's text is cut before it. */
  stop?: string[];
  /**
   * The run's session this call belongs to: a policy on a server that pairs turns itself
   * (RemotePolicyService) sends it as the session headers; the engine has no use for it.
   */
  session?: SessionTag;
  /**
   * The trained version that must answer (a fixed schedule pins it); absent: the serving one. A
   * policy that serves one version at a time (a server, a worker's) ignores it.
   */
  version?: number;
}

/** A policy call's place in the reference's session protocol. */
export interface SessionTag {
  id: string;
  turnType: TurnType;
  /** The session's last request (X-Session-Done). */
  done: boolean;
}

export interface PolicyReply {
  text: string;
  tokenIds: number[];
  logprobs: number[];
  /** Each token decoded alone, for the token view. */
  tokenTexts: string[];
  /** The prompt's ids as the policy read them, where it runs here (a server tokenizes its own). */
  promptIds?: number[];
  /** The adapter version that generated the reply. */
  version: number;
  /** Why it ended: a stop token or string, its token limit, or an abort. */
  finishReason?: FinishReason;
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
  /** The per-token loss mask of a sample with observation tokens (TrainSample.lossMask). */
  lossMask?: number[];
  /** w_opd when `advantages` hold an OPD term against `rolloutLogp` (TrainSample.opdWeight). */
  opdWeight?: number;
  /** The clip on the OPD term and its teacher log-probs (TrainSample.opdClip). */
  opdClip?: { clip: number; teacherLogp: number[] };
  /** The top-k distillation term (TrainSample.opdTopK). */
  opdTopK?: TopKDistillTarget;
}

/** A completion to score after its prompt, rendered with the tools it was sampled with (PolicyRequest.tools). */
export interface ScoreItem {
  messages: ChatMessage[];
  tokenIds: number[];
  tools?: readonly object[];
  /** For scoreTopK: ids whose log-probs to read at each completion position (ScoredTopK.atLogp). */
  at?: number[][];
  /** The version 'current' means (the turn's own, in a fixed schedule); absent: the serving one. */
  version?: number;
}

/** One completion scored with its top-k next-token sets (PolicyService.scoreTopK). */
export interface ScoredTopK {
  /** log p(token) of every completion token. */
  logprobs: number[];
  /** The k most likely next-token ids at every completion position, most likely first. */
  topIds: number[][];
  /** log p of each of the item's `at` ids at every completion position, when it gave them. */
  atLogp?: number[][];
}

export interface TrainResult {
  /** The version the step produced; it serves from the next generation call on. */
  version: number;
  stats: StepStats;
  startedAt: number;
  finishedAt: number;
}

/** What a caller of generate may hear and say while it runs, per request (by its index). */
export interface GenerationHooks {
  /** Each token as request `index` draws it, before the call returns (a served client's stream). */
  onToken?: (index: number, id: number, logprob: number) => void;
  /** Request `index` is no longer wanted: it stops drawing tokens (finish 'aborted') while the others go on. */
  dropped?: (index: number) => boolean;
}

export interface PolicyService {
  readonly label: string;
  /**
   * Whether a training step runs beside generation, on another thread with a copy of its own
   * (serve's trainer thread); absent or false: a step holds the thread generation runs on.
   */
  readonly trainsBeside?: boolean;
  /** Whether a step here refuses requests (503) instead of holding them (EnginePolicyService.refusesDuringSteps). */
  readonly refusesDuringSteps?: boolean;
  /** The version generations are served with now. */
  servingVersion(): number;
  /**
   * A fixed schedule's promise: no request will pin a version below `version` from now on, so the
   * older ones may be freed; until the first call, only the serving version is kept. Where
   * absent, the policy cannot answer pinned versions (see PolicyRequest.version).
   */
  keepVersionsFrom?(version: number): void;
  /** `hooks`, where the service generates here (a policy on a server or behind a worker has none). */
  generate(requests: PolicyRequest[], signal?: AbortSignal, hooks?: GenerationHooks): Promise<PolicyReply[]>;
  /** Log-probs of each completion after its prompt, under the initial or the current policy. */
  score(items: ScoreItem[], teacher: TeacherSource): Promise<number[][]>;
  /**
   * As score, with the k most likely next tokens at every completion position (top-k hint
   * selection). `policy` 'current' is the serving version, 'initial' the frozen start.
   */
  scoreTopK?(items: ScoreItem[], policy: TeacherSource, k: number): Promise<ScoredTopK[]>;
  train(items: TrainItem[], onMicroBatch?: (i: number, n: number) => void): Promise<TrainResult>;
  /** The newest adapter (the last finished step's, even before serving swaps to it) as PEFT files. */
  exportAdapter(): Promise<PeftFiles>;
  /** Continue from a saved adapter (resume after reload, or after a lost GPU device). */
  restore(files: PeftFiles, version: number): Promise<void>;
  /** Device memory the engine holds now and at its peak (where the service can tell). */
  memory?(): Promise<{ allocated: number; peak: number }>;
  /**
   * Full fine-tuning: the newest weights as a complete Hugging Face folder (file name -> bytes,
   * optimizer.safetensors included). Absent or refused where the run trains LoRA.
   */
  exportModel?(): Promise<Map<string, Uint8Array>>;
}

/** A run with finetune.mode 'full' has no adapter to export or restore. */
export class NoAdapterError extends EngineError {}

/** A step on a SeparateTrainer: what it measured and the adapter of the version it made. */
export interface SeparateStep {
  version: number;
  stats: StepStats;
  adapter: PeftFiles;
}

/**
 * A LoRA trainer on another thread, with a copy of the model of its own (serve's worker thread):
 * it keeps the training adapter and the optimizer, and hands back each step's adapter, which the
 * serving thread swaps in between two generation calls.
 */
export interface SeparateTrainer {
  /** One step on the trainer's copy; its version is the serving thread's newest plus one. */
  train(items: TrainItem[], onMicroBatch?: (i: number, n: number) => void): Promise<SeparateStep>;
  /** Continue from a saved adapter, as EnginePolicyService.restore. */
  restore(files: PeftFiles, version: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The separate trainer cannot train (its thread did not start, or stopped): steps from then on
 * run on the serving thread, from the newest version with a fresh optimizer, as after a restore.
 */
export class TrainerUnavailableError extends EngineError {}

/**
 * One version of the trained policy: a LoRA adapter over the loaded model, or (full
 * fine-tuning) a model with weights of its own.
 */
interface PolicyState {
  readonly model: CausalLM;
  readonly lora?: LoraAdapter;
  clone(): Promise<PolicyState>;
  dispose(): void;
}

class LoraState implements PolicyState {
  constructor(
    readonly model: CausalLM,
    readonly lora: LoraAdapter,
  ) {}
  async clone(): Promise<PolicyState> {
    return new LoraState(this.model, await this.lora.clone(this.model.backend));
  }
  dispose(): void {
    this.lora.dispose(this.model.backend);
  }
}

class FullState implements PolicyState {
  constructor(
    readonly model: CausalLM,
    /** False for the loaded model itself, which is the frozen initial policy and is never freed. */
    private readonly owned: boolean,
  ) {}
  async clone(): Promise<PolicyState> {
    return new FullState(await copyModelF32(this.model), true);
  }
  dispose(): void {
    if (this.owned) disposeModel(this.model);
  }
}

/** Padded tokens per training micro-batch: what one step holds at once (serve plans its trainer's memory with it). */
export const MICRO_BATCH_TOKENS = 2048;

export class EnginePolicyService implements PolicyService {
  /** The version a request that pins none is served with: the newest trained, from the next call on. */
  private version = 0;
  /**
   * The version of the newest trained state. Two steps can finish during one generation call;
   * numbering by the trained steps (not by swaps) keeps version = steps taken.
   */
  private latest = 0;
  /** Every version still kept, by number: the serving one, and older ones still read or pinned. */
  private readonly states = new Map<number, PolicyState>();
  /** Calls running on each version: a state is freed only once nothing reads it. */
  private readonly holds = new Map<number, number>();
  /** keepVersionsFrom's bound: versions at or above it stay for pinned requests; null: the serving one only. */
  private keepFrom: number | null = null;
  /** Made at the first step after start or a restore, on the training copy. */
  private trainer: Trainer | null = null;
  private training: PolicyState;
  private readonly full: boolean;
  /** Where steps run while it can (trainBeside); null: on this thread. */
  private separate: { trainer: SeparateTrainer; unavailable: (e: TrainerUnavailableError) => void } | null = null;
  /** A trainer thread was wanted: a step on this thread then refuses requests rather than holding them. */
  private wantedBeside = false;
  private readonly temperature: number;

  constructor(
    readonly policy: Policy,
    private readonly preset: MethodPreset,
    private readonly seed: number,
    /**
     * The run's sampling temperature (config.sampling.policy.temperature): every score and
     * training step divides the logits by it (scoringTemperature), as the rollouts were drawn.
     */
    rolloutTemperature: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.temperature = scoringTemperature(rolloutTemperature);
    this.full = preset.finetune.mode === 'full';
    if (this.full) {
      // Before the run starts: every weight must fit one buffer, or the first step would fail.
      const limits = (policy.model.backend as { device?: GPUDevice }).device?.limits;
      checkFullTrainingFits(policy.config, limits ? { maxBufferBytes: Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize) } : {});
      this.training = new FullState(policy.model, false);
    } else {
      const lora = preset.finetune.lora;
      this.training = new LoraState(
        policy.model,
        LoraAdapter.init(policy.model.backend, policy.config, { rank: lora.rank, alpha: lora.alpha, targets: lora.targets as Projection[] }, seed),
      );
    }
    this.states.set(0, this.training);
    this.label = `engine: ${policy.source.id} (${policy.model.backend.kind}${this.full ? ', full fine-tuning' : ''})`;
  }

  readonly label: string;

  private settings(): TrainSettings {
    const p = this.preset;
    return {
      epsLow: p.loss.epsLow,
      epsHigh: p.loss.epsHigh,
      klCoef: p.loss.klCoef,
      klType: klTypeOf(p),
      aggregation: p.loss.aggregation,
      lr: p.optimizer.lr,
      betas: p.optimizer.betas,
      adamEps: p.optimizer.eps,
      weightDecay: p.optimizer.weightDecay,
      maxGradNorm: 1,
      microBatchTokens: MICRO_BATCH_TOKENS,
      recompute: p.finetune.recompute ?? 'none',
      temperature: this.temperature,
    };
  }

  private makeTrainer(): Trainer {
    const t = this.training;
    return t.lora ? new LoraTrainer(t.model, t.lora, this.settings()) : new FullTrainer(t.model, this.settings());
  }

  servingVersion(): number {
    return this.version;
  }

  get trainsBeside(): boolean {
    return this.separate !== null;
  }

  /**
   * Whether a step on this thread refuses requests (503) rather than holding them: only once a
   * trainer thread was asked for and could not be used. Without one, requests wait for the step,
   * as they always have.
   */
  get refusesDuringSteps(): boolean {
    return this.wantedBeside && this.separate === null;
  }

  /**
   * A trainer thread was wanted but is not to be started (serve's --max-memory has no room for
   * its copy): steps train here and refuse requests meanwhile, as after the thread fell back.
   */
  refuseDuringSteps(): void {
    this.wantedBeside = true;
  }

  /**
   * Steps run on `trainer` from now on while this thread goes on serving; if it becomes
   * unavailable they run here again, and `unavailable` hears why (once).
   */
  trainBeside(trainer: SeparateTrainer, unavailable: (e: TrainerUnavailableError) => void): void {
    if (this.full) throw new NoAdapterError('full fine-tuning has no adapter to hand between threads; it trains on the serving thread');
    this.separate = { trainer, unavailable };
    this.wantedBeside = true;
  }

  keepVersionsFrom(version: number): void {
    this.keepFrom = version;
    this.settle();
  }

  /**
   * Serving moves to the newest trained version; every version below what serving and pinned
   * requests still need is freed once nothing reads it (the training copy never is).
   */
  private settle(): void {
    this.version = this.latest;
    const needed = this.keepFrom === null ? this.version : Math.min(this.keepFrom, this.version);
    for (const [v, state] of this.states) {
      if (v >= needed || (this.holds.get(v) ?? 0) > 0) continue;
      this.states.delete(v);
      if (state !== this.training) state.dispose();
    }
  }

  /**
   * Runs fn on one kept version, holding it so that no settle frees it while fn reads its tensors
   * across awaits: `at` a pinned version, the serving one, or the newest trained.
   */
  private async holding<T>(fn: (state: PolicyState, version: number) => Promise<T>, at: number | 'serving' | 'newest' = 'serving'): Promise<T> {
    this.settle();
    const version = at === 'serving' ? this.version : at === 'newest' ? this.latest : at;
    const state = this.states.get(version);
    if (!state) {
      throw new EngineError(
        `policy version ${version} is not kept (kept: ${[...this.states.keys()].join(', ')}); pin only versions at or above keepVersionsFrom's bound`,
      );
    }
    this.holds.set(version, (this.holds.get(version) ?? 0) + 1);
    try {
      return await fn(state, version);
    } finally {
      this.holds.set(version, this.holds.get(version)! - 1);
      this.settle();
    }
  }

  /** The version every request of one call pins, or 'serving' when none does; one call serves one version. */
  private pinnedVersion(pins: readonly (number | undefined)[]): number | 'serving' {
    const first = pins[0];
    if (pins.some((v) => v !== first)) {
      throw new EngineError(`one call mixes policy versions (${[...new Set(pins)].join(', ')}); batch requests by their version`);
    }
    return first ?? 'serving';
  }

  generate(requests: PolicyRequest[], signal?: AbortSignal, hooks: GenerationHooks = {}): Promise<PolicyReply[]> {
    const at = this.pinnedVersion(requests.map((r) => r.version));
    return this.holding(async (state, version) => {
      const startedAt = this.clock();
      const s = requests[0].sampling;
      const policy = state.model === this.policy.model ? this.policy : this.policy.withModel(state.model);
      const gens = await policy.generate(
        requests.map((r) => r.messages),
        {
          maxNewTokens: Math.max(...requests.map((r) => r.maxNewTokens)),
          sampling: s,
          seeds: requests.map((r) => r.seed),
          tools: requests.map((r) => r.tools),
          continues: requests.map((r) => r.continues),
          limits: requests.map((r) => ({ maxNewTokens: r.maxNewTokens, stopStrings: r.stop })),
          lora: state.lora,
          signal,
          ...(hooks.onToken ? { onToken: hooks.onToken } : {}),
          ...(hooks.dropped ? { dropped: hooks.dropped } : {}),
        },
      );
      const finishedAt = this.clock();
      const tok = this.policy.tokenizer;
      return gens.map((g) => ({
        text: g.text,
        tokenIds: g.tokens,
        logprobs: g.logprobs,
        tokenTexts: tok.tokenTexts(g.tokens),
        promptIds: g.promptIds,
        version,
        finishReason: g.finishReason,
        startedAt,
        finishedAt,
      }));
    }, at);
  }

  score(items: ScoreItem[], teacher: TeacherSource): Promise<number[][]> {
    return this.holding(async (state) => (await this.scoreWith(state, items, teacher)).map((s) => Array.from(s.logprobs)), this.scoringVersion(items, teacher));
  }

  /** 'current' reads the version the items pin (the turn's own, in a fixed schedule), else the serving one. */
  private scoringVersion(items: ScoreItem[], policy: TeacherSource): number | 'serving' {
    return policy === 'current' ? this.pinnedVersion(items.map((it) => it.version)) : 'serving';
  }

  scoreTopK(items: ScoreItem[], policy: TeacherSource, k: number): Promise<ScoredTopK[]> {
    return this.holding(
      async (state) =>
        (await this.scoreWith(state, items, policy, k)).map((s) => ({
          logprobs: Array.from(s.logprobs),
          topIds: s.topIds!.map((ids) => Array.from(ids)),
          ...(s.gathered ? { atLogp: s.gathered.map((lp) => Array.from(lp)) } : {}),
        })),
      this.scoringVersion(items, policy),
    );
  }

  /** Teacher-forced scores under the current policy or the frozen initial one (with the top k ids when asked). */
  private scoreWith(state: PolicyState, items: ScoreItem[], policy: TeacherSource, topK?: number) {
    // The initial adapter has B = 0, and full fine-tuning trains copies, so the frozen initial
    // policy is the loaded model itself.
    const current = policy === 'current';
    return score(
      current ? state.model : this.policy.model,
      items.map((it) => ({ prompt: this.policy.promptIds(it.messages, { tools: it.tools }), completion: it.tokenIds })),
      {
        lora: current ? state.lora : undefined,
        topK,
        temperature: this.temperature,
        ...(items.some((it) => it.at) ? { gather: items.map((it) => it.at) } : {}),
      },
    );
  }

  async train(items: TrainItem[], onMicroBatch?: (i: number, n: number) => void): Promise<TrainResult> {
    const startedAt = this.clock();
    const separate = this.separate;
    if (separate) {
      try {
        const step = await separate.trainer.train(items, onMicroBatch);
        this.adopt(step.adapter, step.version);
        return { version: this.latest, stats: step.stats, startedAt, finishedAt: this.clock() };
      } catch (e) {
        if (!(e instanceof TrainerUnavailableError)) throw e;
        this.separate = null;
        void separate.trainer.close();
        separate.unavailable(e);
      }
    }
    if (this.states.get(this.latest) === this.training || !this.trainer) {
      // Serving and training share one state only before the first step after start or a
      // restore, when the trainer has no optimizer state yet: train a copy, so generations
      // in flight keep weights that AdamW does not touch.
      this.training = await this.states.get(this.latest)!.clone();
      this.trainer?.dispose();
      this.trainer = this.makeTrainer();
    }
    const stats = await this.trainer.trainStep(
      items.map((it) => ({
        prompt: this.policy.promptIds(it.messages, { tools: it.tools }),
        completion: it.tokenIds,
        advantages: it.advantages,
        rolloutLogp: it.rolloutLogp,
        trainable: it.trainable,
        ...(it.lossMask ? { lossMask: it.lossMask } : {}),
        opdWeight: it.opdWeight,
        ...(it.opdClip ? { opdClip: it.opdClip } : {}),
        ...(it.opdTopK ? { opdTopK: it.opdTopK } : {}),
      })),
      // The KL term's reference is the initial policy: the base model for LoRA, and the loaded
      // model, which full fine-tuning leaves untouched.
      { onMicroBatch, scoreAfter: true, reference: this.full ? { kind: 'model', model: this.policy.model } : { kind: 'base' } },
    );
    this.states.set(this.latest + 1, await this.training.clone());
    this.latest++;
    this.settle();
    return { version: this.latest, stats, startedAt, finishedAt: this.clock() };
  }

  /** A separate trainer's new version becomes the newest; serving swaps to it at its next call. */
  private adopt(files: PeftFiles, version: number): void {
    if (version !== this.latest + 1)
      throw new EngineError(`the separate trainer made version ${version} after version ${this.latest}: the two threads went out of step, a bug to report`);
    this.states.set(version, new LoraState(this.policy.model, this.loraOf(files)));
    this.latest = version;
    this.settle();
  }

  private loraOf(files: PeftFiles): LoraAdapter {
    return adapterFromPeft(this.policy.model.backend, this.policy.config, { weights: files[PEFT_WEIGHTS], config: files[PEFT_CONFIG] });
  }

  async memory(): Promise<{ allocated: number; peak: number }> {
    return this.policy.model.backend.memory();
  }

  exportAdapter(): Promise<PeftFiles> {
    return this.holding((state) => {
      if (!state.lora) throw new NoAdapterError('this run fine-tunes every weight (finetune.mode "full") and has no adapter; export the model folder instead');
      return adapterToPeft(this.policy.model.backend, state.lora, this.policy.source.id);
    }, 'newest');
  }

  /** The newest weights as a Hugging Face folder, with the optimizer's state when a step has run. */
  exportModel(): Promise<Map<string, Uint8Array>> {
    return this.holding(async (state) => {
      if (state.lora) throw new EngineError('this run trains a LoRA adapter; export the adapter (PEFT files) instead of a model folder');
      const files = await fullModelFolder(state.model, this.policy.source);
      if (this.trainer) files.set(OPTIMIZER_FILE, optimizerToSafetensors(await this.trainer.optimizerState(), parameterShape(state.model)));
      return files;
    }, 'newest');
  }

  async restore(files: PeftFiles, version: number): Promise<void> {
    if (this.full) throw new NoAdapterError('this run fine-tunes every weight (finetune.mode "full"): it cannot continue from a LoRA adapter');
    const loaded = this.loraOf(files);
    this.trainer?.dispose();
    this.trainer = null;
    for (const state of this.states.values()) if (state !== this.training) state.dispose();
    this.training.dispose();
    this.states.clear();
    this.holds.clear();
    this.training = new LoraState(this.policy.model, loaded);
    this.states.set(version, this.training);
    this.version = version;
    this.latest = version;
    await this.separate?.trainer.restore(files, version);
  }
}

/** The hub commit an engine policy's files were read at; undefined for a folder, a bundled model or a server's policy. */
export function policyCommit(service: PolicyService): string | undefined {
  return (service instanceof EnginePolicyService && service.policy.source.commit?.()) || undefined;
}
