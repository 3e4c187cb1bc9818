import { describe, expect, it } from 'vitest';
import { randn } from '../../test/support/gpu/cases';
import { CpuBackend } from './cpu/backend';
import { floatToHalf, halfToFloat } from '../models/dtype';
import { WeightsError } from './errors';
import {
  bitsPerWeight,
  NF4_LEVELS,
  decodeAt,
  decodeRows,
  encodeRows,
  GROUP,
  roundTrip,
  storedRowWidth,
  storedWords,
  type Codec,
  type PackedFormat,
} from './quant';

/** Largest |x - y| over each group of a row, divided by the group's largest |x|. */
function worstGroupError(x: Float32Array, y: Float32Array, width: number): number {
  let worst = 0;
  for (let r = 0; r < x.length / width; r++) {
    for (let g = 0; g < width; g += GROUP) {
      let m = 0;
      let e = 0;
      for (let c = g; c < Math.min(width, g + GROUP); c++) {
        m = Math.max(m, Math.abs(x[r * width + c]));
        e = Math.max(e, Math.abs(x[r * width + c] - y[r * width + c]));
      }
      if (m > 0) worst = Math.max(worst, e / m);
    }
  }
  return worst;
}

describe('weight formats (quant.ts)', () => {
  it('stores a row in whole groups: sizes and bits a weight', () => {
    expect(storedRowWidth(40, 'q4')).toBe(64);
    expect(storedRowWidth(40, 'f16')).toBe(40);
    // 3 rows of 40 -> 192 padded values -> 3 blocks of 64.
    expect(storedWords(3, 40, 'q8')).toBe(3 * 17);
    expect(storedWords(3, 40, 'q4')).toBe(3 * 9);
    expect(storedWords(3, 7, 'f16')).toBe(11);
    expect(storedWords(3, 7, 'f32')).toBe(21);
    expect([bitsPerWeight('f32'), bitsPerWeight('f16'), bitsPerWeight('q8'), bitsPerWeight('q4')]).toEqual([32, 16, 8.5, 4.5]);
  });

  it('f16 is round-to-nearest-even halves, exact for values that are halves', () => {
    const x = randn(1, 7 * 13, 3);
    const y = roundTrip(x, 13, 'f16');
    x.forEach((v, i) => expect(y[i]).toBe(halfToFloat(floatToHalf(v))));
    expect(Array.from(roundTrip(Float32Array.from([0.5, -2, 65504, 2 ** -24]), 2, 'f16'))).toEqual([0.5, -2, 65504, 2 ** -24]);
  });

  // Stated tolerances, per group, relative to the group's largest magnitude m: q8 rounds to
  // steps of m/127 (error <= m/254); q4 to the nearest NF4 level (error <= half the widest gap,
  // between -1 and the next level: 0.152 m); int4 (Q4_0) to steps of m/8 (<= m/16, except values
  // of the other sign beyond 7 steps, clamped: <= m/8); plus the f16 rounding of the scale.
  it.each([
    ['q8', 1 / 254],
    ['q4', (NF4_LEVELS[1] - NF4_LEVELS[0]) / 2],
    ['int4', 1 / 8],
  ] as const)('%s keeps every value within its stated step of the group maximum', (f, tol) => {
    const width = 96;
    const x = randn(2, 5 * width, 0.7);
    expect(worstGroupError(x, roundTrip(x, width, f), width)).toBeLessThan(tol * (1 + 2 ** -10) + 1e-7);
  });

  it('q4 puts the group extreme on the outermost level and stores each of the 16 NF4 levels', () => {
    const x = Float32Array.from(NF4_LEVELS, (v) => v * 0.75);
    const y = roundTrip(Float32Array.from([...x, ...x]), GROUP, 'q4');
    const scale = halfToFloat(floatToHalf(0.75));
    expect(Array.from(y.subarray(0, 16))).toEqual(Array.from(NF4_LEVELS, (v) => Math.fround(v * scale)));
  });

  it('pads a short last group with zeros that stay zero, and a zero group has a zero scale', () => {
    const x = randn(3, 3 * 40);
    x.fill(0, 40, 80);
    for (const f of ['q8', 'q4'] as const) {
      const words = new Uint32Array(storedWords(3, 40, f));
      encodeRows(x, 40, 0, f, words);
      for (let c = 40; c < 64; c++) expect(decodeAt(words, c, f)).toBe(0);
      expect(Array.from(decodeRows(words, 40, 1, 1, f))).toEqual(new Array(40).fill(0));
    }
  });

  it.each(['f16', 'q8', 'q4', 'int4'] as (PackedFormat | Codec)[])('%s: encoding a block of rows at a time gives the same words as all at once', (f) => {
    const width = 40;
    const x = randn(4, 11 * width);
    const whole = new Uint32Array(storedWords(11, width, f));
    encodeRows(x, width, 0, f, whole);
    const blocks = new Uint32Array(whole.length);
    for (const [r, n] of [
      [0, 3],
      [3, 1],
      [4, 7],
    ]) {
      encodeRows(x.subarray(r * width, (r + n) * width), width, r, f, blocks);
    }
    expect(blocks).toEqual(whole);
    // decodeAt (the kernels' arithmetic) and decodeRows (the bulk path) agree value for value.
    const rows = decodeRows(whole, width, 0, 11, f);
    for (let r = 0; r < 11; r++)
      for (let c = 0; c < width; c++) expect(Math.fround(decodeAt(whole, r * storedRowWidth(width, f) + c, f))).toBe(rows[r * width + c]);
  });

  it('refuses a weight beyond what f16 (or an f16 group scale) holds, saying what to load instead', () => {
    const x = new Float32Array(GROUP).fill(1e9);
    expect(() => roundTrip(x, GROUP, 'q4')).toThrow(WeightsError);
    // The format it names must take the weight: f16 refuses it too, so only f32 is named.
    for (const f of ['q4', 'q8'] as const) expect(() => roundTrip(x, GROUP, f)).toThrow(/load this model as f32 \(f16 cannot hold it either\)$/);
    expect(() => roundTrip(x, GROUP, 'f16')).toThrow(/beyond f16's range/);
    expect(() => roundTrip(Float32Array.from([1, 7e4]), 2, 'f16')).toThrow(/beyond f16's range; load this model as f32/);
  });
});

describe('Backend.weight: converted a block of rows at a time', () => {
  it.each(['f32', 'f16', 'q8', 'q4'] as const)('%s: the CPU backend asks for at most 1M values at once and stores what the codec makes', async (f) => {
    const rows = 2500;
    const width = 1000;
    const asked: number[] = [];
    const row = (r: number) => randn(r + 1, width);
    const src = {
      shape: [rows, width],
      rows(start: number, count: number) {
        asked.push(count);
        const out = new Float32Array(count * width);
        for (let r = 0; r < count; r++) out.set(row(start + r), r * width);
        return out;
      },
    };
    const be = new CpuBackend();
    const w = be.weight(src, f);
    expect(Math.max(...asked) * width).toBeLessThanOrEqual(2 ** 20);
    expect(asked.reduce((a, b) => a + b, 0)).toBe(rows);
    const back = await be.read(w);
    for (const r of [0, 1048, 2499]) expect(Array.from(back.subarray(r * width, (r + 1) * width))).toEqual(Array.from(roundTrip(row(r), width, f)));
    expect(be.memory().allocated).toBe(storedWords(rows, width, f) * 4);
  });
});
