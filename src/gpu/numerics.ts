/**
 * NaN and infinity in a forward pass. Finite weights can still overflow f32 (weights of 3e38, an
 * adapter's lora_alpha of 1e38): the logits become infinite, every log-prob NaN, and generation
 * went on picking token -1. The check is cheap and made where values are read back anyway (the
 * sampled log-probs, the scored log-probs and entropies); only when it fails is the sequence run
 * again layer by layer, reading every intermediate, to name where the first non-finite value
 * appears.
 */
import type { Tensor } from './backend';
import { EngineError } from './errors';
import type { LoraAdapter } from './lora';
import { CausalLM, type ForwardBatch, type LayerRun } from './model';
import { countNonFinite } from '../models/safetensors';

/** A forward pass produced NaN or infinity; the message names the layer and tensor where it began. */
export class NonFiniteError extends EngineError {}

/**
 * Where the forward of one sequence first holds a NaN or infinite value: "model.layers.1.mlp.up_proj".
 * Null when every tensor up to the logits is finite (the log-softmax overflowed).
 */
export async function firstNonFinite(model: CausalLM, ids: readonly number[], lora?: LoraAdapter): Promise<string | null> {
  const be = model.backend;
  const c = model.config;
  const batch: ForwardBatch = { ids: Int32Array.from(ids), B: 1, T: ids.length, start: 0, padLeft: Int32Array.of(0) };
  const cache = model.createCache(1, ids.length);
  const run: LayerRun = { shape: model.attentionShape(batch, cache), positions: CausalLM.positions(batch), cache };
  const bad = async (t: Tensor | null) => t !== null && countNonFinite(await be.read(t)) > 0;
  let x = be.embedding(model.embed, batch.ids);
  try {
    if (await bad(x)) return 'model.embed_tokens';
    for (let l = 0; l < c.numLayers; l++) {
      const p = `model.layers.${l}`;
      const { out, tape } = model.layer(l, x, run, lora, true);
      const t = tape!;
      const { k, v } = model.layerKV(cache, l);
      const steps: [Tensor | null, string][] = [
        [t.xn, 'input_layernorm'],
        [t.qPre, 'self_attn.q_proj'],
        [t.q, c.qkNorm ? 'self_attn.q_norm' : 'self_attn.q_proj'],
        [k, 'self_attn.k_proj'],
        [v, 'self_attn.v_proj'],
        [t.attn, 'self_attn (the attention)'],
        [t.x1, 'self_attn.o_proj'],
        [t.xn2, 'post_attention_layernorm'],
        [t.gate, 'mlp.gate_proj'],
        [t.up, 'mlp.up_proj'],
        [t.act, 'mlp (silu(gate) * up)'],
        [out, 'mlp.down_proj'],
      ];
      try {
        for (const [tensor, name] of steps) if (await bad(tensor)) return `${p}.${name}`;
      } finally {
        // The tape holds x, this layer's input: it goes with the tape, and out is the next input.
        model.disposeLayerTape(t, true);
        x = out;
      }
    }
    const hidden = be.rmsnorm(x, model.w('model.norm.weight'), c.rmsNormEps);
    try {
      if (await bad(hidden)) return 'model.norm';
      const logits = model.logits(
        hidden,
        Int32Array.from(ids, (_, i) => i),
      );
      try {
        if (await bad(logits)) return c.tieWordEmbeddings ? 'lm_head (the tied embedding): the logits' : 'lm_head: the logits';
      } finally {
        be.dispose(logits);
      }
    } finally {
      be.dispose(hidden);
    }
    return null;
  } finally {
    be.dispose(x);
    model.disposeCache(cache);
  }
}

/**
 * The error for a non-finite `what` ("the log-prob of generated token 3") of the sequence `ids`,
 * naming where the forward first went wrong.
 */
export async function nonFiniteError(model: CausalLM, ids: readonly number[], what: string, lora?: LoraAdapter): Promise<NonFiniteError> {
  const where = await firstNonFinite(model, ids, lora);
  const at = where ? `the first NaN or infinite value is in ${where}` : 'every tensor up to the logits is finite, so the log-softmax overflowed';
  return new NonFiniteError(
    `${what} is NaN or infinite: ${at}. The weights${lora ? ' or the adapter (its lora_alpha and weights)' : ''} overflow f32; ` +
      'use an undamaged checkpoint or a smaller adapter scale.',
  );
}

/**
 * Checks the log-probs (and entropies) read back for `items`, flat in item order, one per
 * completion token; on the first non-finite one, throws the error naming where it began.
 *
 * @throws NonFiniteError
 */
export async function checkFinite(
  model: CausalLM,
  items: readonly { prompt: readonly number[]; completion: readonly number[] }[],
  values: readonly Float32Array[],
  lora?: LoraAdapter,
): Promise<void> {
  if (values.every((v) => countNonFinite(v) === 0)) return;
  let at = 0;
  for (const [i, it] of items.entries()) {
    const n = it.completion.length;
    for (let j = 0; j < n; j++) {
      if (values.some((v) => !Number.isFinite(v[at + j]))) {
        throw await nonFiniteError(model, [...it.prompt, ...it.completion], `the log-prob of completion token ${j + 1} of sequence ${i + 1}`, lora);
      }
    }
    at += n;
  }
}
