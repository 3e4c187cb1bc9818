import type { AttentionShape } from '../backend';
import { like, type Arr } from './types';

/** Cache index of (b, kvHead, slot, 0) in a cache [B, numKvHeads, maxT, headDim]. */
export function cacheOffset(s: AttentionShape, b: number, g: number, slot: number): number {
  return ((b * s.numKvHeads + g) * s.maxT + slot) * s.headDim;
}

/** Copies x [B*T, numKvHeads*headDim] into the cache at slots start..start+T-1. */
export function writeCacheForward(cache: Arr, x: Arr, s: AttentionShape): void {
  const W = s.numKvHeads * s.headDim;
  for (let b = 0; b < s.B; b++) {
    for (let t = 0; t < s.T; t++) {
      for (let g = 0; g < s.numKvHeads; g++) {
        // A loop, not set(subarray): a view per head of every token was most of this op's time
        // and garbage, at a small model's head width.
        const src = (b * s.T + t) * W + g * s.headDim;
        const dst = cacheOffset(s, b, g, s.start + t);
        for (let d = 0; d < s.headDim; d++) cache[dst + d] = x[src + d];
      }
    }
  }
}

/**
 * Softmax weights of one query over its visible keys (padLeft[b]..slot), or null when it sees
 * none (a query at a padding slot); such rows produce zeros and are never read.
 */
function attendProbs(q: Arr, qo: number, k: Arr, s: AttentionShape, b: number, g: number, slot: number): Float64Array | null {
  const lo = s.padLeft[b];
  if (slot < lo) return null;
  const scale = 1 / Math.sqrt(s.headDim);
  const p = new Float64Array(slot - lo + 1);
  let max = -Infinity;
  for (let j = lo; j <= slot; j++) {
    const ko = cacheOffset(s, b, g, j);
    let dot = 0;
    for (let d = 0; d < s.headDim; d++) dot += q[qo + d] * k[ko + d];
    p[j - lo] = dot * scale;
    max = Math.max(max, p[j - lo]);
  }
  let sum = 0;
  for (let j = 0; j < p.length; j++) sum += p[j] = Math.exp(p[j] - max);
  for (let j = 0; j < p.length; j++) p[j] /= sum;
  return p;
}

export function attentionForward(q: Arr, kCache: Arr, vCache: Arr, s: AttentionShape): Arr {
  const Wq = s.numHeads * s.headDim;
  const group = s.numHeads / s.numKvHeads;
  const out = like(q, q.length);
  for (let b = 0; b < s.B; b++) {
    for (let t = 0; t < s.T; t++) {
      for (let h = 0; h < s.numHeads; h++) {
        const g = Math.floor(h / group);
        const qo = (b * s.T + t) * Wq + h * s.headDim;
        const p = attendProbs(q, qo, kCache, s, b, g, s.start + t);
        if (!p) continue;
        for (let j = 0; j < p.length; j++) {
          const vo = cacheOffset(s, b, g, s.padLeft[b] + j);
          for (let d = 0; d < s.headDim; d++) out[qo + d] += p[j] * vCache[vo + d];
        }
      }
    }
  }
  return out;
}

/**
 * Gradients of attention for a whole sequence (start 0, maxT = T). k and v are the caches the
 * forward read ([B, numKvHeads, T, headDim]); dk and dv come back token-major
 * [B*T, numKvHeads*headDim], summed over the query heads that share each kv head (GQA).
 */
export function attentionBackward(q: Arr, k: Arr, v: Arr, dOut: Arr, s: AttentionShape): { dq: Arr; dk: Arr; dv: Arr } {
  const Wq = s.numHeads * s.headDim;
  const Wk = s.numKvHeads * s.headDim;
  const group = s.numHeads / s.numKvHeads;
  const scale = 1 / Math.sqrt(s.headDim);
  const dq = like(q, q.length);
  const dk = like(q, s.B * s.T * Wk);
  const dv = like(q, s.B * s.T * Wk);
  for (let b = 0; b < s.B; b++) {
    for (let t = 0; t < s.T; t++) {
      for (let h = 0; h < s.numHeads; h++) {
        const g = Math.floor(h / group);
        const qo = (b * s.T + t) * Wq + h * s.headDim;
        const p = attendProbs(q, qo, k, s, b, g, t);
        if (!p) continue;
        const lo = s.padLeft[b];
        const dp = new Float64Array(p.length);
        let dot = 0;
        for (let j = 0; j < p.length; j++) {
          const vo = cacheOffset(s, b, g, lo + j);
          let x = 0;
          for (let d = 0; d < s.headDim; d++) x += dOut[qo + d] * v[vo + d];
          dp[j] = x;
          dot += p[j] * x;
        }
        for (let j = 0; j < p.length; j++) {
          const ds = p[j] * (dp[j] - dot) * scale;
          const ko = cacheOffset(s, b, g, lo + j);
          const kvTok = (b * s.T + lo + j) * Wk + g * s.headDim;
          for (let d = 0; d < s.headDim; d++) {
            dq[qo + d] += ds * k[ko + d];
            dk[kvTok + d] += ds * q[qo + d];
            dv[kvTok + d] += p[j] * dOut[qo + d];
          }
        }
      }
    }
  }
  return { dq, dk, dv };
}
