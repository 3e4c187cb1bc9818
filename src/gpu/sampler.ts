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

/**
 * The temperature a sampled token's distribution has, which scoring and training divide the
 * logits by so that their log-probs are those of the distribution the token was drawn from (as
 * slime does with --rollout-temperature). A greedy pick was drawn from no distribution: its
 * tokens are scored at 1.
 */
export function scoringTemperature(temperature: number): number {
  return temperature > 0 ? temperature : 1;
}
