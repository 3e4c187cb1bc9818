/**
 * Multiply-accumulates per token of the projections and the LM head (attention, norms and the
 * optimizer left out), for prefill and for a LoRA step as the engine runs them. Their quotient is
 * what a training/prefill throughput ratio is bounded by when both run at the same FLOP rate:
 * the mark of 0.33 assumes a step costs three forwards, which holds when the adapter is
 * small beside the model, not for rank 16 on every projection of a 64-wide one.
 */
import { PROJECTIONS, projectionShape, type ModelConfig } from '../../src/models/config';
import type { LoraConfig } from '../../src/gpu/lora';

export interface StepShape {
  /** Tokens per sequence (prompt and completion). */
  tokens: number;
  /** Completion tokens per sequence: the ones whose logits the loss needs. */
  lossTokens: number;
}

/** Per token: base projections, their LoRA branches, the LM head's share. */
function projectionMacs(c: ModelConfig, lora: LoraConfig | null) {
  let base = 0;
  let branch = 0;
  let firstQkv = 0;
  for (const p of PROJECTIONS) {
    const [out, inp] = projectionShape(c, p);
    base += out * inp;
    if (lora?.targets.includes(p)) branch += lora.rank * (out + inp);
    if (p === 'q_proj' || p === 'k_proj' || p === 'v_proj') firstQkv += out * inp;
  }
  return { base: base * c.numLayers, branch: branch * c.numLayers, firstQkv };
}

/** Prefill: every projection for every token, the LM head for the last token of each sequence. */
export function prefillMacsPerToken(c: ModelConfig, s: StepShape): number {
  return projectionMacs(c, null).base + (c.vocabSize * c.hiddenSize) / s.tokens;
}

/**
 * A LoRA step: forward with the branches, the LM head over the loss tokens; backward through the
 * base projections (dx; not below the first layer's q/k/v, where nothing is trained), each
 * branch twice over (dB and du, dA and its dx), and the LM head's dx over the loss tokens.
 */
export function trainingMacsPerToken(c: ModelConfig, lora: LoraConfig, s: StepShape): number {
  const m = projectionMacs(c, lora);
  const head = (c.vocabSize * c.hiddenSize * s.lossTokens) / s.tokens;
  return m.base + m.branch + head + (m.base - m.firstQkv) + 2 * m.branch + head;
}
