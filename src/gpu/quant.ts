/**
 * Weight storage formats, and the one packing both backends store and every kernel reads.
 *
 * - f32: plain floats.
 * - f16: IEEE halves, two to a little-endian u32 word (so the same bytes bind as array<f16>
 *   where the device has shader-f16, and as array<u32> unpacked with unpack2x16float where not).
 * - q8, q4: weight-only quantization in groups of GROUP consecutive values of a row, one f16
 *   scale per group, no zero point. q8 stores round(x / s) with s = absmax / 127. q4 is QLoRA's
 *   4-bit NormalFloat (NF4): s = absmax, and each value the nearest of 16 levels placed at the
 *   quantiles of a normal distribution (NF4_LEVELS), which is how trained weights are spread.
 *   Rows are padded to whole groups (a padded row is `storedRowWidth` wide) and groups pair into
 *   blocks of BLOCK values: the block's codes, then one word holding both groups' scales, so a
 *   kernel finds any value's code and scale from its padded index alone (no division by K).
 *   q8 is 8.5 bits a weight, q4 4.5.
 *
 * Why NF4 for q4 rather than llama.cpp's Q4_0 (s = -m / 8 for the group's value m of largest
 * magnitude, 16 evenly spaced levels, the same bytes): on stories260K and TinyStories-656K NF4
 * measured the better top-1 agreement with f32 (docs/bench/accuracy.json, whose `int4` rows are
 * Q4_0 measured through the same codec). `int4` stays here as that codec, not a loadable format.
 */
import { floatToHalf, halfToFloat } from '../models/dtype';
import { WeightsError } from './errors';

export const WEIGHT_FORMATS = ['f32', 'f16', 'q8', 'q4'] as const;
export type WeightFormat = (typeof WEIGHT_FORMATS)[number];
/** Formats stored as packed u32 words (everything but f32). */
export type PackedFormat = Exclude<WeightFormat, 'f32'>;
/** The quantized formats' codecs, and Q4_0 (`int4`), measured beside NF4 (see above) but not loadable. */
export type Codec = 'q8' | 'q4' | 'int4';

/** Values per f16 scale. */
export const GROUP = 32;
/** Values per block: two groups, whose scales share one word. */
export const BLOCK = 2 * GROUP;
/** Words per block: the codes, then the scale word. */
/** Bits of one code. */
export const BITS: Record<Codec, number> = { q8: 8, q4: 4, int4: 4 };
/** Words per block: the codes, then the scale word (the kernels' loaders index the same way). */
export const BLOCK_WORDS: Record<Codec, number> = { q8: (BLOCK * BITS.q8) / 32 + 1, q4: (BLOCK * BITS.q4) / 32 + 1, int4: (BLOCK * BITS.int4) / 32 + 1 };

/**
 * QLoRA's NF4 levels (Dettmers et al., 2023, appendix E): quantiles of N(0, 1) scaled to
 * [-1, 1], rounded to f32 as the kernels hold them.
 */
export const NF4_LEVELS = Float32Array.from([
  -1, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0, 0.07958029955625534,
  0.16093020141124725, 0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1,
]);

const NF4_ZERO = NF4_LEVELS.indexOf(0);

export const isQuantized = (f: WeightFormat | Codec): f is Codec => f === 'q8' || f === 'q4' || f === 'int4';

/**
 * The format a checkpoint matrix is stored in when a model is loaded as `format`: q4 keeps the
 * token embedding and LM head at q8, as llama.cpp's 4-bit mixes keep their output matrix at 6
 * bits. Every token's logits go through that one matrix; on stories260K and TinyStories-656K
 * this raised q4's top-1 agreement with f32 from 86% to 89% and from 78% to 83%, for 1% more
 * bytes on Qwen3-4B (docs/bench/accuracy.json).
 */
export function matrixFormat(name: string, format: WeightFormat): WeightFormat {
  return format === 'q4' && (name === 'model.embed_tokens.weight' || name === 'lm_head.weight') ? 'q8' : format;
}

export function bitsPerWeight(f: WeightFormat): number {
  return f === 'f32' ? 32 : f === 'f16' ? 16 : BITS[f] + 16 / GROUP;
}

/** Values per stored row: a quantized row is padded to whole groups. */
export function storedRowWidth(width: number, f: WeightFormat | Codec): number {
  return isQuantized(f) ? Math.ceil(width / GROUP) * GROUP : width;
}

/** u32 words (f32: floats) that `rows` rows of `width` occupy. */
export function storedWords(rows: number, width: number, f: WeightFormat | Codec): number {
  const n = rows * storedRowWidth(width, f);
  if (f === 'f32') return n;
  if (f === 'f16') return Math.ceil(n / 2);
  return Math.ceil(n / BLOCK) * BLOCK_WORDS[f];
}

/**
 * Writes rows of `width` values (src, row-major) into `out` (a packed f16/q8/q4 buffer) starting
 * at stored row `firstRow`: a converter can fill a tensor a block of rows at a time, so a
 * checkpoint never exists as a whole f32 copy. `out` must start zeroed (halves are OR-ed in).
 */
export function encodeRows(src: Float32Array, width: number, firstRow: number, f: PackedFormat | Codec, out: Uint32Array): void {
  const rows = width === 0 ? 0 : src.length / width;
  if (f === 'f16') {
    let e = firstRow * width;
    for (let i = 0; i < src.length; i++, e++) {
      const h = floatToHalf(src[i]);
      if ((h & 0x7c00) === 0x7c00) throw new WeightsError(`a weight of magnitude ${Math.abs(src[i])} is beyond f16's range; load this model as f32`);
      out[e >>> 1] |= h << ((e & 1) * 16);
    }
    return;
  }
  // One pass per group, codes packed as they are made: a 4B-parameter model has a billion groups.
  const stride = storedRowWidth(width, f);
  const bits = BITS[f];
  const perWord = 32 / bits;
  const mask = (1 << bits) - 1;
  const words = BLOCK_WORDS[f];
  // Padding and an all-zero group hold zeros: code 0, or NF4's zero level.
  const zero = f === 'q4' ? NF4_ZERO : 0;
  for (let r = 0; r < rows; r++) {
    for (let g0 = 0; g0 < width; g0 += GROUP) {
      const at = r * width + g0;
      const n = Math.min(GROUP, width - g0);
      let m = 0;
      for (let i = 0; i < n; i++) if (Math.abs(src[at + i]) > Math.abs(m)) m = src[at + i];
      const half = m === 0 ? 0 : groupScale(m, f);
      const s = halfToFloat(half);
      const e = (firstRow + r) * stride + g0;
      const block = Math.floor(e / BLOCK) * words;
      const inBlock = e % BLOCK;
      let word = block + inBlock / perWord;
      let w = 0;
      for (let i = 0, j = 0; i < GROUP; i++) {
        const code = i >= n || s === 0 ? zero : quantizeValue(src[at + i] / s, f);
        w |= (code & mask) << (j * bits);
        if (++j === perWord) {
          out[word++] = w >>> 0;
          w = 0;
          j = 0;
        }
      }
      const scaleWord = block + words - 1;
      out[scaleWord] = (out[scaleWord] | (half << ((inBlock / GROUP) * 16))) >>> 0;
    }
  }
}

/** The f16 bits of the scale of a group whose value of largest magnitude is m (nonzero). */
function groupScale(m: number, f: Codec): number {
  const half = floatToHalf(f === 'q8' ? Math.abs(m) / 127 : f === 'int4' ? -m / 8 : Math.abs(m));
  if ((half & 0x7c00) === 0x7c00) {
    // Every such weight is beyond f16 itself too (65,504 at most), so only f32 holds it.
    throw new WeightsError(
      `a weight of magnitude ${Math.abs(m)} is beyond what ${f}'s f16 group scale can hold; load this model as f32 (f16 cannot hold it either)`,
    );
  }
  return half;
}

/** A value over its group's scale as a code: a signed integer, or an NF4 level's index for q4. */
function quantizeValue(t: number, f: Codec): number {
  if (f === 'q4') return nearestLevel(t);
  return f === 'q8' ? clamp(Math.round(t), -127, 127) : clamp(Math.round(t), -8, 7);
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** Midpoints between neighbouring NF4 levels: a value's level is how many midpoints lie below it. */
const NF4_MIDS = Float32Array.from({ length: 15 }, (_, i) => (NF4_LEVELS[i] + NF4_LEVELS[i + 1]) / 2);

/** The nearest NF4 level's index (a binary search: a 4B-parameter model has 4B values to place). */
function nearestLevel(t: number): number {
  let lo = 0;
  let hi = 15;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (t > NF4_MIDS[mid]) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The value at padded index e of a packed buffer, as every kernel's load function computes it. */
export function decodeAt(words: Uint32Array, e: number, f: PackedFormat | Codec): number {
  if (f === 'f16') return halfToFloat((words[e >>> 1] >>> ((e & 1) * 16)) & 0xffff);
  const bits = BITS[f];
  const perWord = 32 / bits;
  const block = Math.floor(e / BLOCK) * BLOCK_WORDS[f];
  const inBlock = e % BLOCK;
  const scale = halfToFloat((words[block + BLOCK_WORDS[f] - 1] >>> (Math.floor(inBlock / GROUP) * 16)) & 0xffff);
  const raw = (words[block + Math.floor(inBlock / perWord)] >>> ((inBlock % perWord) * bits)) & ((1 << bits) - 1);
  if (f === 'q4') return NF4_LEVELS[raw] * scale;
  // Sign-extend the code (what WGSL's extractBits does for i32).
  const code = raw >= 1 << (bits - 1) ? raw - (1 << bits) : raw;
  return code * scale;
}

/** Rows [rowStart, rowStart + rows) of a packed tensor of row `width`, as f32 (row-major, unpadded). */
export function decodeRows(words: Uint32Array, width: number, rowStart: number, rows: number, f: PackedFormat | Codec): Float32Array {
  const out = new Float32Array(rows * width);
  if (f === 'f16') {
    for (let i = 0, e = rowStart * width; i < out.length; i++, e++) out[i] = decodeAt(words, e, f);
    return out;
  }
  // Per group: one scale, then its codes (decodeAt per value would decode the scale each time).
  const stride = storedRowWidth(width, f);
  const bits = BITS[f];
  const perWord = 32 / bits;
  const mask = (1 << bits) - 1;
  for (let r = 0; r < rows; r++) {
    for (let g0 = 0; g0 < width; g0 += GROUP) {
      const e = (rowStart + r) * stride + g0;
      const block = Math.floor(e / BLOCK) * BLOCK_WORDS[f];
      const inBlock = e % BLOCK;
      const scale = halfToFloat((words[block + BLOCK_WORDS[f] - 1] >>> ((inBlock / GROUP) * 16)) & 0xffff);
      const n = Math.min(GROUP, width - g0);
      for (let i = 0; i < n; i++) {
        const raw = (words[block + Math.floor((inBlock + i) / perWord)] >>> (((inBlock + i) % perWord) * bits)) & mask;
        const v = f === 'q4' ? NF4_LEVELS[raw] : raw >= 1 << (bits - 1) ? raw - (1 << bits) : raw;
        out[r * width + g0 + i] = v * scale;
      }
    }
  }
  return out;
}

/** What a tensor becomes when stored in `f` and read back: the values every kernel computes with. */
export function roundTrip(data: Float32Array, width: number, f: WeightFormat | Codec): Float32Array {
  if (f === 'f32') return data;
  const rows = width === 0 ? 0 : data.length / width;
  const words = new Uint32Array(storedWords(rows, width, f));
  encodeRows(data, width, 0, f, words);
  return decodeRows(words, width, 0, rows, f);
}
