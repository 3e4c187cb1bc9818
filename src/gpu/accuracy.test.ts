/**
 * The weight formats against the f32 model on the real checkpoints (CPU backend, which stores and
 * decodes the same packed values the kernels read): teacher-forced top-1 agreement and mean
 * |d log p| on the f32 model's own samples. The floors sit under the figures measured here
 * (docs/bench/accuracy.json), so a regression in a codec or in the kernels' packing fails them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { agreement, fakeQuantized, sampledSequences } from './accuracy';
import { CpuBackend } from './cpu/backend';
import { Policy } from './policy';
import type { ScoreItem } from './score';
import { DirSource } from '../models/source-node';

const PROMPTS = ['Once upon a time', 'The little dog', 'One day, a girl named Lily', 'Tom had a red ball'];

describe.each([
  // [model, q4 floor]: f16 and q8 meet the targets (99%, 98%) on both; 4 bits on models of
  // 260K and 656K parameters do not reach its 90% (89% and 83% measured).
  ['stories260K', 0.82],
  ['TinyStories-656K', 0.78],
])('%s: weight formats against f32', (name, q4Floor) => {
  let reference: Policy;
  let items: ScoreItem[];
  const dir = dataPath(`models/${name}`);

  beforeAll(async () => {
    reference = await Policy.load(new DirSource(dir), new CpuBackend(), { weightFormat: 'f32' });
    items = await sampledSequences(
      reference.model,
      PROMPTS.map((p) => reference.promptIds(p)),
      8,
      48,
    );
  });

  const measure = async (weightFormat: 'f16' | 'q8' | 'q4') =>
    agreement(reference.model, (await Policy.load(new DirSource(dir), new CpuBackend(), { weightFormat })).model, items);

  it('f16: top-1 agreement >= 99%, mean |d log p| < 0.005', async () => {
    const a = await measure('f16');
    expect(a.positions).toBe(8 * 48);
    expect(a.top1Agreement).toBeGreaterThanOrEqual(0.99);
    expect(a.meanAbsLogpDiff).toBeLessThan(0.005);
  });

  it('q8: top-1 agreement >= 98%, mean |d log p| < 0.05', async () => {
    const a = await measure('q8');
    expect(a.top1Agreement).toBeGreaterThanOrEqual(0.98);
    expect(a.meanAbsLogpDiff).toBeLessThan(0.05);
  });

  it(`q4 (NF4, embedding in q8): top-1 agreement >= ${q4Floor * 100}%, and NF4 beats Q4_0 of the same bytes`, async () => {
    const a = await measure('q4');
    expect(a.top1Agreement).toBeGreaterThanOrEqual(q4Floor);
    const nf4 = await agreement(reference.model, await fakeQuantized(reference.model, 'q4'), items);
    const int4 = await agreement(reference.model, await fakeQuantized(reference.model, 'int4'), items);
    expect(nf4.meanAbsLogpDiff).toBeLessThan(int4.meanAbsLogpDiff);
  });
});
