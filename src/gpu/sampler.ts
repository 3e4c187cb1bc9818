/**
 * How the next token is chosen: temperature, top-k, top-p (nucleus), or greedy. Backend.sample
 * applies it on the device (ops/sample.ts defines the pick), so decoding never reads logits.
 */
export interface SamplingOptions {
  /** 0 means greedy (argmax). */
  temperature: number;
  topK: number;
  topP: number;
}

export const GREEDY: SamplingOptions = { temperature: 0, topK: 0, topP: 1 };
