/**
 * Batched generation: left-padded prefill of every prompt at once, then one decode step per
 * token for the whole batch, each sequence with its own stops. Returns, per generated token,
 * the log-prob under the model's raw distribution: the rollout log-prob PPO compares against.
 */
import { EngineError } from './errors';
import { nonFiniteError } from './numerics';
import type { LoraAdapter } from './lora';
import type { CausalLM, ForwardBatch } from './model';
import { isGreedy } from './ops/sample';
import { mulberry32 } from './random';
import { GREEDY, scoringTemperature, type SamplingOptions } from './sampler';
import { yieldToEventLoop } from './yield';

export interface GenerateOptions {
  maxNewTokens: number;
  sampling?: SamplingOptions;
  /** Sequence i samples with seed + i, so a batch is as reproducible as single requests. */
  seed?: number;
  /** One seed per sequence, overriding `seed` (a batcher merges requests with their own seeds). */
  seeds?: number[];
  /** Token ids that end a sequence (EOS, end of turn); the stop token is kept in `tokens`. */
  stopIds?: number[];
  /** Text that ends a sequence; `text` is cut before it. Needs `decode`. */
  stopStrings?: string[];
  decode?: (ids: number[]) => string;
  /**
   * Sequence i's own limits, within maxNewTokens and beside stopStrings: requests merged into one
   * batch keep their own max_tokens and stop, so each gets what it would get alone.
   */
  limits?: ({ maxNewTokens?: number; stopStrings?: string[] } | undefined)[];
  lora?: LoraAdapter;
  signal?: AbortSignal;
  /** Called after every decode step with the tokens generated so far in the batch. */
  onStep?: (generated: number) => void;
  /** Called with each token as sequence b draws it (a server streams it to its client). */
  onToken?: (b: number, id: number, logprob: number) => void;
  /** Whether sequence b is no longer wanted (its client went away): it ends, 'aborted', and the others go on. */
  dropped?: (b: number) => boolean;
  /** Pad id for left padding; any valid id works since padding is masked. */
  padId?: number;
}

export type FinishReason = 'stop' | 'length' | 'aborted';

export interface Generation {
  tokens: number[];
  /** log p of each token under the distribution it was drawn from: the logits divided by the temperature (1 for greedy). */
  logprobs: number[];
  text: string;
  finishReason: FinishReason;
}

/** Left-pads prompts to the longest: ids [B*T] and each sequence's padding. */
export function leftPad(seqs: number[][], padId: number): { ids: Int32Array; T: number; padLeft: Int32Array } {
  const T = Math.max(...seqs.map((s) => s.length));
  const ids = new Int32Array(seqs.length * T).fill(padId);
  const padLeft = new Int32Array(seqs.length);
  seqs.forEach((s, b) => {
    padLeft[b] = T - s.length;
    ids.set(s, b * T + padLeft[b]);
  });
  return { ids, T, padLeft };
}

export async function generate(model: CausalLM, prompts: number[][], o: GenerateOptions): Promise<Generation[]> {
  if (prompts.length === 0) return [];
  if (prompts.some((p) => p.length === 0)) throw new EngineError('every prompt needs at least one token');
  const be = model.backend;
  const sampling = o.sampling ?? GREEDY;
  const greedy = isGreedy(sampling);
  // The logits come divided by the temperature and are drawn from at 1 (the same pick), so the
  // log-prob each token records is that of the distribution it was drawn from: what the trainer
  // recomputes at scoringTemperature.
  const temperature = scoringTemperature(sampling.temperature);
  const draw: SamplingOptions = greedy ? sampling : { ...sampling, temperature: 1 };
  const B = prompts.length;
  const { ids, T, padLeft } = leftPad(prompts, o.padId ?? 0);
  const cache = model.createCache(B, T + o.maxNewTokens);
  const rands = prompts.map((_, i) => mulberry32(o.seeds?.[i] ?? (o.seed ?? 0) + i));
  const stopIds = new Set(o.stopIds ?? []);
  const out: Generation[] = prompts.map(() => ({ tokens: [], logprobs: [], text: '', finishReason: 'length' }));
  const done = new Array<boolean>(B).fill(false);
  const stopsOf = (b: number) => [...(o.stopStrings ?? []), ...(o.limits?.[b]?.stopStrings ?? [])];
  const stops = prompts.map((_, b) => stopsOf(b));
  const limitOf = (b: number) => Math.min(o.maxNewTokens, o.limits?.[b]?.maxNewTokens ?? o.maxNewTokens);
  try {
    let batch: ForwardBatch = { ids, B, T, start: 0, padLeft };
    for (let step = 0; step < o.maxNewTokens; step++) {
      if (o.signal?.aborted) {
        out.forEach((g, b) => !done[b] && (g.finishReason = 'aborted'));
        break;
      }
      out.forEach((g, b) => {
        if (!done[b] && o.dropped?.(b)) {
          done[b] = true;
          g.finishReason = 'aborted';
        }
      });
      if (done.every(Boolean)) break;
      const hidden = model.forward(batch, cache, o.lora);
      const lastRows = Int32Array.from({ length: B }, (_, b) => b * batch.T + batch.T - 1);
      const logits = model.logits(hidden, lastRows, temperature);
      be.dispose(hidden);
      // Finished rows draw nothing, so each sequence's stream is the one it would have alone.
      const uniforms = Float32Array.from(rands, (rand, b) => (greedy || done[b] ? 0 : rand()));
      const { ids: next, logp } = await be.sample(logits, draw, uniforms);
      be.dispose(logits);
      for (let b = 0; b < B; b++) {
        if (done[b]) continue;
        const g = out[b];
        // Non-finite logits sample no real token (id -1, or a log-prob of NaN): stop and say where they began.
        if (!Number.isFinite(logp[b]) || next[b] < 0 || next[b] >= model.config.vocabSize) {
          throw await nonFiniteError(
            model,
            [...prompts[b], ...g.tokens],
            `the log-prob of generated token ${g.tokens.length + 1} of sequence ${b + 1}`,
            o.lora,
          );
        }
        g.tokens.push(next[b]);
        g.logprobs.push(logp[b]);
        o.onToken?.(b, next[b], logp[b]);
        if (stopIds.has(next[b])) {
          done[b] = true;
          g.finishReason = 'stop';
        } else if (stops[b].length && o.decode && stops[b].some((s) => o.decode!(g.tokens).includes(s))) {
          done[b] = true;
          g.finishReason = 'stop';
        } else if (g.tokens.length >= limitOf(b)) {
          done[b] = true;
        }
      }
      o.onStep?.(step + 1);
      if (done.every(Boolean)) break;
      await yieldToEventLoop();
      batch = { ids: next, B, T: 1, start: batch.start + batch.T, padLeft };
    }
  } finally {
    model.disposeCache(cache);
  }
  if (o.decode) {
    for (const [b, g] of out.entries()) {
      let text = o.decode(g.tokens);
      for (const s of stops[b]) {
        const at = text.indexOf(s);
        if (at >= 0) text = text.slice(0, at);
      }
      g.text = text;
    }
  }
  return out;
}
