/**
 * The backward pass of CausalLM.forward, for LoRA and full fine-tuning alike: gradients flow
 * through every op of the forward in reverse and are added into the buffers of `grads`, keyed
 * by parameter name. A LoRA adapter's parameters are named `${layer}.${projection}.A|B`; the
 * model's own weights by their checkpoint keys (`model.layers.0.self_attn.q_proj.weight`,
 * `model.norm.weight`, ...). A weight without a buffer is frozen and gets no gradient.
 */
import type { Backend, Tensor } from './backend';
import { projectionModule, type Projection } from '../models/config';
import { LoraAdapter } from './lora';
import type { CausalLM, LayerTape, Tape } from './model';

/** Gradient buffers by parameter name; a parameter without one is frozen. */
export type Grads = Map<string, Tensor>;

export const EMBED_KEY = 'model.embed_tokens.weight';
export const LM_HEAD_KEY = 'lm_head.weight';

/** Zeroed gradient buffers, one per named parameter. */
export function zeroGrads(be: Backend, params: readonly { name: string; tensor: Tensor }[]): Grads {
  return new Map(params.map((p) => [p.name, be.zeros(p.tensor.shape)]));
}

/** The key of the LM head's weight: the embedding's when the two are tied. */
export function lmHeadKey(model: CausalLM): string {
  return model.config.tieWordEmbeddings ? EMBED_KEY : LM_HEAD_KEY;
}

/** Sums b into a and frees b: the way every gradient contribution is collected. */
function accumulate(be: Backend, a: Tensor, b: Tensor): void {
  be.addInPlace(a, b);
  be.dispose(b);
}

/** db += the column sums of dy [M, N]: a bias's gradient, as ones [1, M] @ dy. */
function biasGrad(be: Backend, db: Tensor, dy: Tensor): void {
  const M = dy.size / db.size;
  const ones = be.tensor(new Float32Array(M).fill(1), [1, M]);
  be.matmulAddInPlace(db, ones, dy, false, false);
  be.dispose(ones);
}

/** dw of an RMSNorm when it is trained. */
function normGrad(model: CausalLM, grads: Grads, name: string, x: Tensor, dy: Tensor): void {
  const g = grads.get(name);
  if (g) model.backend.rmsnormWeightGradAddInPlace(g, x, model.config.rmsNormEps, dy);
}

/**
 * Backward of one projection y = x W^T + b + s (x A^T) B^T given dy: accumulates dW and db
 * (when trained), dA and dB (when the adapter has the pair) and returns dx, or adds dx into
 * `into` (the other projections reading the same x). With `into` null, dx is not wanted
 * (nothing trainable lies below) and is not computed.
 */
function projectBackward(
  model: CausalLM,
  layer: number,
  p: Projection,
  x: Tensor,
  dy: Tensor,
  tape: LayerTape,
  grads: Grads,
  adapter: LoraAdapter | undefined,
  into?: Tensor | null,
): Tensor | null {
  const be = model.backend;
  const prefix = `model.layers.${layer}.${projectionModule(p)}.${p}`;
  const W = model.w(`${prefix}.weight`);
  let dx = into;
  if (dx) be.matmulAddInPlace(dx, dy, W, false, false);
  else if (dx === undefined) dx = be.matmul(dy, W, false, false);
  // dW [out, in] = dy^T [out, N] @ x [N, in].
  const gW = grads.get(`${prefix}.weight`);
  if (gW) be.matmulAddInPlace(gW, dy, x, true, false);
  const gb = grads.get(`${prefix}.bias`);
  if (gb) biasGrad(be, gb, dy);
  const pair = adapter?.get(layer, p);
  const u = tape.loraU.get(p);
  if (!pair || !u || !adapter) return dx;
  const key = LoraAdapter.key(layer, p);
  const s = adapter.scale;
  const gB = grads.get(`${key}.B`);
  const gA = grads.get(`${key}.A`);
  if (gB) be.matmulAddInPlace(gB, dy, u, true, false, s);
  const du = be.matmul(dy, pair.B, false, false);
  if (gA) be.matmulAddInPlace(gA, du, x, true, false, s);
  if (dx) be.matmulAddInPlace(dx, du, pair.A, false, false, s);
  be.dispose(du);
  return dx;
}

/**
 * Through the LM head for a chunk of rows of the final hidden states: `dHidden` [B*T, D]
 * gains dlogits @ W at `rows`, and W's gradient (the embedding's when tied) gains
 * dlogits^T @ hidden[rows] when it is trained; both divided by the `temperature` the logits were
 * taken at (CausalLM.logits).
 */
export function headBackward(model: CausalLM, hidden: Tensor, rows: Int32Array, dlogits: Tensor, grads: Grads, dHidden: Tensor, temperature = 1): void {
  const be = model.backend;
  // The logits were (h / T) W^T: both gradients carry the 1 / T.
  const invT = 1 / temperature;
  const g = grads.get(lmHeadKey(model));
  if (g) {
    const picked = be.gatherRows(hidden, rows);
    be.matmulAddInPlace(g, dlogits, picked, true, false, invT);
    be.dispose(picked);
  }
  const dPicked = be.matmul(dlogits, model.lmHead, false, false);
  const dRows = be.scatterRows(dPicked, rows, dHidden.shape[0]);
  be.dispose(dPicked);
  be.addInPlace(dHidden, dRows, invT);
  be.dispose(dRows);
}

/**
 * From d loss / d (final normed hidden states) [B*T, D] back to every trained parameter; the
 * trainer brings the gradient through the LM head (headBackward) and the log-softmax.
 */
export function backward(model: CausalLM, tape: Tape, dHidden: Tensor, grads: Grads, adapter?: LoraAdapter): void {
  const be = model.backend;
  const c = model.config;
  normGrad(model, grads, 'model.norm.weight', tape.finalX, dHidden);
  let dx: Tensor | null = be.rmsnormBackward(tape.finalX, model.w('model.norm.weight'), c.rmsNormEps, dHidden);
  for (let l = c.numLayers - 1; l >= 0 && dx; l--) {
    // With recomputation this re-runs layer l from its input; it is freed once the layer is through.
    const t = model.layerTape(tape, l);
    try {
      dx = layerBackward(model, tape, l, t, dx, grads, adapter);
    } finally {
      model.releaseLayerTape(tape, t);
    }
  }
  if (!dx) return;
  const embedGrad = grads.get(EMBED_KEY);
  if (embedGrad) be.embeddingBackwardAddInPlace(embedGrad, tape.ids, dx);
  be.dispose(dx);
}

/**
 * Through layer l given d loss / d (its output) `dx`, which it frees: returns d loss / d (its
 * input), or null when nothing below it is trained.
 */
function layerBackward(model: CausalLM, tape: Tape, l: number, t: LayerTape, dx: Tensor, grads: Grads, adapter: LoraAdapter | undefined): Tensor | null {
  const be = model.backend;
  const c = model.config;
  const embedGrad = grads.get(EMBED_KEY);
  const p = `model.layers.${l}`;
  const proj = (name: Projection, x: Tensor, dy: Tensor, into?: Tensor | null) => projectBackward(model, l, name, x, dy, t, grads, adapter, into);
  // MLP: x2 = x1 + down(silu(gate(xn2)) * up(xn2)), xn2 = norm(x1).
  const dAct = proj('down_proj', t.act, dx)!;
  const { dGate, dUp } = be.siluMulBackward(t.gate, t.up, dAct);
  be.dispose(dAct);
  const dXn2 = proj('gate_proj', t.xn2, dGate)!;
  proj('up_proj', t.xn2, dUp, dXn2);
  be.dispose(dGate);
  be.dispose(dUp);
  normGrad(model, grads, `${p}.post_attention_layernorm.weight`, t.x1, dXn2);
  const dX1 = be.rmsnormBackward(t.x1, model.w(`${p}.post_attention_layernorm.weight`), c.rmsNormEps, dXn2);
  be.dispose(dXn2);
  accumulate(be, dX1, dx);
  // Attention: x1 = x + o(attn(rope(q), rope(k), v)), q/k/v from xn = norm(x).
  const dAttn = proj('o_proj', t.attn, dX1)!;
  const kv = model.layerKV(tape.cache, l);
  const g = be.attentionBackward(t.q, kv.k, kv.v, dAttn, tape.shape);
  be.dispose(dAttn);
  let dq = be.rope(g.dq, tape.positions, c.headDim, c.ropeTheta, true);
  let dk = be.rope(g.dk, tape.positions, c.headDim, c.ropeTheta, true);
  be.dispose(g.dq);
  be.dispose(g.dk);
  if (t.qPre && t.kPre) {
    normGrad(model, grads, `${p}.self_attn.q_norm.weight`, t.qPre, dq);
    normGrad(model, grads, `${p}.self_attn.k_norm.weight`, t.kPre, dk);
    const dqPre = be.rmsnormBackward(t.qPre, model.w(`${p}.self_attn.q_norm.weight`), c.rmsNormEps, dq);
    const dkPre = be.rmsnormBackward(t.kPre, model.w(`${p}.self_attn.k_norm.weight`), c.rmsNormEps, dk);
    be.dispose(dq);
    be.dispose(dk);
    dq = dqPre;
    dk = dkPre;
  }
  // Below the first layer's q/k/v only its input norm and the embedding can be trained;
  // with both frozen no dx is wanted there.
  const inputNorm = `${p}.input_layernorm.weight`;
  const wanted = l > 0 || !!embedGrad || grads.has(inputNorm);
  const dXn = proj('q_proj', t.xn, dq, wanted ? undefined : null);
  proj('k_proj', t.xn, dk, dXn);
  proj('v_proj', t.xn, g.dv, dXn);
  be.dispose(dq);
  be.dispose(dk);
  be.dispose(g.dv);
  if (dXn) normGrad(model, grads, inputNorm, t.x, dXn);
  if (!dXn || (l === 0 && !embedGrad)) {
    if (dXn) be.dispose(dXn);
    be.dispose(dX1);
    return null;
  }
  const dX = be.rmsnormBackward(t.x, model.w(inputNorm), c.rmsNormEps, dXn);
  be.dispose(dXn);
  accumulate(be, dX, dX1);
  return dX;
}
