/**
 * The backward pass of CausalLM.forward for LoRA training: gradients flow to the adapter's A
 * and B only (base weights are frozen), through every op of the forward in reverse.
 */
import type { Backend, Tensor } from './backend';
import { projectionModule, type Projection } from './config';
import { LoraAdapter } from './lora';
import type { CausalLM, LayerTape, Tape } from './model';

export type LoraGrads = Map<string, { A: Tensor; B: Tensor }>;

export function zeroGrads(be: Backend, adapter: LoraAdapter): LoraGrads {
  const g: LoraGrads = new Map();
  for (const [key, pair] of adapter.pairs) g.set(key, { A: be.zeros(pair.A.shape), B: be.zeros(pair.B.shape) });
  return g;
}

/** Sums b into a and frees b: the way every gradient contribution is collected. */
function accumulate(be: Backend, a: Tensor, b: Tensor): void {
  be.addInPlace(a, b);
  be.dispose(b);
}

/**
 * Backward of one projection y = x W^T + b + s (x A^T) B^T given dy: accumulates dA and dB
 * and returns dx, or adds dx into `into` (the other projections reading the same x). With
 * `into` null, dx is not wanted (nothing trainable lies below) and is not computed.
 */
function projectBackward(
  model: CausalLM,
  layer: number,
  p: Projection,
  x: Tensor,
  dy: Tensor,
  tape: LayerTape,
  adapter: LoraAdapter,
  grads: LoraGrads,
  into?: Tensor | null,
): Tensor | null {
  const be = model.backend;
  const W = model.w(`model.layers.${layer}.${projectionModule(p)}.${p}.weight`);
  let dx = into;
  if (dx) be.matmulAddInPlace(dx, dy, W, false, false);
  else if (dx === undefined) dx = be.matmul(dy, W, false, false);
  const pair = adapter.get(layer, p);
  const u = tape.loraU.get(p);
  if (!pair || !u) return dx;
  const g = grads.get(LoraAdapter.key(layer, p))!;
  const s = adapter.scale;
  be.matmulAddInPlace(g.B, dy, u, true, false, s);
  const du = be.matmul(dy, pair.B, false, false);
  be.matmulAddInPlace(g.A, du, x, true, false, s);
  if (dx) be.matmulAddInPlace(dx, du, pair.A, false, false, s);
  be.dispose(du);
  return dx;
}

/**
 * From d loss / d (final normed hidden states) [B*T, D] back to every LoRA parameter; the
 * trainer brings the gradient through the LM head and the log-softmax.
 */
export function backward(model: CausalLM, tape: Tape, dHidden: Tensor, adapter: LoraAdapter, grads: LoraGrads): void {
  const be = model.backend;
  const c = model.config;
  let dx = be.rmsnormBackward(tape.finalX, model.w('model.norm.weight'), c.rmsNormEps, dHidden);
  for (let l = c.numLayers - 1; l >= 0; l--) {
    const t = tape.layers[l];
    const p = `model.layers.${l}`;
    const proj = (name: Projection, x: Tensor, dy: Tensor, into?: Tensor | null) => projectBackward(model, l, name, x, dy, t, adapter, grads, into);
    // MLP: x2 = x1 + down(silu(gate(xn2)) * up(xn2)), xn2 = norm(x1).
    const dAct = proj('down_proj', t.act, dx)!;
    const { dGate, dUp } = be.siluMulBackward(t.gate, t.up, dAct);
    be.dispose(dAct);
    const dXn2 = proj('gate_proj', t.xn2, dGate)!;
    proj('up_proj', t.xn2, dUp, dXn2);
    be.dispose(dGate);
    be.dispose(dUp);
    const dX1 = be.rmsnormBackward(t.x1, model.w(`${p}.post_attention_layernorm.weight`), c.rmsNormEps, dXn2);
    be.dispose(dXn2);
    accumulate(be, dX1, dx);
    // Attention: x1 = x + o(attn(rope(q), rope(k), v)), q/k/v from xn = norm(x).
    const dAttn = proj('o_proj', t.attn, dX1)!;
    const g = be.attentionBackward(t.q, tape.cache.k[l], tape.cache.v[l], dAttn, tape.shape);
    be.dispose(dAttn);
    let dq = be.rope(g.dq, tape.positions, c.headDim, c.ropeTheta, true);
    let dk = be.rope(g.dk, tape.positions, c.headDim, c.ropeTheta, true);
    be.dispose(g.dq);
    be.dispose(g.dk);
    if (t.qPre && t.kPre) {
      const dqPre = be.rmsnormBackward(t.qPre, model.w(`${p}.self_attn.q_norm.weight`), c.rmsNormEps, dq);
      const dkPre = be.rmsnormBackward(t.kPre, model.w(`${p}.self_attn.k_norm.weight`), c.rmsNormEps, dk);
      be.dispose(dq);
      be.dispose(dk);
      dq = dqPre;
      dk = dkPre;
    }
    // The embedding is frozen: below the first layer's q/k/v no gradient is wanted.
    const dXn = proj('q_proj', t.xn, dq, l === 0 ? null : undefined);
    proj('k_proj', t.xn, dk, dXn);
    proj('v_proj', t.xn, g.dv, dXn);
    be.dispose(dq);
    be.dispose(dk);
    be.dispose(g.dv);
    if (!dXn) {
      be.dispose(dX1);
      break;
    }
    const dX = be.rmsnormBackward(t.x, model.w(`${p}.input_layernorm.weight`), c.rmsNormEps, dXn);
    be.dispose(dXn);
    accumulate(be, dX, dX1);
    dx = dX;
  }
}
