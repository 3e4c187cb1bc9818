/**
 * The llama-family forward pass (Llama, SmolLM, Qwen2, Qwen3), written once against Backend.
 * Parameter names equal the checkpoint keys, so loading is a key copy (nanoGPT's habit).
 * With a tape it keeps what the backward pass needs; training lives in train.ts.
 */
import type { AttentionShape, Backend, Tensor } from './backend';
import { projectionModule, type ModelConfig, type Projection } from './config';
import { EngineError } from './errors';
import type { LoraAdapter } from './lora';

export type Weights = Map<string, Tensor>;

/** Per-layer K and V caches, each [B, numKvHeads, maxT, headDim]. */
export interface KVCache {
  B: number;
  maxT: number;
  k: Tensor[];
  v: Tensor[];
}

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

export interface Tape {
  /** The batch's token ids [B*T]: the embedding's backward places its gradient at them. */
  ids: Int32Array;
  layers: LayerTape[];
  finalX: Tensor;
  positions: Int32Array;
  shape: AttentionShape;
  cache: KVCache;
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

  createCache(B: number, maxT: number): KVCache {
    if (maxT > this.config.maxPositions) {
      throw new EngineError(`${maxT} tokens exceed the model's ${this.config.maxPositions} positions; shorten the prompt or max new tokens`);
    }
    const c = this.config;
    const shape = [B, c.numKvHeads, maxT, c.headDim];
    return {
      B,
      maxT,
      k: Array.from({ length: c.numLayers }, () => this.backend.zeros(shape)),
      v: Array.from({ length: c.numLayers }, () => this.backend.zeros(shape)),
    };
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
   * normed hidden states [B*T, D]. With `tape`, activations are kept for backward().
   */
  forward(batch: ForwardBatch, cache: KVCache, lora?: LoraAdapter, tape?: { value?: Tape }): Tensor {
    const be = this.backend;
    const c = this.config;
    if (batch.ids.length !== batch.B * batch.T) throw new EngineError(`ids has ${batch.ids.length} entries, expected B*T = ${batch.B * batch.T}`);
    if (batch.start + batch.T > cache.maxT) throw new EngineError(`batch reaches slot ${batch.start + batch.T} past the cache's ${cache.maxT}`);
    for (const id of batch.ids) {
      if (id < 0 || id >= c.vocabSize) throw new EngineError(`token id ${id} is outside the vocabulary (size ${c.vocabSize})`);
    }
    const shape = this.attentionShape(batch, cache);
    const positions = CausalLM.positions(batch);
    const layers: LayerTape[] = [];
    let x = be.embedding(this.embed, batch.ids);
    for (let l = 0; l < c.numLayers; l++) {
      const p = `model.layers.${l}`;
      const loraU = new Map<Projection, Tensor>();
      const keep = tape ? loraU : undefined;
      const xn = be.rmsnorm(x, this.w(`${p}.input_layernorm.weight`), c.rmsNormEps);
      let q = this.project(xn, l, 'q_proj', lora, keep);
      let k = this.project(xn, l, 'k_proj', lora, keep);
      const v = this.project(xn, l, 'v_proj', lora, keep);
      let qPre: Tensor | null = null;
      let kPre: Tensor | null = null;
      if (c.qkNorm) {
        qPre = q;
        kPre = k;
        q = be.rmsnorm(qPre, this.w(`${p}.self_attn.q_norm.weight`), c.rmsNormEps);
        k = be.rmsnorm(kPre, this.w(`${p}.self_attn.k_norm.weight`), c.rmsNormEps);
      }
      const qr = be.ropeWriteCache({ q, k, v, kCache: cache.k[l], vCache: cache.v[l] }, positions, c.ropeTheta, shape);
      const attn = be.attention(qr, cache.k[l], cache.v[l], shape);
      const x1 = this.project(attn, l, 'o_proj', lora, keep, x);
      const xn2 = be.rmsnorm(x1, this.w(`${p}.post_attention_layernorm.weight`), c.rmsNormEps);
      const gate = this.project(xn2, l, 'gate_proj', lora, keep);
      const up = this.project(xn2, l, 'up_proj', lora, keep);
      const act = be.siluMul(gate, up);
      const x2 = this.project(act, l, 'down_proj', lora, keep, x1);
      for (const t of [q, k, v]) be.dispose(t);
      if (tape) {
        layers.push({ x, xn, qPre, kPre, q: qr, attn, x1, xn2, gate, up, act, loraU });
      } else {
        for (const t of [x, xn, qr, attn, x1, xn2, gate, up, act]) be.dispose(t);
        if (qPre) be.dispose(qPre);
        if (kPre) be.dispose(kPre);
      }
      x = x2;
    }
    const out = be.rmsnorm(x, this.w('model.norm.weight'), c.rmsNormEps);
    if (tape) tape.value = { ids: batch.ids, layers, finalX: x, positions, shape, cache };
    else be.dispose(x);
    return out;
  }

  /** Logits [rows.length, V] for the chosen rows of the hidden states. */
  logits(hidden: Tensor, rows: Int32Array): Tensor {
    const picked = this.backend.gatherRows(hidden, rows);
    const logits = this.backend.linear(picked, this.lmHead);
    this.backend.dispose(picked);
    return logits;
  }

  disposeTape(tape: Tape): void {
    const be = this.backend;
    for (const l of tape.layers) {
      for (const t of [l.x, l.xn, l.q, l.attn, l.x1, l.xn2, l.gate, l.up, l.act]) be.dispose(t);
      if (l.qPre) be.dispose(l.qPre);
      if (l.kPre) be.dispose(l.kPre);
      for (const u of l.loraU.values()) be.dispose(u);
    }
    be.dispose(tape.finalX);
  }
}
