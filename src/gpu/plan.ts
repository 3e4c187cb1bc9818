/**
 * The memory planner: the bytes a model, a weight format, a LoRA adapter and a training step
 * need on the device, computed from config.json alone, without allocating anything.
 *
 * It follows the engine's own allocations, category by category:
 *  - weights: load.ts (matrices in the chosen format, quant.ts's storedWords at their exact size,
 *    the q4 model's embedding and LM head in q8; norms and biases f32, pooled);
 *  - KV cache: CausalLM.createCache, [B, numKvHeads, maxT, headDim] f32 per layer for K and V;
 *    a training forward fills one of its own, one slot per padded token of the micro-batch (one
 *    layer's K and V, reused by every layer, when recomputing);
 *  - activations: the tape CausalLM.forward keeps for backward() (LayerTape per layer, the final
 *    residual stream and the normed hidden states); with `recompute: 'layer'` (TrainSettings.recompute)
 *    each layer's input instead, plus the one layer's tape the backward rebuilds at a time;
 *  - LoRA: LoraAdapter (A [r, in], B [out, r] per targeted projection), its copies, and the
 *    gradient zeroGrads allocates each step; optimizer: the trainer's AdamW m and v. With full
 *    fine-tuning (FullTrainer) every weight is trained in f32 and gets a gradient, m and v;
 *  - scratch: the transient peak on top of those (q/k/v of the layer being run, the logits block
 *    and its gradient, the backward's per-layer temporaries), as train.ts and backward.ts free them.
 * The trainer cuts a batch into micro-batches of at most `microBatchTokens` padded tokens and
 * runs them one at a time, so one micro-batch is what the step holds at once.
 */
import { parameterCount, parseModelConfig, PROJECTIONS, projectionShape, type ModelConfig, type Projection } from '../models/config';
import { EngineError } from './errors';
import { LOGITS_CHUNK_FLOATS } from './score';
import { bitsPerWeight, GROUP, isQuantized, matrixFormat, storedWords, type WeightFormat } from './quant';
import { BufferPool } from './webgpu/pool';
import { DEFAULT_TRAIN } from './train-types';
import type { Recompute } from './model';
import type { BackendKind } from './backend';
import type { FinetuneMode } from '../rl/presets';

export const QUANTIZE_FORMATS = ['none', 'f16', 'q8', 'q4'] as const;
export type Quantize = (typeof QUANTIZE_FORMATS)[number];

/** The planner's name for a weight format: it calls f32 'none' (nothing done to the checkpoint's floats). */
export function quantizeOf(format: WeightFormat): Quantize {
  return format === 'f32' ? 'none' : format;
}

/** The weight format a planner name stands for. */
export function formatOf(quantize: Quantize): WeightFormat {
  return quantize === 'none' ? 'f32' : quantize;
}

/** Storage-binding limits a plan is checked against (maxStorageBufferBindingSize values seen on real adapters). */
export const BINDING_LIMITS = [
  { name: '2 GiB', bytes: 2 ** 31 },
  { name: '4 GiB', bytes: 2 ** 32 },
] as const;

const F32 = 4;

export interface PlanInput {
  /** Weight format of the matrices ('none': f32). */
  quantize: Quantize;
  backend: BackendKind;
  /** WebGPU only: the device has shader-f16, so f16 is read natively rather than unpacked (the notes say which). */
  shaderF16?: boolean;
  /** The trained adapter; null plans inference only (or full fine-tuning, with `full`). */
  lora: { rank: number; targets: readonly string[] } | null;
  /**
   * Full fine-tuning (FullTrainer) instead of LoRA: every weight trained in f32, with its gradient
   * and AdamW moments; `weightCopies` frozen copies of the weights beside (a KL reference: 1).
   */
  full?: { freezeEmbedding?: boolean; weightCopies?: number } | null;
  /**
   * Copies of the adapter held at once besides its gradient: 1 for `nextstate train`, 3 in a
   * lab run (the one being trained, the serving snapshot and the finished step waiting to swap in).
   */
  adapterCopies?: number;
  /** One training step: this many sequences of this many padded tokens (prompt + completion). */
  train: { sequences: number; tokens: number } | null;
  /** Padded tokens per micro-batch (the trainer's setting; default DEFAULT_TRAIN.microBatchTokens). */
  microBatchTokens?: number;
  /**
   * The trainer's TrainSettings.recompute: 'none' keeps every layer's tape and K/V; 'layer' keeps
   * each layer's input and rebuilds one layer's tape and K/V at a time in the backward.
   */
  recompute?: Recompute;
  /** A generation batch whose KV cache is alive during the step (the lab serves while it trains). */
  generate?: { batch: number; tokens: number } | null;
}

export interface PlanCategories {
  /** Model weights, and with full fine-tuning their frozen copies. */
  weights: number;
  kvCache: number;
  activations: number;
  /** LoRA: the adapter's copies and its gradient. Full fine-tuning: the weights' gradient. */
  lora: number;
  /** AdamW's m and v of whatever is trained. */
  optimizer: number;
  scratch: number;
}

export interface PlannedBuffer {
  name: string;
  /** Weights over a binding limit are stored split by rows (matmul and the embedding read such tensors); activations must fit one binding. */
  kind: 'weight' | 'activation';
  shape: number[];
  /** The tensor's own bytes (before any pool rounding). */
  bytes: number;
}

export interface MemoryPlan {
  architecture: string;
  parameters: number;
  loraParameters: number;
  /** What a step trains: a LoRA adapter, every weight, or nothing (no step planned). */
  training: FinetuneMode | null;
  quantize: Quantize;
  weightFormat: {
    /** What matrices are stored as: f32, f16, q8 or q4. */
    storage: WeightFormat;
    bitsPerWeight: number;
    groupSize: number | null;
  };
  recompute: Recompute;
  /** How the training batch is cut: micro-batches of `sequences` x `tokens`. */
  microBatches: { count: number; sequences: number; tokens: number } | null;
  bytes: PlanCategories & { total: number };
  /** The largest single tensor the plan allocates, and the next few. */
  largest: PlannedBuffer[];
  /**
   * Per binding limit: whether the largest buffer fits in one binding; the weights a device with
   * that limit stores split by rows; the activations it cannot bind (the engine refuses those).
   */
  limits: { name: string; bytes: number; fits: boolean; splitWeights: string[]; tooLarge: string[] }[];
  /** What the plan assumes, in sentences, for the CLI and the Setup to show. */
  notes: string[];
}

function weightStorage(input: PlanInput): MemoryPlan['weightFormat'] {
  const storage = formatOf(input.quantize);
  return { storage, bitsPerWeight: bitsPerWeight(storage), groupSize: isQuantized(storage) ? GROUP : null };
}

function loraTargets(targets: readonly string[]): Projection[] {
  for (const t of targets) {
    if (!(PROJECTIONS as readonly string[]).includes(t)) throw new EngineError(`unknown LoRA target ${t}; choose from ${PROJECTIONS.join(', ')}`);
  }
  return PROJECTIONS.filter((p) => targets.includes(p));
}

/** Plans from config.json's parsed JSON (refuses what parseModelConfig refuses). */
export function planMemoryFromJson(configJson: unknown, input: PlanInput): MemoryPlan {
  return planMemory(parseModelConfig(configJson), input);
}

export function planMemory(c: ModelConfig, input: PlanInput): MemoryPlan {
  const format = weightStorage(input);
  const recompute = input.recompute ?? 'none';
  const D = c.hiddenSize;
  const I = c.intermediateSize;
  const V = c.vocabSize;
  const L = c.numLayers;
  const Hq = c.numHeads * c.headDim;
  const Hkv = c.numKvHeads * c.headDim;
  const buffers: PlannedBuffer[] = [];
  const buffer = (name: string, shape: number[], bytes: number, kind: PlannedBuffer['kind'] = 'activation') => buffers.push({ name, kind, shape, bytes });

  // Bytes of one f32 tensor of n values as the backend creates it: exact on the CPU; on WebGPU from
  // the buffer pool, whose size classes round up by at most an eighth (webgpu/pool.ts).
  const webgpu = input.backend === 'webgpu';
  const act = (n: number) => (webgpu ? BufferPool.sizeClass(Math.max(4, n * F32)) : n * F32);

  // ---- weights (load.ts: 2-D tensors take the matrix format at their exact size, 1-D ones stay f32) ----
  let weights = 0;
  // What full fine-tuning gives a gradient, m and v (pooled f32 buffers of each weight's shape).
  let fullTrained = 0;
  const matrix = (name: string, rows: number, cols: number, count = 1) => {
    const bytes = storedWords(rows, cols, matrixFormat(name, format.storage)) * 4;
    weights += count * bytes;
    if (!(name === 'model.embed_tokens.weight' && input.full?.freezeEmbedding)) fullTrained += count * act(rows * cols);
    buffer(name, [rows, cols], bytes, 'weight');
  };
  matrix('model.embed_tokens.weight', V, D);
  if (!c.tieWordEmbeddings) matrix('lm_head.weight', V, D);
  for (const p of PROJECTIONS) {
    const [out, inp] = projectionShape(c, p);
    matrix(`model.layers.*.${p}.weight`, out, inp, L);
  }
  const vectors = L * (2 * act(D) + (c.qkvBias ? act(Hq) + 2 * act(Hkv) : 0) + (c.qkNorm ? 2 * act(c.headDim) : 0)) + act(D);
  weights += vectors;
  fullTrained += vectors;

  // ---- LoRA adapter, gradient, AdamW moments ----
  const targets = input.lora ? loraTargets(input.lora.targets) : [];
  const rank = input.lora?.rank ?? 0;
  if (input.lora && (!Number.isInteger(rank) || rank <= 0)) throw new EngineError(`LoRA rank must be a positive integer, got ${rank}`);
  const loraParameters = L * targets.reduce((n, p) => n + rank * projectionShape(c, p).reduce((a, b) => a + b, 0), 0);
  // One adapter's A and B tensors (the gradient, m and v have the same shapes).
  const adapterBytes =
    L *
    targets.reduce((n, p) => {
      const [out, inp] = projectionShape(c, p);
      return n + act(rank * inp) + act(out * rank);
    }, 0);
  const full = input.full ?? null;
  if (full && input.lora) throw new EngineError('plan either LoRA or full fine-tuning, not both');
  if (full && format.storage !== 'f32') {
    throw new EngineError(`full fine-tuning trains f32 weights, not ${format.storage}; plan it with quantize 'none'`);
  }
  const training: MemoryPlan['training'] = input.train === null ? null : full ? 'full' : input.lora ? 'lora' : null;
  // FullTrainer: every checkpoint tensor (the embedding left out when frozen) gets a gradient and m, v of its shape.
  const trained = training === 'full' ? fullTrained : adapterBytes;
  const lora = training === 'full' ? trained : adapterBytes * ((input.adapterCopies ?? 1) + (training ? 1 : 0));
  const optimizer = training ? 2 * trained : 0;
  if (training === 'full') weights += (full?.weightCopies ?? 0) * weights;

  // ---- one training micro-batch ----
  let kvCache = 0;
  let activations = 0;
  let scratch = 0;
  let microBatches: MemoryPlan['microBatches'] = null;
  const notes: string[] = [];
  if (input.train && training) {
    const { sequences, tokens: T } = input.train;
    if (!(Number.isInteger(sequences) && sequences > 0 && Number.isInteger(T) && T > 1)) {
      throw new EngineError(`a training step needs whole numbers of sequences (>= 1) and tokens (>= 2), got ${sequences}x${T}`);
    }
    if (T > c.maxPositions) throw new EngineError(`${T} tokens exceed the model's ${c.maxPositions} positions; train on shorter sequences`);
    const budget = input.microBatchTokens ?? DEFAULT_TRAIN.microBatchTokens;
    // LoraTrainer.microBatches: sequences of equal length, as many as fit in the token budget (at least one).
    const per = Math.max(1, Math.min(sequences, Math.floor(budget / T)));
    microBatches = { count: Math.ceil(sequences / per), sequences: per, tokens: T };
    const N = per * T;
    // Worst case for the logits: every token after the first is a completion token.
    const R = per * (T - 1);
    const u = targets.length * act(N * rank); // u = x A^T per targeted projection, kept on the tape
    const layerTape = 4 * act(N * D) + 2 * act(N * Hq) + 3 * act(N * I) + (c.qkNorm ? act(N * Hq) + act(N * Hkv) : 0) + u;
    const layerKv = 2 * act(N * Hkv);
    // The rebuilt tape's x is the kept input itself.
    const rebuiltTape = layerTape - act(N * D);
    if (recompute === 'none') {
      kvCache += L * layerKv;
      activations += L * layerTape + 2 * act(N * D); // + finalX and the normed hidden states
    } else {
      // Each layer's input kept; one layer's tape and K/V alive at a time (run, or rebuilt in backward).
      kvCache += layerKv;
      activations += L * act(N * D) + rebuiltTape + 2 * act(N * D);
    }
    buffer('KV cache, one layer (K or V)', [per, c.numKvHeads, T, c.headDim], N * Hkv * F32);
    buffer('MLP activation (gate, up)', [N, I], N * I * F32);
    // Logits in row chunks of LOGITS_CHUNK_FLOATS; with a single chunk they are kept for the backward.
    const chunkRows = Math.min(R, Math.max(1, Math.floor(LOGITS_CHUNK_FLOATS / V)));
    buffer('logits block', [chunkRows, V], chunkRows * V * F32);
    // Transients on top of the tape, in the step's three phases (train.ts, backward.ts):
    // q, k, v of the layer being run (their normed copies with qk-norm);
    const forward = act(N * Hq) + 2 * act(N * Hkv);
    // d hidden plus the logits block, its gradient, d picked rows and the rows scattered back;
    const logits = act(chunkRows * V);
    // (headBackward holds dlogits, d picked rows and the scattered rows at once).
    const logitsPhase = act(N * D) + Math.max(2 * logits, logits + act(chunkRows * D) + act(N * D));
    // d hidden, dx, and one layer's largest set of gradients (dAct, dGate, dUp, or the attention's), du.
    const mlp = 3 * act(N * I);
    const attention = 2 * act(N * Hq) + 3 * act(N * Hkv);
    const backwardLayer = 2 * act(N * D) + Math.max(mlp, attention) + (rank ? act(N * rank) : 0);
    if (recompute === 'none') scratch = Math.max(forward, logitsPhase, backwardLayer);
    else {
      // Rebuilding a layer in the backward: d hidden, dx, the forward's transients and the
      // layer's output (dropped: it is the next input, already kept). No layer's tape is alive
      // while the logits are taken, so that phase counts only where it outgrows the tape.
      const rebuild = 3 * act(N * D) + forward;
      scratch = Math.max(forward, logitsPhase - rebuiltTape, backwardLayer, rebuild);
    }
    notes.push(
      `training: ${sequences} x ${T} tokens in ${microBatches.count} micro-batch${microBatches.count > 1 ? 'es' : ''} of ${per} x ${T} (at most ${budget} padded tokens each, run one after another)`,
      'logits: every token but the first counted as a completion token (the worst case)',
    );
    notes.push(
      recompute === 'none'
        ? 'activations: every layer keeps its tape for the backward (recompute none)'
        : "activations: recomputed per layer in the backward, only each layer's input kept, one layer's tape and K/V at a time (recompute layer: about one more forward pass)",
    );
  } else if (input.train) {
    notes.push('no LoRA adapter and no full fine-tuning: nothing to train, the step is left out');
  }
  if (training === 'full') {
    notes.push(
      `full fine-tuning: every weight${full?.freezeEmbedding ? ' but the embedding' : ''} trained in f32 with its gradient and AdamW m and v` +
        (full?.weightCopies ? `; ${full.weightCopies} frozen cop${full.weightCopies > 1 ? 'ies' : 'y'} of the weights` : ''),
    );
  }

  // ---- a generation batch served meanwhile ----
  if (input.generate) {
    const { batch, tokens } = input.generate;
    if (tokens > c.maxPositions) throw new EngineError(`${tokens} tokens exceed the model's ${c.maxPositions} positions; shorten the prompt or max new tokens`);
    kvCache += 2 * L * act(batch * tokens * Hkv);
    buffer('generation KV cache, one layer (K or V)', [batch, c.numKvHeads, tokens, c.headDim], batch * tokens * Hkv * F32);
    notes.push(`KV cache includes a generation batch of ${batch} x ${tokens} tokens`);
  }

  const f16Read =
    input.backend === 'cpu'
      ? 'decoded by each CPU op'
      : (input.shaderF16 ?? true)
        ? 'read natively (shader-f16)'
        : 'unpacked from u32 words in the kernels (no shader-f16)';
  const formats: Record<WeightFormat, string> = {
    f32: 'matrices in f32',
    f16: `matrices in f16, ${f16Read}`,
    q8: `matrices in q8: 8-bit integers in groups of ${GROUP} along each row, one f16 scale per group (${format.bitsPerWeight} bits a weight), dequantized as the kernels load them`,
    q4: `matrices in q4: NF4 levels in groups of ${GROUP} along each row, one f16 scale per group (${format.bitsPerWeight} bits a weight), dequantized as the kernels load them; the embedding and LM head in q8`,
  };
  notes.push(`weights: ${formats[format.storage]}; norms and biases f32`);
  notes.push('activations, gradients, KV cache and optimizer state are f32');
  if (webgpu) {
    notes.push(
      "WebGPU: tensors come from the runtime's buffer pool (sizes rounded up by at most 1/8, counted here); freed buffers stay in the pool for reuse, so the device can hold more than this peak of live bytes",
    );
  }

  buffers.sort((a, b) => b.bytes - a.bytes);
  const largest = buffers.slice(0, 4);
  const top = largest[0]?.bytes ?? 0;
  const bytes = { weights, kvCache, activations, lora, optimizer, scratch, total: weights + kvCache + activations + lora + optimizer + scratch };
  return {
    architecture: c.architecture,
    parameters: parameterCount(c),
    loraParameters,
    training,
    quantize: input.quantize,
    weightFormat: format,
    recompute,
    microBatches,
    bytes,
    largest,
    limits: BINDING_LIMITS.map((l) => ({
      name: l.name,
      bytes: l.bytes,
      fits: top <= l.bytes,
      splitWeights: buffers.filter((b) => b.kind === 'weight' && b.bytes > l.bytes).map((b) => b.name),
      tooLarge: buffers.filter((b) => b.kind === 'activation' && b.bytes > l.bytes).map((b) => b.name),
    })),
    notes,
  };
}
