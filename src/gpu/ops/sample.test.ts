import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../random';
import type { SamplingOptions } from '../sampler';
import { sampleRows } from './sample';

/** How often each token is picked when u sweeps [0, 1) on a fine grid: the sampled distribution. */
function frequencies(logits: number[], o: SamplingOptions, n = 20000): number[] {
  const row = Float32Array.from(logits);
  const counts = new Array<number>(logits.length).fill(0);
  for (let i = 0; i < n; i++) counts[sampleRows(row, o, Float32Array.of((i + 0.5) / n)).ids[0]]++;
  return counts.map((c) => c / n);
}

/** The textbook definition: sort, cut top-k, cut the smallest prefix holding top-p, renormalise. */
function expected(logits: number[], o: SamplingOptions): number[] {
  const order = logits.map((_, i) => i).sort((a, b) => logits[b] - logits[a]);
  const kept = o.topK > 0 ? order.slice(0, o.topK) : order;
  const w = kept.map((i) => Math.exp((logits[i] - logits[order[0]]) / o.temperature));
  const total = w.reduce((a, b) => a + b, 0);
  let keep = kept.length;
  let acc = 0;
  for (let j = 0; j < kept.length && o.topP < 1; j++) {
    acc += w[j] / total;
    if (acc >= o.topP) {
      keep = j + 1;
      break;
    }
  }
  const mass = w.slice(0, keep).reduce((a, b) => a + b, 0);
  const p = new Array<number>(logits.length).fill(0);
  for (let j = 0; j < keep; j++) p[kept[j]] = w[j] / mass;
  return p;
}

const LOGITS = [0.3, 2.1, -1.0, 1.7, 0.9, -0.4, 2.6, 0.0];

describe('sampleRows (the pick every backend implements)', () => {
  const settings: [string, SamplingOptions][] = [
    ['temperature 1', { temperature: 1, topK: 0, topP: 1 }],
    ['temperature 0.5', { temperature: 0.5, topK: 0, topP: 1 }],
    ['temperature 2', { temperature: 2, topK: 0, topP: 1 }],
    ['top-k 3', { temperature: 1, topK: 3, topP: 1 }],
    ['top-p 0.8', { temperature: 1, topK: 0, topP: 0.8 }],
    ['top-k 5 then top-p 0.6 at temperature 0.7', { temperature: 0.7, topK: 5, topP: 0.6 }],
  ];
  for (const [name, o] of settings) {
    it(`${name}: the sampled distribution is the truncated, tempered softmax`, () => {
      const got = frequencies(LOGITS, o);
      const want = expected(LOGITS, o);
      got.forEach((f, i) => expect(Math.abs(f - want[i]), `token ${i}: ${f} vs ${want[i]}`).toBeLessThan(1e-3));
    });
  }

  it('greedy takes the first of equal maxima and ignores the uniform', () => {
    const row = Float32Array.of(1, 5, 2, 5);
    for (const u of [0, 0.5, 0.99]) expect(sampleRows(row, { temperature: 0, topK: 0, topP: 1 }, Float32Array.of(u)).ids[0]).toBe(1);
  });

  it('ties at a cut are kept together (top-k 2 over three equal leaders keeps all three)', () => {
    const got = frequencies([4, 1, 4, 4, 0], { temperature: 1, topK: 2, topP: 1 });
    for (const i of [0, 2, 3]) expect(got[i]).toBeCloseTo(1 / 3, 3);
    expect(got[1] + got[4]).toBe(0);
  });

  it('returns the raw log-prob of the pick (temperature 1, untruncated), whatever the settings', () => {
    const row = Float32Array.from(LOGITS);
    const lse = Math.log(LOGITS.reduce((a, x) => a + Math.exp(x), 0));
    const { ids, logp } = sampleRows(row, { temperature: 0.3, topK: 2, topP: 0.5 }, Float32Array.of(0.4));
    expect(logp[0]).toBeCloseTo(LOGITS[ids[0]] - lse, 6);
  });

  it('rows are independent: each is picked with its own uniform', () => {
    const rand = mulberry32(3);
    const V = 50;
    const rows = Float32Array.from({ length: 4 * V }, () => rand() * 6);
    const u = Float32Array.of(0.1, 0.9, 0.3, 0.6);
    const o: SamplingOptions = { temperature: 0.8, topK: 10, topP: 0.9 };
    const together = sampleRows(rows, o, u);
    for (let r = 0; r < 4; r++) {
      const alone = sampleRows(rows.subarray(r * V, (r + 1) * V), o, u.subarray(r, r + 1));
      expect(together.ids[r]).toBe(alone.ids[0]);
      expect(together.logp[r]).toBe(alone.logp[0]);
    }
  });

  it('a uniform of exactly 1 (an f32-rounded draw) picks the last kept token', () => {
    const row = Float32Array.of(2, 0, 1, -1);
    expect(sampleRows(row, { temperature: 1, topK: 3, topP: 1 }, Float32Array.of(1)).ids[0]).toBe(2);
  });

  it('refuses settings no pick can follow, saying what to use instead', () => {
    const row = Float32Array.of(1, 2);
    const u = Float32Array.of(0.5);
    expect(() => sampleRows(row, { temperature: 1, topK: 0, topP: 0 }, u)).toThrow(/topP 0 is outside \(0, 1\]/);
    expect(() => sampleRows(row, { temperature: 1, topK: -1, topP: 1 }, u)).toThrow(/topK -1/);
    expect(() => sampleRows(row, { temperature: 1, topK: 0, topP: 1 }, Float32Array.of(1.5))).toThrow(/uniform 1.5 is outside/);
    expect(() => sampleRows(row, { temperature: NaN, topK: 0, topP: 1 }, u)).toThrow(/NaN/);
  });
});
