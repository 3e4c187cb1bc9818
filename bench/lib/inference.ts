/**
 * Prefill and decode rates of any generator, so the engine and the transformers.js peer are
 * timed by the same loop on the same token ids.
 */
import { now, rate, repsFor, timeMs, warmUp } from './stats';
import { isSkipped, type BatchKey, type InferenceCell, type Maybe } from './types';
import type { Workload } from './workload';

/**
 * Generates exactly `maxNewTokens` greedy tokens for the whole batch (no stop tokens), calling
 * `onStep` once each step's tokens are known on the CPU side.
 */
export type Generator = (maxNewTokens: number, onStep?: () => void) => Promise<unknown>;

export async function measureInference(batch: number, w: Workload, gen: Generator): Promise<Maybe<InferenceCell>> {
  // A warm-up call is one prefill and one decode step. What follows is reps prefills and at least
  // one generation of decodeSteps steps, about half as many such calls when a prefill costs what
  // a step does.
  const warm = await warmUp(() => gen(2), Math.ceil(w.reps + (1 + w.decodeSteps) / 2), w.budgetMs);
  if (isSkipped(warm)) return warm;
  // Prefill is timed to the first token, as a server sees it: the forward over the prompt,
  // whatever logits the runner computes, and the greedy pick.
  const prefill: number[] = [];
  const reps = repsFor(warm, w.reps, w.maxReps, w.cheapMs);
  for (let i = 0; i < reps; i++) prefill.push((batch * w.promptTokens) / ((await timeMs(() => gen(1))) / 1000));
  // A decode repetition is decodeSteps consecutive steps of one generation, timed from the first
  // token (which ends the prefill) to the last: a step of a small model takes a millisecond or
  // two, and one step alone is mostly the timer's and the scheduler's noise.
  const decode: number[] = [];
  const decodeReps = repsFor({ ...warm, ms: (warm.ms * (1 + w.decodeSteps)) / 2 }, 1, w.maxReps, w.cheapMs);
  for (let i = 0; i < decodeReps; i++) {
    const stamps: number[] = [];
    await gen(1 + w.decodeSteps, () => stamps.push(now()));
    decode.push((batch * w.decodeSteps) / ((stamps[w.decodeSteps] - stamps[0]) / 1000));
  }
  return {
    batch,
    promptTokens: w.promptTokens,
    prefillTokensPerS: rate(prefill, warm.warmups),
    decodeTokensPerS: rate(decode, warm.warmups),
  };
}

/** Measures each batch in order; once one is over budget the larger ones are not tried. */
export async function measureBatches(
  w: Workload,
  genFor: (batch: number) => Generator,
  log: (line: string) => void,
): Promise<Record<BatchKey, Maybe<InferenceCell>>> {
  const out: Record<BatchKey, Maybe<InferenceCell>> = {};
  let over: string | null = null;
  for (const batch of w.batches) {
    const cell: Maybe<InferenceCell> = over ? { skipped: over } : await measureInference(batch, w, genFor(batch));
    if (isSkipped(cell)) over ??= `not tried: batch ${batch} was ${cell.skipped}`;
    out[`b${batch}`] = cell;
    log(`batch ${batch}: ${isSkipped(cell) ? cell.skipped : `prefill ${cell.prefillTokensPerS.median} tok/s, decode ${cell.decodeTokensPerS.median} tok/s`}`);
  }
  return out;
}
