/**
 * Seeded token choice and stop strings for generators whose library has neither: the last step of
 * a logits-processor chain (transformers.js's), so that a role repeats given its seed whatever
 * other calls run beside it in the same worker.
 */
import { mulberry32 } from '../gpu/random';

/**
 * The token a draw of `rand` picks from `logits` (already divided by the temperature): softmax,
 * then the nucleus of the most probable tokens whose mass reaches `topP`, then one uniform draw
 * over it. Ties keep the lower id first, so the order is a pure function of the logits.
 */
export function drawToken(logits: ArrayLike<number>, rand: () => number, topP = 1): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  if (max === -Infinity || Number.isNaN(max)) return 0;
  const p = new Float64Array(logits.length);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) {
    const e = Number.isFinite(logits[i]) ? Math.exp(logits[i] - max) : 0;
    p[i] = e;
    sum += e;
  }
  if (topP >= 1) {
    let x = rand() * sum;
    for (let i = 0; i < p.length; i++) {
      x -= p[i];
      if (x < 0 && p[i] > 0) return i;
    }
    return lastNonZero(p);
  }
  const order = Array.from(p.keys())
    .filter((i) => p[i] > 0)
    .sort((a, b) => p[b] - p[a] || a - b);
  let kept = 0;
  let mass = 0;
  while (kept < order.length && (kept === 0 || mass < topP * sum)) mass += p[order[kept++]];
  let x = rand() * mass;
  for (let k = 0; k < kept; k++) {
    x -= p[order[k]];
    if (x < 0) return order[k];
  }
  return order[kept - 1];
}

function lastNonZero(p: Float64Array): number {
  for (let i = p.length - 1; i >= 0; i--) if (p[i] > 0) return i;
  return 0;
}

/**
 * A logits processor for a batch of one or more rows of `vocab` logits: draws each row's token
 * with its own seeded stream and leaves that token the only finite logit, so a greedy (argmax)
 * sampler after it emits the draw. Row b's stream is seeded with `seed + b`.
 */
export function seededDraw(seed: number, topP: number): (rows: Float32Array, vocab: number) => void {
  const streams: (() => number)[] = [];
  return (rows, vocab) => {
    for (let b = 0; b * vocab < rows.length; b++) {
      streams[b] ??= mulberry32((seed + b) >>> 0);
      const row = rows.subarray(b * vocab, (b + 1) * vocab);
      const token = drawToken(row, streams[b], topP);
      row.fill(-Infinity);
      row[token] = 0;
    }
  };
}

/** Where the first of `stops` begins in `text`, or -1. */
export function stopIndex(text: string, stops: readonly string[]): number {
  let at = -1;
  for (const s of stops) {
    if (!s) continue;
    const i = text.indexOf(s);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  return at;
}

/** `text` cut before its first stop string (the stop string itself is not part of the answer). */
export function cutAtStop(text: string, stops: readonly string[] | undefined): string {
  if (!stops?.length) return text;
  const at = stopIndex(text, stops);
  return at < 0 ? text : text.slice(0, at);
}
