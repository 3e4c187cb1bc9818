/**
 * Teacher-forced scoring: log p(completion token | prompt, earlier completion tokens) for
 * many (prompt, completion) pairs. OPD's teacher and student and PPO's old and reference
 * policies are all this one call.
 */
import type { Backend, Tensor } from './backend';
import type { LoraAdapter } from './lora';
import type { CausalLM } from './model';
import { leftPad } from './generate';

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
  options: { lora?: LoraAdapter; maxBatchTokens?: number } = {},
): Promise<Scored[]> {
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
    out.push(...(await scoreBatch(model, items.slice(i, j), options.lora)));
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

async function scoreBatch(model: CausalLM, items: ScoreItem[], lora?: LoraAdapter): Promise<Scored[]> {
  const be = model.backend;
  for (const it of items) {
    if (it.prompt.length === 0) throw new Error('score: every prompt needs at least one token (e.g. BOS)');
  }
  const { ids, T, padLeft } = leftPad(items.map((it) => [...it.prompt, ...it.completion]), 0);
  const cache = model.createCache(items.length, T);
  try {
    const hidden = model.forward({ ids, B: items.length, T, start: 0, padLeft }, cache, lora);
    const { rows, targets } = completionRows(items, T, padLeft);
    if (rows.length === 0) return items.map(() => ({ logprobs: new Float32Array(0), entropy: new Float32Array(0) }));
    const logp = new Float32Array(rows.length);
    const ent = new Float32Array(rows.length);
    // Logits are rows x vocab: chunk the rows so a 150k vocabulary stays within memory.
    for (const [a, b] of rowChunks(rows.length, model.config.vocabSize, LOGITS_CHUNK_FLOATS)) {
      const logits = model.logits(hidden, rows.subarray(a, b));
      await readLogprobs(be, logits, targets.subarray(a, b), { logp, entropy: ent }, a);
      be.dispose(logits);
    }
    be.dispose(hidden);
    let at = 0;
    return items.map((it) => {
      const n = it.completion.length;
      const r = { logprobs: logp.slice(at, at + n), entropy: ent.slice(at, at + n) };
      at += n;
      return r;
    });
  } finally {
    model.disposeCache(cache);
  }
}
