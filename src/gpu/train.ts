/**
 * One training step of the method, on LoRA adapters or on every weight of the model (full
 * fine-tuning; one Trainer serves both, they differ only in what is trained): score reference log-probs when the KL term
 * needs them, forward with a tape and backward per micro-batch, accumulate gradients, clip the
 * global norm, and apply AdamW, or skip the step untouched when anything is not finite.
 *
 * Old log-probs are those of the current weights before the step. The weights do not change
 * until every micro-batch is through, so the taped forward already computes them: a sample
 * without given `oldLogp` takes its own forward's values (rho = 1 exactly, as on-policy PPO
 * with one update per batch has it) and no separate scoring pass is spent.
 */
import { checkLossMask, countedTokens, countedValues, maskAdvantages } from '../rl/loss-mask';
import { ppoBatchLoss, type PpoSampleInput } from '../rl/ppo';
import { checkTopKTarget } from '../rl/topk-distill';
import { clipDifference } from '../rl/topk-hints';
import type { Tensor } from './backend';
import { backward, EMBED_KEY, headBackward, zeroGrads, type Grads } from './backward';
import { expectedTensors } from '../models/config';
import { EngineError, FullTrainingMemoryError } from './errors';
import { MAX_OPTIMIZER_STEP } from './full';
import { countNonFinite } from '../models/safetensors';
import { leftPad } from './generate';
import { ppoLossGrad, reverseKlLossGrad, topKLossGrad, type BatchNorm } from './loss';
import { checkFinite } from './numerics';
import { yieldToEventLoop } from './yield';
import type { LoraAdapter } from './lora';
import type { CausalLM, Recompute, Tape } from './model';
import { completionRows, LOGITS_CHUNK_FLOATS, readLogprobs, rowChunks, score, type ScoreItem } from './score';
import { addColumnsGradient, readColumnLogprobs } from './gather-columns';
import { DEFAULT_FULL_TRAIN, type OptimizerState, type Reference, type StepStats, type Trainable, type TrainSample, type TrainSettings } from './train-types';

export class Trainer {
  private step = 0;
  private readonly m = new Map<string, Tensor>();
  private readonly v = new Map<string, Tensor>();

  constructor(
    readonly model: CausalLM,
    readonly trainable: Trainable,
    readonly settings: TrainSettings,
    private readonly clock: () => number = () => performance.now(),
  ) {
    for (const { name, tensor } of trainable.parameters()) {
      this.m.set(name, model.backend.zeros(tensor.shape));
      this.v.set(name, model.backend.zeros(tensor.shape));
    }
  }

  /** What the logits are divided by for every log-prob of a step (TrainSettings.temperature). */
  private get temperature(): number {
    return this.settings.temperature ?? 1;
  }

  get stepsTaken(): number {
    return this.step;
  }

  async trainStep(
    samples: TrainSample[],
    options: { reference?: Reference; onMicroBatch?: (i: number, n: number) => void; scoreAfter?: boolean } = {},
  ): Promise<StepStats> {
    const t0 = this.clock();
    const be = this.model.backend;
    const s = this.settings;
    for (const [i, x] of samples.entries()) {
      if (x.advantages.length !== x.completion.length) {
        throw new EngineError(`sample ${i}: ${x.advantages.length} advantages for ${x.completion.length} completion tokens`);
      }
      checkLossMask(x.lossMask, x.completion.length, `sample ${i}`);
      if (x.opdWeight && x.rolloutLogp?.length !== x.completion.length) {
        throw new EngineError(`sample ${i} has an OPD term but no rollout log-prob per completion token; pass rolloutLogp to re-base it on the old policy`);
      }
      if (x.opdTopK) {
        // The top-k select surrogate's ratio needs the step's own old log-probs; a reverse KL has no ratio.
        if (x.oldLogp && !x.opdTopK.term)
          throw new EngineError(
            `sample ${i} has a top-k OPD term and fixed old log-probs; the term's old log-probs come from the step's own forward, so leave oldLogp out`,
          );
        checkTopKTarget(x.opdTopK, x.completion.length, `sample ${i}`);
      }
      if (x.opdWeight && x.opdClip && x.opdClip.teacherLogp.length !== x.completion.length) {
        throw new EngineError(
          `sample ${i}: ${x.opdClip.teacherLogp.length} teacher log-probs for ${x.completion.length} completion tokens; the clipped OPD term needs one per token`,
        );
      }
    }
    // Only trainable samples are forwarded; the masked ones are left out of every pass.
    const trained = samples.flatMap((x, i) => ((x.trainable ?? true) ? [i] : []));
    const part = trained.map((i) => samples[i]);
    const old: (number[] | undefined)[] = part.map((x) => x.oldLogp);
    const oldTop: (number[][] | null)[] = new Array(part.length);
    const adv: number[][] = new Array(part.length);
    const ref = s.klCoef !== 0 ? await this.referenceLogprobs(part, options.reference ?? { kind: 'base' }) : undefined;
    // Every sample is a slot of the sample mean (the reference divides by the batch size);
    // only trainable tokens count in the token mean.
    const norm: BatchNorm = { samples: samples.length, tokens: part.reduce((n, x) => n + countedTokens(x.lossMask, x.completion.length), 0) };
    const params = this.trainable.parameters();
    const grads = zeroGrads(be, params);
    const logp: Float32Array[] = new Array(part.length);
    const topLogp: (number[][] | null)[] = new Array(part.length);
    const entropy: Float32Array[] = new Array(part.length);
    // The loss's view of sample i at the current weights; its old log-probs are fixed the first time.
    const fullKl: (number[] | null)[] = new Array(part.length);
    const lossInput = (i: number, current: number[], currentTop: number[][] | null, currentKl: number[] | null): PpoSampleInput => {
      const x = part[i];
      old[i] ??= current;
      oldTop[i] ??= currentTop;
      // A masked token carries no advantage, whatever the sample says (slime multiplies by the mask).
      adv[i] = maskAdvantages(trainAdvantages(x, old[i]), x.lossMask);
      const topk = x.opdTopK && currentTop ? { ...x.opdTopK, logp: currentTop, oldLogp: oldTop[i]! } : undefined;
      const reverseKl = x.opdTopK && currentKl ? { weight: x.opdTopK.weight, kl: currentKl } : undefined;
      return {
        logp: current,
        oldLogp: old[i],
        advantages: adv[i],
        refLogp: ref?.[i],
        ...(x.lossMask ? { lossMask: x.lossMask } : {}),
        ...(topk ? { topk } : {}),
        ...(reverseKl ? { reverseKl } : {}),
      };
    };
    const batches = this.microBatches(part);
    try {
      for (const [bi, idx] of batches.entries()) {
        await yieldToEventLoop();
        options.onMicroBatch?.(bi, batches.length);
        const r = await this.forwardBackward(
          idx.map((i) => part[i]),
          (lp, top, kl) => {
            const inputs = idx.map((i, j) => lossInput(i, Array.from(lp[j]), top[j], kl[j]));
            return { dlogp: ppoLossGrad(inputs, s, norm), dtop: topKLossGrad(inputs, s, norm), dkl: reverseKlLossGrad(inputs, s, norm) };
          },
          grads,
        );
        idx.forEach((i, j) => {
          logp[i] = r.logp[j];
          topLogp[i] = r.topLogp[j];
          fullKl[i] = r.kl[j];
          entropy[i] = r.entropy[j];
        });
      }
      const before = old as number[][];
      const inputs: PpoSampleInput[] = part.map((_, i) => lossInput(i, Array.from(logp[i]), topLogp[i], fullKl[i]));
      // A masked sample enters the aggregate as an empty slot: under sample-mean it still
      // counts in the batch size, under token-mean it adds nothing.
      const slots = samples.length - part.length;
      for (let k = 0; k < slots; k++) inputs.push({ logp: [], oldLogp: [], advantages: [], trainable: false });
      const stats = ppoBatchLoss(inputs, s);
      const gradNorm = Math.sqrt(await be.sumSquares([...grads.values()]));
      const skipped = !Number.isFinite(stats.loss) ? `loss is ${stats.loss}` : !Number.isFinite(gradNorm) ? `gradient norm is ${gradNorm}` : null;
      if (!skipped) this.applyAdamW(params, grads, gradNorm);
      // One more forward pass shows how far the update moved each token (the token view).
      const after = options.scoreAfter && !skipped ? await this.logprobsUnder(part, this.model, this.trainable.lora) : null;
      // Statistics over the tokens the loss trains: an observation token's rollout log-prob is a placeholder.
      const allEntropy = part.flatMap((x, i) => countedValues(entropy[i], x.lossMask));
      const gaps = part.flatMap((x, i) =>
        x.rolloutLogp
          ? countedValues(
              x.rolloutLogp.map((lp, t) => Math.abs(lp - before[i][t])),
              x.lossMask,
            )
          : [],
      );
      const opdGaps = part.flatMap((x, i) =>
        x.opdWeight
          ? countedValues(
              adv[i].map((a, t) => Math.abs(a - x.advantages[t])),
              x.lossMask,
            )
          : [],
      );
      const perSample = after ? samples.map((): NonNullable<StepStats['perSample']>[number] => null) : null;
      if (perSample) trained.forEach((i, k) => (perSample[i] = { before: before[k], after: after![k], advantages: adv[k] }));
      return {
        step: this.step,
        loss: stats.loss,
        policyLoss: stats.policyLoss,
        kl: stats.kl,
        clipFracLow: stats.clipFracLow,
        clipFracHigh: stats.clipFracHigh,
        entropy: mean(allEntropy),
        meanAbsAdv: stats.meanAbsAdv,
        gradNorm,
        tokens: stats.tokens,
        stepMs: this.clock() - t0,
        rolloutGap: gaps.length ? mean(gaps) : null,
        opdGap: opdGaps.length ? mean(opdGaps) : null,
        microBatches: batches.length,
        skipped,
        ...(perSample ? { perSample } : {}),
      };
    } finally {
      for (const g of grads.values()) be.dispose(g);
    }
  }

  /** Log-probs of the completions under `model` with `lora` applied (none: its weights alone). */
  private async logprobsUnder(samples: TrainSample[], model: CausalLM, lora: LoraAdapter | undefined): Promise<number[][]> {
    const scored = await score(model, samples, { lora, maxBatchTokens: this.settings.microBatchTokens, temperature: this.temperature });
    return scored.map((x) => Array.from(x.logprobs));
  }

  private referenceLogprobs(samples: TrainSample[], r: Reference): Promise<number[][]> {
    if (r.kind === 'model') return this.logprobsUnder(samples, r.model, undefined);
    if (!this.trainable.lora && r.kind === 'base') {
      throw new EngineError('full fine-tuning trains the base weights themselves: the KL term needs a frozen copy as its reference ({ kind: "model" })');
    }
    return this.logprobsUnder(samples, this.model, r.kind === 'adapter' ? r.adapter : undefined);
  }

  /** Sample indices grouped so each group's padded length stays within the token budget. */
  private microBatches(samples: TrainSample[]): number[][] {
    const out: number[][] = [];
    let cur: number[] = [];
    let maxLen = 0;
    for (const [i, x] of samples.entries()) {
      const len = Math.max(maxLen, x.prompt.length + x.completion.length);
      if (cur.length && len * (cur.length + 1) > this.settings.microBatchTokens) {
        out.push(cur);
        cur = [];
        maxLen = 0;
      }
      cur.push(i);
      maxLen = Math.max(maxLen, x.prompt.length + x.completion.length);
    }
    if (cur.length) out.push(cur);
    return out;
  }

  /**
   * Forward with a tape, d loss / d logp from `lossGrad`, backward into `grads`. A sample with a
   * top-k OPD term (or a reverse KL over top-k sets) also has the log-probs of its set members
   * read at every completion position, and their gradient joins the sampled token's in the
   * logits' backward. A sample with the reverse KL over the whole vocabulary has KL_t computed
   * from the logits and the teacher's row (the backend's reverseKl), and its backward joins too.
   */
  private async forwardBackward(
    part: TrainSample[],
    lossGrad: (
      logp: Float32Array[],
      topLogp: (number[][] | null)[],
      kl: (number[] | null)[],
    ) => { dlogp: Float32Array[]; dtop: (Float32Array[] | null)[]; dkl: (Float32Array | null)[] },
    grads: Grads,
  ): Promise<{ logp: Float32Array[]; topLogp: (number[][] | null)[]; kl: (number[] | null)[]; entropy: Float32Array[] }> {
    const be = this.model.backend;
    const { ids, T, padLeft } = leftPad(
      part.map((x) => [...x.prompt, ...x.completion]),
      0,
    );
    // With recomputation the backward rebuilds one layer's K/V at a time, into the same pair.
    const recompute = this.settings.recompute ?? 'none';
    const cache = this.model.createCache(part.length, T, { oneLayer: recompute === 'layer' });
    const tapeBox: { value?: Tape; recompute: Recompute } = { recompute };
    const hidden = this.model.forward({ ids, B: part.length, T, start: 0, padLeft }, cache, this.trainable.lora, tapeBox);
    const tape = tapeBox.value!;
    try {
      const { rows, targets } = completionRows(part, T, padLeft);
      const V = this.model.config.vocabSize;
      const full = part.map((x) => wholeVocabulary(x, V));
      const members = topKColumns(part, targets, full);
      // The teacher's rows in vocabulary order, for the whole-vocabulary reverse KL (zeros elsewhere, with no gradient).
      const teacherRows = full.some(Boolean) ? vocabularyRows(part, full, V, rows.length) : null;
      const teacherChunk = (a: number, b: number) => be.tensor(teacherRows!.subarray(a * V, b * V), [b - a, V]);
      const flatKl = new Float32Array(rows.length);
      // Logits are rows x vocabulary: in chunks of rows, so a 150k vocabulary never needs one
      // huge buffer. With one chunk the logits are kept for the backward; with more they are
      // recomputed there rather than all held at once.
      const chunks = rowChunks(rows.length, this.model.config.vocabSize, this.settings.logitsChunkFloats ?? LOGITS_CHUNK_FLOATS);
      const flatLogp = new Float32Array(rows.length);
      const flatEnt = new Float32Array(rows.length);
      const flatTop = members.map(() => new Float32Array(rows.length));
      let kept: Tensor | null = null;
      for (const [a, b] of chunks) {
        const logits = this.model.logits(hidden, rows.subarray(a, b), this.temperature);
        await readLogprobs(be, logits, targets.subarray(a, b), { logp: flatLogp, entropy: flatEnt }, a);
        await readColumnLogprobs(
          be,
          logits,
          members.map((column) => column.subarray(a, b)),
          flatTop,
          a,
        );
        if (teacherRows) {
          const q = teacherChunk(a, b);
          const kl = be.reverseKl(logits, q);
          try {
            flatKl.set(await be.read(kl), a);
          } finally {
            be.dispose(q);
            be.dispose(kl);
          }
        }
        if (chunks.length === 1) kept = logits;
        else be.dispose(logits);
      }
      try {
        await checkFinite(this.model, part, [flatLogp, flatEnt], this.trainable.lora);
      } catch (e) {
        if (kept) be.dispose(kept);
        throw e;
      }
      const logp = split(flatLogp, part);
      const topLogp = splitMembers(flatTop, part, full);
      const kl = split(flatKl, part).map((k, i) => (full[i] ? Array.from(k) : null));
      const { dlogp: dSampled, dtop, dkl } = lossGrad(logp, topLogp, kl);
      const flatDkl = new Float32Array(rows.length);
      let atKl = 0;
      part.forEach((x, i) => {
        if (dkl[i]) flatDkl.set(dkl[i]!, atKl);
        atKl += x.completion.length;
      });
      const flatD = new Float32Array(flatLogp.length);
      let at = 0;
      for (const d of dSampled) {
        flatD.set(d, at);
        at += d.length;
      }
      const flatDTop = joinMembers(dtop, part, members.length, rows.length);
      const N = part.length * T;
      const dHidden = be.zeros([N, this.model.config.hiddenSize]);
      for (const [a, b] of chunks) {
        const logits = kept ?? this.model.logits(hidden, rows.subarray(a, b), this.temperature);
        const dlogp = be.tensor(flatD.subarray(a, b), [b - a]);
        const dlogits = be.logSoftmaxGatherBackward(logits, targets.subarray(a, b), dlogp);
        be.dispose(dlogp);
        addColumnsGradient(
          be,
          dlogits,
          logits,
          members.map((column) => column.subarray(a, b)),
          flatDTop.map((d) => d.subarray(a, b)),
        );
        if (teacherRows) {
          const q = teacherChunk(a, b);
          const d = be.tensor(flatDkl.subarray(a, b), [b - a]);
          const dj = be.reverseKlBackward(logits, q, d);
          be.addInPlace(dlogits, dj);
          for (const t of [q, d, dj]) be.dispose(t);
        }
        be.dispose(logits);
        headBackward(this.model, hidden, rows.subarray(a, b), dlogits, grads, dHidden, this.temperature);
        be.dispose(dlogits);
      }
      backward(this.model, tape, dHidden, grads, this.trainable.lora);
      be.dispose(dHidden);
      return { logp, topLogp, kl, entropy: split(flatEnt, part) };
    } finally {
      be.dispose(hidden);
      this.model.disposeTape(tape);
      this.model.disposeCache(cache);
    }
  }

  /**
   * AdamW on every parameter. Weight decay applies to matrices only: biases and norm weights
   * are not decayed (Megatron's default, under the reference's slime).
   */
  private applyAdamW(params: { name: string; tensor: Tensor }[], grads: Grads, gradNorm: number): void {
    const s = this.settings;
    this.step++;
    const gradScale = s.maxGradNorm > 0 && gradNorm > s.maxGradNorm ? s.maxGradNorm / gradNorm : 1;
    const adam = { lr: s.lr, beta1: s.betas[0], beta2: s.betas[1], eps: s.adamEps, weightDecay: s.weightDecay, step: this.step, gradScale };
    const flat = { ...adam, weightDecay: 0 };
    for (const { name, tensor } of params) {
      this.model.backend.adamwInPlace(tensor, grads.get(name)!, this.m.get(name)!, this.v.get(name)!, tensor.shape.length >= 2 ? adam : flat);
    }
  }

  /** The step count and both moments, read back (for a checkpoint). */
  async optimizerState(): Promise<OptimizerState> {
    const be = this.model.backend;
    const names = [...this.m.keys()];
    const read = await Promise.all(names.flatMap((n) => [be.read(this.m.get(n)!), be.read(this.v.get(n)!)]));
    return { step: this.step, moments: new Map(names.map((n, i) => [n, { m: read[2 * i], v: read[2 * i + 1] }])) };
  }

  /** Continues from a checkpoint's optimizer state: every parameter's moments, by name and size. */
  restoreOptimizer(state: OptimizerState): void {
    const be = this.model.backend;
    if (!Number.isInteger(state.step) || state.step < 0 || state.step > MAX_OPTIMIZER_STEP) {
      throw new EngineError(`optimizer state: step ${state.step} is not a whole number up to ${MAX_OPTIMIZER_STEP.toLocaleString('en-US')}; it is damaged`);
    }
    for (const name of state.moments.keys()) {
      if (!this.m.has(name))
        throw new EngineError(`optimizer state has moments for ${name}, which this model does not train; it belongs to another model or training mode`);
    }
    for (const [name, m] of this.m) {
      const saved = state.moments.get(name);
      if (!saved) throw new EngineError(`optimizer state has no moments for ${name}; it belongs to another model or training mode`);
      if (saved.m.length !== m.size || saved.v.length !== m.size || (saved.shape && saved.shape.join(',') !== m.shape.join(','))) {
        throw new EngineError(
          `optimizer state: ${name} has ${saved.shape ? `shape [${saved.shape}]` : `${saved.m.length} values`}, the parameter ${saved.shape ? `[${m.shape}]` : m.size}; it belongs to another model`,
        );
      }
      // AdamW divides by the square root of the second moment: a negative or non-finite one makes every weight NaN.
      const bad = saved.v.findIndex((x) => !(x >= 0 && x < Infinity));
      if (bad >= 0 || countNonFinite(saved.m) > 0) {
        const what = bad >= 0 ? `exp_avg_sq[${bad}] is ${saved.v[bad]}; a second moment is a finite number of at least 0` : 'exp_avg holds NaN or infinity';
        throw new EngineError(`optimizer state: ${name}'s ${what}. The state is damaged; resume from another checkpoint or start without --resume`);
      }
    }
    for (const [name, m] of this.m) {
      const saved = state.moments.get(name)!;
      be.dispose(m);
      be.dispose(this.v.get(name)!);
      this.m.set(name, be.tensor(saved.m, m.shape));
      this.v.set(name, be.tensor(saved.v, m.shape));
    }
    this.step = state.step;
  }

  dispose(): void {
    for (const t of [...this.m.values(), ...this.v.values()]) this.model.backend.dispose(t);
  }
}

/** LoRA training: the adapter's A and B are trained, the base weights stay frozen. */
export class LoraTrainer extends Trainer {
  constructor(
    model: CausalLM,
    readonly adapter: LoraAdapter,
    settings: TrainSettings,
    clock?: () => number,
  ) {
    super(model, { parameters: () => adapter.parameters(), lora: adapter }, settings, clock);
  }
}

export interface FullTrainOptions {
  /** Keep model.embed_tokens.weight fixed (and so a tied LM head); default false, as the reference trains every weight. */
  freezeEmbedding?: boolean;
}

/**
 * The names full fine-tuning trains: every checkpoint key of the model (projections, biases,
 * norms, the embedding, an untied LM head), without the embedding when it is frozen.
 */
export function fullParameterNames(model: CausalLM, o: FullTrainOptions = {}): string[] {
  return expectedTensors(model.config)
    .map((e) => e.name)
    .filter((n) => !(o.freezeEmbedding && n === EMBED_KEY));
}

/**
 * Full fine-tuning: the model's own weights are trained in place, named by their checkpoint
 * keys. Weights must be f32 on the device (load with weightFormat 'f32') and each fit one buffer.
 */
export class FullTrainer extends Trainer {
  readonly names: string[];

  constructor(model: CausalLM, settings: TrainSettings = DEFAULT_FULL_TRAIN, options: FullTrainOptions = {}, clock?: () => number) {
    const names = fullParameterNames(model, options);
    for (const name of names) {
      const t = model.w(name) as Tensor & { isSplit?: boolean };
      if (t.dtype !== 'f32') {
        throw new EngineError(`full fine-tuning trains f32 weights, but ${name} is stored as ${t.dtype}; load the model with weightFormat 'f32'`);
      }
      if (t.isSplit)
        throw new FullTrainingMemoryError(`full fine-tuning: ${name} [${t.shape}] is larger than one GPU buffer can hold; train LoRA on this model instead`);
    }
    super(model, { parameters: () => names.map((name) => ({ name, tensor: model.w(name) })) }, settings, clock);
    this.names = names;
  }
}

/**
 * The advantages a step trains with: the sample's, its OPD term re-based on the old policy.
 * Unclipped: A_t + w (rollout_t - old_t). Clipped at c: A_t - w clip(T_t - rollout_t, c) + w clip(T_t - old_t, c).
 */
export function trainAdvantages(x: TrainSample, oldLogp: readonly number[]): number[] {
  const w = x.opdWeight;
  if (!w) return x.advantages;
  const c = x.opdClip;
  if (c && c.clip > 0) {
    return x.advantages.map((a, t) => {
      const teacher = c.teacherLogp[t];
      return a - w * clipDifference(teacher - x.rolloutLogp![t], c.clip) + w * clipDifference(teacher - oldLogp[t], c.clip);
    });
  }
  return x.advantages.map((a, t) => a + w * (x.rolloutLogp![t] - oldLogp[t]));
}

/**
 * Whether a sample's term is the reverse KL over the whole vocabulary: term "reverse-kl" with
 * every set holding all V ids (each once), which the backend's reverseKl op takes row by row
 * rather than as V gathered columns.
 *
 * @throws EngineError when such a set repeats an id
 */
function wholeVocabulary(x: TrainSample, V: number): boolean {
  const t = x.opdTopK;
  if (t?.term !== 'reverse-kl' || !t.ids.every((set) => set.length === V)) return false;
  const seen = new Uint8Array(V);
  t.ids.forEach((set, pos) => {
    seen.fill(0);
    for (const id of set) {
      if (!(id >= 0 && id < V) || seen[id])
        throw new EngineError(`the reverse-KL set of token ${pos} holds ${V} ids but not every vocabulary id once (${id}); give each id once`);
      seen[id] = 1;
    }
  });
  return true;
}

/** The teacher's log-probs in vocabulary order, one row of V per completion row (zeros for a sample without the whole-vocabulary term). */
function vocabularyRows(part: TrainSample[], full: boolean[], V: number, rows: number): Float32Array {
  const out = new Float32Array(rows * V);
  let at = 0;
  part.forEach((x, i) => {
    if (full[i]) {
      const { ids, teacherLogp } = x.opdTopK!;
      ids.forEach((set, t) => set.forEach((id, j) => (out[(at + t) * V + id] = teacherLogp[t][j])));
    }
    at += x.completion.length;
  });
  return out;
}

/**
 * The top-k set members as columns over the completion rows: column j holds member j of each
 * row's set. A row without a set (or with a smaller one, or the whole-vocabulary term) repeats
 * its own target there, with a zero gradient, so each column is one gather over every row. None
 * when no sample has a set.
 */
function topKColumns(part: TrainSample[], targets: Int32Array, full: boolean[]): Int32Array[] {
  const sets = part.map((x, i) => (full[i] ? undefined : x.opdTopK?.ids));
  const k = Math.max(0, ...sets.map((ids) => (ids ? Math.max(...ids.map((set) => set.length)) : 0)));
  const columns = Array.from({ length: k }, () => Int32Array.from(targets));
  let at = 0;
  part.forEach((x, i) => {
    sets[i]?.forEach((set, t) => set.forEach((id, j) => (columns[j][at + t] = id)));
    at += x.completion.length;
  });
  return columns;
}

/** Each sample's set members' log-probs per position (null without a set, or with the whole vocabulary), from the columns. */
function splitMembers(columns: Float32Array[], part: TrainSample[], full: boolean[]): (number[][] | null)[] {
  let at = 0;
  return part.map((x, i) => {
    const from = at;
    at += x.completion.length;
    return x.opdTopK && !full[i] ? x.opdTopK.ids.map((set, t) => set.map((_, j) => columns[j][from + t])) : null;
  });
}

/** The set members' gradients as columns over the rows (zero where a row has no such member). */
function joinMembers(dtop: (Float32Array[] | null)[], part: TrainSample[], k: number, rows: number): Float32Array[] {
  const columns = Array.from({ length: k }, () => new Float32Array(rows));
  let at = 0;
  part.forEach((x, i) => {
    dtop[i]?.forEach((g, t) => g.forEach((d, j) => (columns[j][at + t] = d)));
    at += x.completion.length;
  });
  return columns;
}

function split(flat: Float32Array, part: ScoreItem[]): Float32Array[] {
  let at = 0;
  return part.map((x) => {
    const r = flat.slice(at, at + x.completion.length);
    at += x.completion.length;
    return r;
  });
}

function mean(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}
