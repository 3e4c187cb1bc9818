/**
 * Teacher-forced scoring: log p(completion token | prompt, earlier completion tokens) for
 * many (prompt, completion) pairs. OPD's teacher and student and PPO's old and reference
 * policies are all this one call.
 */
import type { Backend, Tensor } from './backend';
import type { LoraAdapter } from './lora';
import type { CausalLM } from './model';
import { leftPad } from './generate';
import { checkFinite } from './numerics';

/** Largest logits tensor scoring materializes at once (64 MB of f32). */
export const LOGITS_CHUNK_FLOATS = 16 * 1024 * 1024;

export interface ScoreItem {
  prompt: number[];
  completion: number[];
}

export interface Scored {
  logprobs: Float32Array;
  /** Entropy of the model's distribution at each completion position. */
  entropy: Float32Array;
  /**
   * With options.topK = k: the k most likely next-token ids at each completion position (the
   * distribution that predicts completion token j), most likely first, ties to the lower id; k at
   * or past the vocabulary size gives every id.
   */
  topIds?: Int32Array[];
  /** With options.gather: log p of each asked-for id at each completion position (the top-k OPD term's teacher). */
  gathered?: Float32Array[];
}

/** Ids to read the log-probs of at each completion position of one item (options.gather). */
export type GatherIds = readonly (readonly number[])[];

/** log p(id) for `ids` from one row of logits: logit - logsumexp over the vocabulary. */
export function logprobsAt(logits: Float32Array, at: number, vocab: number, ids: readonly number[]): Float32Array {
  let max = -Infinity;
  for (let v = 0; v < vocab; v++) if (logits[at + v] > max) max = logits[at + v];
  let sum = 0;
  for (let v = 0; v < vocab; v++) sum += Math.exp(logits[at + v] - max);
  const lse = max + Math.log(sum);
  return Float32Array.from(ids, (id) => {
    if (!(Number.isInteger(id) && id >= 0 && id < vocab)) throw new Error(`score: gather id ${id} is outside the vocabulary of ${vocab} tokens`);
    return logits[at + id] - lse;
  });
}

/**
 * The k largest entries of `logits[at .. at + vocab)` as token ids, largest first; equal values
 * in id order. One pass with a sorted list of k, so a 150k vocabulary costs 150k comparisons.
 */
export function topKIds(logits: Float32Array, at: number, vocab: number, k: number): Int32Array {
  const n = Math.min(k, vocab);
  // Every id (the reverse-KL term over the whole vocabulary): one sort, not k insertions per id.
  if (n === vocab) {
    const ids: number[] = [];
    for (let v = 0; v < vocab; v++) if (!Number.isNaN(logits[at + v])) ids.push(v);
    return Int32Array.from(ids.sort((a, b) => logits[at + b] - logits[at + a] || a - b));
  }
  const ids = new Int32Array(n);
  const vals = new Float32Array(n).fill(-Infinity);
  let filled = 0;
  for (let v = 0; v < vocab; v++) {
    const x = logits[at + v];
    // NaN never enters; a later equal value never displaces an earlier (lower) id.
    if (!(filled < n || x > vals[n - 1])) continue;
    let i = filled < n ? filled++ : n - 1;
    while (i > 0 && x > vals[i - 1]) {
      vals[i] = vals[i - 1];
      ids[i] = ids[i - 1];
      i--;
    }
    vals[i] = x;
    ids[i] = v;
  }
  return filled === n ? ids : ids.slice(0, filled);
}

/** Row indices (into [B*T]) whose logits predict each completion token, and the targets. */
export function completionRows(items: ScoreItem[], T: number, padLeft: Int32Array): { rows: Int32Array; targets: Int32Array } {
  const rows: number[] = [];
  const targets: number[] = [];
  items.forEach((it, b) => {
    const first = b * T + padLeft[b] + it.prompt.length;
    it.completion.forEach((tok, j) => {
      rows.push(first + j - 1);
      targets.push(tok);
    });
  });
  return { rows: Int32Array.from(rows), targets: Int32Array.from(targets) };
}

export async function score(
  model: CausalLM,
  items: ScoreItem[],
  options: {
    lora?: LoraAdapter;
    maxBatchTokens?: number;
    topK?: number;
    gather?: readonly (GatherIds | undefined)[];
    /** The logits are divided by it (scoringTemperature of the rollout's sampling temperature); default 1. */
    temperature?: number;
  } = {},
): Promise<Scored[]> {
  if (options.topK !== undefined && !(Number.isInteger(options.topK) && options.topK >= 1)) {
    throw new Error(`score: topK is ${options.topK}; ask for 1 or more next-token ids per position`);
  }
  const out: Scored[] = [];
  const budget = options.maxBatchTokens ?? 4096;
  let i = 0;
  while (i < items.length) {
    // Micro-batch by padded token count so long answers cannot exhaust device memory.
    let j = i + 1;
    let maxLen = items[i].prompt.length + items[i].completion.length;
    while (j < items.length) {
      const len = Math.max(maxLen, items[j].prompt.length + items[j].completion.length);
      if (len * (j - i + 1) > budget) break;
      maxLen = len;
      j++;
    }
    out.push(...(await scoreBatch(model, items.slice(i, j), options.lora, options.topK, options.gather?.slice(i, j), options.temperature ?? 1)));
    i = j;
  }
  return out;
}

/** [start, end) row ranges whose logits stay within maxFloats. */
export function rowChunks(rows: number, vocab: number, maxFloats: number): [number, number][] {
  const size = Math.max(1, Math.floor(maxFloats / vocab));
  const out: [number, number][] = [];
  for (let a = 0; a < rows; a += size) out.push([a, Math.min(rows, a + size)]);
  return out;
}

/**
 * log p(target) and entropy of each row of `logits`, read back into `out` at offset `at`;
 * both reads are in flight at once, so the GPU is waited for once.
 */
export async function readLogprobs(
  be: Backend,
  logits: Tensor,
  targets: Int32Array,
  out: { logp: Float32Array; entropy: Float32Array },
  at: number,
): Promise<void> {
  const g = be.logSoftmaxGather(logits, targets);
  try {
    const [lp, h] = await Promise.all([be.read(g.logp), be.read(g.entropy)]);
    out.logp.set(lp, at);
    out.entropy.set(h, at);
  } finally {
    be.dispose(g.logp);
    be.dispose(g.entropy);
  }
}

async function scoreBatch(
  model: CausalLM,
  items: ScoreItem[],
  lora: LoraAdapter | undefined,
  topK: number | undefined,
  gather: readonly (GatherIds | undefined)[] | undefined,
  temperature: number,
): Promise<Scored[]> {
  const be = model.backend;
  items.forEach((it, i) => {
    if (it.prompt.length === 0) throw new Error('score: every prompt needs at least one token (e.g. BOS)');
    const g = gather?.[i];
    if (g && g.length !== it.completion.length)
      throw new Error(`score: ${g.length} gather sets for ${it.completion.length} completion tokens; give one per token`);
  });
  // The gather sets by completion row, as completionRows orders them.
  const rowSets = gather?.some(Boolean) ? items.flatMap((it, i) => it.completion.map((_, t) => gather[i]?.[t])) : null;
  const { ids, T, padLeft } = leftPad(
    items.map((it) => [...it.prompt, ...it.completion]),
    0,
  );
  const cache = model.createCache(items.length, T);
  try {
    const hidden = model.forward({ ids, B: items.length, T, start: 0, padLeft }, cache, lora);
    const { rows, targets } = completionRows(items, T, padLeft);
    if (rows.length === 0)
      return items.map((_, i) => ({
        logprobs: new Float32Array(0),
        entropy: new Float32Array(0),
        ...(topK ? { topIds: [] } : {}),
        ...(gather?.[i] ? { gathered: [] } : {}),
      }));
    const logp = new Float32Array(rows.length);
    const ent = new Float32Array(rows.length);
    const top: Int32Array[] = [];
    const gathered: Float32Array[] = [];
    const V = model.config.vocabSize;
    // Logits are rows x vocab: chunk the rows so a 150k vocabulary stays within memory.
    for (const [a, b] of rowChunks(rows.length, V, LOGITS_CHUNK_FLOATS)) {
      const logits = model.logits(hidden, rows.subarray(a, b), temperature);
      try {
        await readLogprobs(be, logits, targets.subarray(a, b), { logp, entropy: ent }, a);
        // Top-k sets and gathers: the chunk's logits come back and are read here, on either
        // backend alike (the order of logits is the order of probabilities, so ranking needs no softmax).
        if (topK || rowSets) {
          const host = await be.read(logits);
          for (let r = 0; r < b - a; r++) {
            if (topK) top.push(topKIds(host, r * V, V, topK));
            if (rowSets) gathered.push(logprobsAt(host, r * V, V, rowSets[a + r] ?? []));
          }
        }
      } finally {
        be.dispose(logits);
      }
    }
    be.dispose(hidden);
    await checkFinite(model, items, [logp, ent], lora);
    let at = 0;
    return items.map((it, i) => {
      const n = it.completion.length;
      const r: Scored = { logprobs: logp.slice(at, at + n), entropy: ent.slice(at, at + n) };
      if (topK) r.topIds = top.slice(at, at + n);
      if (gather?.[i]) r.gathered = gathered.slice(at, at + n);
      at += n;
      return r;
    });
  } finally {
    model.disposeCache(cache);
  }
}
