/**
 * The llama-family forward pass (Llama, SmolLM, Qwen2, Qwen3), written once against Backend.
 * Parameter names equal the checkpoint keys, so loading is a key copy (nanoGPT's habit).
 * With a tape it keeps what the backward pass needs (every layer's activations, or only each
 * layer's input for the backward to re-run it); training lives in train.ts.
 */
import type { AttentionShape, Backend, Tensor } from './backend';
import { projectionModule, type ModelConfig, type Projection } from '../models/config';
import { EngineError, EngineLimitError } from './errors';
import type { LoraAdapter } from './lora';
import type { MethodPreset } from '../rl/presets';

export type Weights = Map<string, Tensor>;

/**
 * K and V caches, each [B, numKvHeads, maxT, headDim]: one per layer, or a single pair every
 * layer reuses in turn (a whole-sequence forward, where each layer writes its K/V just before
 * its attention reads them: training with per-layer recomputation).
 */
export interface KVCache {
  B: number;
  maxT: number;
  k: Tensor[];
  v: Tensor[];
}

/**
 * What a taped forward keeps for backward(): 'none' every layer's tape; 'layer' only each
 * layer's input, the backward re-running one layer at a time to rebuild its tape (gradient
 * checkpointing per layer: the same ops in the same order, so the same floats).
 */
export type Recompute = NonNullable<MethodPreset['finetune']['recompute']>;

/** A batch of T new tokens per sequence at cache slots start..start+T-1, left-padded. */
export interface ForwardBatch {
  /** Token ids [B * T]; ids at padding slots are ignored (use any valid id). */
  ids: Int32Array;
  B: number;
  T: number;
  start: number;
  padLeft: Int32Array;
}

/** What one layer's backward needs, kept by a forward run with a tape. */
export interface LayerTape {
  x: Tensor;
  xn: Tensor;
  qPre: Tensor | null;
  kPre: Tensor | null;
  q: Tensor;
  attn: Tensor;
  x1: Tensor;
  xn2: Tensor;
  gate: Tensor;
  up: Tensor;
  act: Tensor;
  /** LoRA intermediates u = x A^T per projection. */
  loraU: Map<Projection, Tensor>;
}

/** Where a layer runs: the batch's attention shape and RoPE positions, and the K/V cache. */
export interface LayerRun {
  shape: AttentionShape;
  positions: Int32Array;
  cache: KVCache;
}

export interface Tape extends LayerRun {
  /** The batch's token ids [B*T]: the embedding's backward places its gradient at them. */
  ids: Int32Array;
  recompute: Recompute;
  /** Every layer's tape ('none'), or empty. */
  layers: LayerTape[];
  /** Each layer's input x ('layer'), or empty. */
  inputs: Tensor[];
  /** The adapter the forward applied: a rebuilt layer must apply it too. */
  lora?: LoraAdapter;
  finalX: Tensor;
}

export class CausalLM {
  readonly embed: Tensor;
  readonly lmHead: Tensor;

  constructor(
    readonly backend: Backend,
    readonly config: ModelConfig,
    readonly weights: Weights,
  ) {
    this.embed = this.w('model.embed_tokens.weight');
    this.lmHead = config.tieWordEmbeddings ? this.embed : this.w('lm_head.weight');
  }

  w(name: string): Tensor {
    const t = this.weights.get(name);
    if (!t) throw new EngineError(`weight ${name} is not loaded`);
    return t;
  }

  /** With `oneLayer`, a single K/V pair that every layer reuses (see KVCache). */
  createCache(B: number, maxT: number, o: { oneLayer?: boolean } = {}): KVCache {
    if (maxT > this.config.maxPositions) {
      throw new EngineLimitError(`${maxT} tokens exceed the model's ${this.config.maxPositions} positions; shorten the prompt or max new tokens`);
    }
    const c = this.config;
    const shape = [B, c.numKvHeads, maxT, c.headDim];
    const layers = o.oneLayer ? 1 : c.numLayers;
    return {
      B,
      maxT,
      k: Array.from({ length: layers }, () => this.backend.zeros(shape)),
      v: Array.from({ length: layers }, () => this.backend.zeros(shape)),
    };
  }

  /** Whether every layer writes into the same K/V pair of `cache`. */
  private sharedCache(cache: KVCache): boolean {
    return cache.k.length < this.config.numLayers;
  }

  /** Layer l's K and V in `cache`. */
  layerKV(cache: KVCache, l: number): { k: Tensor; v: Tensor } {
    const i = this.sharedCache(cache) ? 0 : l;
    return { k: cache.k[i], v: cache.v[i] };
  }

  disposeCache(cache: KVCache): void {
    for (const t of [...cache.k, ...cache.v]) this.backend.dispose(t);
  }

  attentionShape(batch: ForwardBatch, cache: KVCache): AttentionShape {
    const c = this.config;
    return {
      B: batch.B,
      T: batch.T,
      start: batch.start,
      maxT: cache.maxT,
      numHeads: c.numHeads,
      numKvHeads: c.numKvHeads,
      headDim: c.headDim,
      padLeft: batch.padLeft,
    };
  }

  /** RoPE position of each new token: its slot minus its sequence's padding (0 at padding). */
  static positions(batch: ForwardBatch): Int32Array {
    const pos = new Int32Array(batch.B * batch.T);
    for (let b = 0; b < batch.B; b++) {
      for (let t = 0; t < batch.T; t++) pos[b * batch.T + t] = Math.max(0, batch.start + t - batch.padLeft[b]);
    }
    return pos;
  }

  /**
   * A projection with its optional LoRA branch, plus `residual` when given (the skip connection
   * of o_proj and down_proj); u = x A^T is kept for the backward pass.
   */
  project(x: Tensor, layer: number, p: Projection, lora?: LoraAdapter, tape?: Map<Projection, Tensor>, residual?: Tensor): Tensor {
    const prefix = `model.layers.${layer}.${projectionModule(p)}.${p}`;
    const y = this.backend.linear(x, this.w(`${prefix}.weight`), this.weights.get(`${prefix}.bias`), residual);
    const pair = lora?.get(layer, p);
    if (!pair || !lora) return y;
    const u = this.backend.linear(x, pair.A);
    this.backend.matmulAddInPlace(y, u, pair.B, false, true, lora.scale);
    if (tape) tape.set(p, u);
    else this.backend.dispose(u);
    return y;
  }

  /**
   * Runs the batch through every layer, writing K/V into the cache, and returns the final
   * normed hidden states [B*T, D]. With `tape`, what backward() needs is kept in tape.value:
   * every layer's tape, or with `recompute: 'layer'` only each layer's input.
   */
  forward(batch: ForwardBatch, cache: KVCache, lora?: LoraAdapter, tape?: { value?: Tape; recompute?: Recompute }): Tensor {
    const be = this.backend;
    const c = this.config;
    if (batch.ids.length !== batch.B * batch.T) throw new EngineError(`ids has ${batch.ids.length} entries, expected B*T = ${batch.B * batch.T}`);
    if (batch.start + batch.T > cache.maxT) throw new EngineError(`batch reaches slot ${batch.start + batch.T} past the cache's ${cache.maxT}`);
    for (const id of batch.ids) {
      if (id < 0 || id >= c.vocabSize) throw new EngineError(`token id ${id} is outside the vocabulary (size ${c.vocabSize})`);
    }
    const recompute = tape?.recompute ?? 'none';
    if (this.sharedCache(cache)) {
      // Earlier tokens' K/V of this layer were overwritten by the layers after it.
      if (batch.start !== 0) throw new EngineError('a one-layer KV cache serves only a whole-sequence forward (start 0)');
      // The backward of a kept tape reads every layer's K/V at once.
      if (tape && recompute === 'none') throw new EngineError("keeping every layer's tape needs every layer's K/V; use a full cache or recompute 'layer'");
    }
    const run: LayerRun = { shape: this.attentionShape(batch, cache), positions: CausalLM.positions(batch), cache };
    const layers: LayerTape[] = [];
    const inputs: Tensor[] = [];
    let x = be.embedding(this.embed, batch.ids);
    for (let l = 0; l < c.numLayers; l++) {
      const { out, tape: t } = this.layer(l, x, run, lora, tape !== undefined && recompute === 'none');
      if (t) layers.push(t);
      else if (tape) inputs.push(x);
      else be.dispose(x);
      x = out;
    }
    const out = be.rmsnorm(x, this.w('model.norm.weight'), c.rmsNormEps);
    if (tape) tape.value = { ids: batch.ids, recompute, layers, inputs, lora, finalX: x, ...run };
    else be.dispose(x);
    return out;
  }

  /**
   * Decoder layer l on its input x, writing its K/V into the cache; returns its output. With
   * `keep` its intermediates come back as a LayerTape (x included), otherwise they are freed
   * (x stays the caller's). The plain forward, the taped one and the backward's recomputation
   * all run this, so a rebuilt tape holds the very floats of the first run.
   */
  layer(l: number, x: Tensor, run: LayerRun, lora: LoraAdapter | undefined, keep: boolean): { out: Tensor; tape: LayerTape | null } {
    const be = this.backend;
    const c = this.config;
    const p = `model.layers.${l}`;
    const { k: kCache, v: vCache } = this.layerKV(run.cache, l);
    const loraU = new Map<Projection, Tensor>();
    const u = keep ? loraU : undefined;
    const xn = be.rmsnorm(x, this.w(`${p}.input_layernorm.weight`), c.rmsNormEps);
    let q = this.project(xn, l, 'q_proj', lora, u);
    let k = this.project(xn, l, 'k_proj', lora, u);
    const v = this.project(xn, l, 'v_proj', lora, u);
    let qPre: Tensor | null = null;
    let kPre: Tensor | null = null;
    if (c.qkNorm) {
      qPre = q;
      kPre = k;
      q = be.rmsnorm(qPre, this.w(`${p}.self_attn.q_norm.weight`), c.rmsNormEps);
      k = be.rmsnorm(kPre, this.w(`${p}.self_attn.k_norm.weight`), c.rmsNormEps);
    }
    const qr = be.ropeWriteCache({ q, k, v, kCache, vCache }, run.positions, c.ropeTheta, run.shape);
    const attn = be.attention(qr, kCache, vCache, run.shape);
    const x1 = this.project(attn, l, 'o_proj', lora, u, x);
    const xn2 = be.rmsnorm(x1, this.w(`${p}.post_attention_layernorm.weight`), c.rmsNormEps);
    const gate = this.project(xn2, l, 'gate_proj', lora, u);
    const up = this.project(xn2, l, 'up_proj', lora, u);
    const act = be.siluMul(gate, up);
    const out = this.project(act, l, 'down_proj', lora, u, x1);
    for (const t of [q, k, v]) be.dispose(t);
    const tape: LayerTape = { x, xn, qPre, kPre, q: qr, attn, x1, xn2, gate, up, act, loraU };
    if (keep) return { out, tape };
    this.disposeLayerTape(tape, false);
    return { out, tape: null };
  }

  /**
   * Layer l's tape for the backward: the kept one, or with recomputation rebuilt from the
   * layer's input (its K/V rewritten into the cache); hand it back with releaseLayerTape.
   */
  layerTape(tape: Tape, l: number): LayerTape {
    if (tape.recompute === 'none') return tape.layers[l];
    const { out, tape: t } = this.layer(l, tape.inputs[l], tape, tape.lora, true);
    // The output is already known (the next layer's input); the down projection that made it
    // is the price of one layer function for every run.
    this.backend.dispose(out);
    return t!;
  }

  /** Frees a tape layerTape rebuilt (a kept one lives until disposeTape; the input stays either way). */
  releaseLayerTape(tape: Tape, t: LayerTape): void {
    if (tape.recompute === 'layer') this.disposeLayerTape(t, false);
  }

  /**
   * Logits [rows.length, V] for the chosen rows of the hidden states, divided by `temperature`
   * (scoringTemperature: the distribution a rollout was sampled from; headBackward takes the same).
   */
  logits(hidden: Tensor, rows: Int32Array, temperature = 1): Tensor {
    const be = this.backend;
    const picked = be.gatherRows(hidden, rows);
    // logits / T = (h / T) W^T: the rows of h are narrower than the vocabulary, so they are scaled.
    const scaled = temperature === 1 ? picked : scaleRows(be, picked, 1 / temperature);
    if (scaled !== picked) be.dispose(picked);
    const logits = be.linear(scaled, this.lmHead);
    be.dispose(scaled);
    return logits;
  }

  disposeTape(tape: Tape): void {
    for (const l of tape.layers) this.disposeLayerTape(l, true);
    for (const x of tape.inputs) this.backend.dispose(x);
    this.backend.dispose(tape.finalX);
  }

  /** Frees a layer's tape (its input x too, `withInput`): one kept by layer(..., keep) that no tape owns. */
  disposeLayerTape(l: LayerTape, withInput: boolean): void {
    const be = this.backend;
    for (const t of [l.xn, l.q, l.attn, l.x1, l.xn2, l.gate, l.up, l.act]) be.dispose(t);
    if (withInput) be.dispose(l.x);
    if (l.qPre) be.dispose(l.qPre);
    if (l.kPre) be.dispose(l.kPre);
    for (const u of l.loraU.values()) be.dispose(u);
  }
}

/** s * x as a new tensor (0 + s * x: the backends' add, which reads its two inputs only). */
function scaleRows(be: Backend, x: Tensor, s: number): Tensor {
  const zero = be.zeros(x.shape);
  const out = be.add(zero, x, s);
  be.dispose(zero);
  return out;
}
