/**
 * Picking the next token of each row of logits [R, V]: greedy, or temperature sampling with
 * top-k and top-p, plus the log-prob of the pick under log_softmax(logits), untruncated
 * (generate passes logits already divided by the temperature and draws at 1, so this is the
 * rollout log-prob PPO compares against). The CPU reference of ./sample.wgsl.ts; both follow
 * the same definition so that one seed gives one token on either backend:
 *
 * - greedy (temperature <= 0): the first index of the largest logit;
 * - top-k keeps every logit >= the k-th largest (ties at the cut are all kept);
 * - top-p then keeps every logit >= tau, the largest logit value whose "at least tau" mass
 *   (weights exp((x - max) / temperature) over what top-k kept) reaches topP of the total;
 *   with distinct logits this is the smallest sorted prefix holding topP of the mass;
 * - the pick is an inverse-CDF walk in vocabulary order with one uniform u in [0, 1] per row:
 *   the first kept index whose running weight exceeds u times the kept total. The weights are
 *   summed per contiguous block (sampleBlocks), as the GPU's workgroup does, so the two sum
 *   in the same order.
 *
 * No sort of the vocabulary is needed on the GPU; the reference sorts only to find the cuts.
 */
import { EngineError } from '../errors';
import type { SamplingOptions } from '../sampler';
import type { Arr } from './types';

/**
 * Contiguous slices of a row of V logits the pick walks through; the WGSL workgroup has one
 * invocation each: about 16 logits apiece, between 32 and 256 invocations.
 */
export function sampleBlocks(V: number): number {
  return Math.min(256, Math.max(32, 2 ** Math.ceil(Math.log2(Math.ceil(V / 16)))));
}

export interface Picks {
  ids: Int32Array;
  /** log_softmax(logits)[id] of the raw distribution. */
  logp: Float32Array;
}

export function isGreedy(o: SamplingOptions): boolean {
  return !(o.temperature > 0);
}

/**
 * Both backends refuse the same inputs, before any work: `size` logits in one row per
 * uniform, and settings a pick can follow. Returns the row length V.
 */
export function checkSampling(size: number, o: SamplingOptions, uniforms: Float32Array): number {
  const bad = (what: string) => {
    throw new EngineError(`sample: ${what}`);
  };
  if (uniforms.length === 0 || size % uniforms.length !== 0) bad(`${size} logits are not ${uniforms.length} rows`);
  if (Number.isNaN(o.temperature)) bad('temperature is NaN; use 0 for greedy or a positive number');
  if (!isGreedy(o)) {
    if (!(o.topP > 0 && o.topP <= 1)) bad(`topP ${o.topP} is outside (0, 1]; use 1 to keep the whole distribution`);
    if (!(Number.isInteger(o.topK) && o.topK >= 0)) bad(`topK ${o.topK} is not a whole number >= 0; use 0 for no top-k cut`);
    // A draw just below 1 rounds to exactly 1 in f32; it picks the last kept token.
    for (const u of uniforms) if (!(u >= 0 && u <= 1)) bad(`uniform ${u} is outside [0, 1]`);
  }
  return size / uniforms.length;
}

/** Keep logits >= the returned cut; -Infinity keeps them all. */
function topKCut(row: Arr, k: number): number {
  if (!(k > 0 && k < row.length)) return -Infinity;
  const sorted = Float32Array.from(row).sort();
  return sorted[row.length - k];
}

function topPCut(row: Arr, floor: number, max: number, o: SamplingOptions): number {
  if (!(o.topP < 1)) return floor;
  const kept = Float32Array.from(row.filter((x) => x >= floor))
    .sort()
    .reverse();
  const weight = (x: number) => Math.exp((x - max) / o.temperature);
  let total = 0;
  for (const x of kept) total += weight(x);
  const target = o.topP * total;
  let mass = 0;
  for (let j = 0; j < kept.length; j++) {
    mass += weight(kept[j]);
    // The cut is a value, so ties with the value that reaches the target count with it.
    if (mass >= target && kept[j + 1] !== kept[j]) return kept[j];
  }
  return floor;
}

function pickOne(row: Arr, o: SamplingOptions, u: number): number {
  const V = row.length;
  let best = 0;
  for (let i = 1; i < V; i++) if (row[i] > row[best]) best = i;
  if (isGreedy(o)) return best;
  const max = row[best];
  const cut = topPCut(row, topKCut(row, o.topK), max, o);
  const weights = Float64Array.from(row, (x) => (x >= cut ? Math.exp((x - max) / o.temperature) : 0));
  const size = Math.ceil(V / sampleBlocks(V));
  const blockMass: number[] = [];
  for (let s = 0; s < V; s += size) {
    let m = 0;
    for (let i = s; i < Math.min(s + size, V); i++) m += weights[i];
    blockMass.push(m);
  }
  const target = u * blockMass.reduce((a, b) => a + b, 0);
  let before = 0;
  for (let b = 0; b < blockMass.length; b++) {
    if (blockMass[b] === 0) continue;
    if (before + blockMass[b] > target) {
      let acc = 0;
      let last = b * size;
      for (let i = b * size; i < Math.min((b + 1) * size, V); i++) {
        if (weights[i] === 0) continue;
        acc += weights[i];
        last = i;
        if (acc > target - before) return i;
      }
      return last;
    }
    before += blockMass[b];
  }
  // Rounding left the target at the very top of the mass: the last kept index.
  return weights.findLastIndex((w) => w > 0);
}

/** One pick per row; `uniforms[r]` in [0, 1] drives row r (ignored when greedy). */
export function sampleRows(logits: Arr, o: SamplingOptions, uniforms: Float32Array): Picks {
  const V = checkSampling(logits.length, o, uniforms);
  const R = uniforms.length;
  const ids = new Int32Array(R);
  const logp = new Float32Array(R);
  for (let r = 0; r < R; r++) {
    const row = logits.subarray(r * V, (r + 1) * V);
    const id = pickOne(row, o, uniforms[r]);
    let max = -Infinity;
    for (const x of row) max = Math.max(max, x);
    let sum = 0;
    for (const x of row) sum += Math.exp(x - max);
    ids[r] = id;
    logp[r] = row[id] - max - Math.log(sum);
  }
  return { ids, logp };
}
