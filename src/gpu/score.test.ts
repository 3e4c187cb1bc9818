import { describe, expect, it } from 'vitest';
import { checkModel, tinyConfig } from '../../test/random-model';
import { CpuBackend } from './cpu/backend';
import { generate } from './generate';
import { score, topKIds } from './score';

describe('topKIds', () => {
  it('the k largest, largest first, equal values in id order', () => {
    const row = Float32Array.from([0.5, 3, -1, 3, 2, NaN, 7]);
    expect(Array.from(topKIds(row, 0, row.length, 3))).toEqual([6, 1, 3]);
    expect(Array.from(topKIds(row, 0, row.length, 4))).toEqual([6, 1, 3, 4]);
    // A row inside a larger block.
    const block = Float32Array.from([9, 9, 9, 1, 5, 3]);
    expect(Array.from(topKIds(block, 3, 3, 2))).toEqual([1, 2]);
  });

  it('k larger than the vocabulary gives every id', () => {
    expect(Array.from(topKIds(Float32Array.from([1, 2]), 0, 2, 5))).toEqual([1, 0]);
  });

  it('every id at once: largest first, ties by id, NaN left out, as k at a time orders them', () => {
    const row = Float32Array.from([0.5, 3, -1, 3, 2, NaN, 7, -Infinity, 0.5]);
    const block = Float32Array.from([...[4, 4], ...row]);
    expect(Array.from(topKIds(block, 2, row.length, row.length))).toEqual([6, 1, 3, 4, 0, 8, 2, 7]);
    expect(Array.from(topKIds(block, 2, row.length, Number.MAX_SAFE_INTEGER))).toEqual([6, 1, 3, 4, 0, 8, 2, 7]);
    // The same order as k at a time on a row without NaN.
    const clean = Float32Array.from([0.5, 3, -1, 3, 2, 7, 0.5]);
    expect(Array.from(topKIds(clean, 0, 7, 7))).toEqual(Array.from(topKIds(clean, 0, 7, 6)).concat([2]));
  });
});

describe('score with topK', () => {
  const be = new CpuBackend();
  const model = checkModel(be, tinyConfig('qwen3'), 7);
  const V = model.config.vocabSize;
  const prompt = [1, 5, 9];
  const completion = [4, 20, 3, 11];

  it("each position's set is the k most likely next tokens, found by scoring every token there", async () => {
    const [s] = await score(model, [{ prompt, completion }], { topK: 3 });
    expect(s.topIds).toHaveLength(completion.length);
    for (let j = 0; j < completion.length; j++) {
      const prefix = [...prompt, ...completion.slice(0, j)];
      // log p(v | prefix) for every v, one single-token completion each: no logits read back.
      const all = await score(
        model,
        Array.from({ length: V }, (_, v) => ({ prompt: prefix, completion: [v] })),
      );
      const lp = all.map((x, v) => ({ v, lp: x.logprobs[0] }));
      lp.sort((a, b) => b.lp - a.lp || a.v - b.v);
      expect(new Set(s.topIds![j])).toEqual(new Set(lp.slice(0, 3).map((x) => x.v)));
    }
  });

  it('the log-probs do not change when top-k sets are asked for, across micro-batches too', async () => {
    const items = [
      { prompt, completion },
      { prompt: [2, 3], completion: [7, 8, 9] },
    ];
    const plain = await score(model, items);
    const withTop = await score(model, items, { topK: 2, maxBatchTokens: 7 });
    withTop.forEach((s, i) => {
      expect(Array.from(s.logprobs)).toEqual(Array.from(plain[i].logprobs));
      expect(s.topIds).toHaveLength(items[i].completion.length);
      s.topIds!.forEach((ids) => expect(ids).toHaveLength(2));
    });
    expect(plain[0].topIds).toBeUndefined();
  });

  it('refuses a top-k of 0', async () => {
    await expect(score(model, [{ prompt, completion }], { topK: 0 })).rejects.toThrow(/topK is 0/);
  });
});

describe('score with gather (the top-k OPD term)', () => {
  const be = new CpuBackend();
  const model = checkModel(be, tinyConfig('qwen3'), 7);
  const prompt = [1, 5, 9];
  const completion = [4, 20, 3];

  it('gives log p of each asked-for id at each position: what scoring that id as the next token gives, across micro-batches', async () => {
    const sets = [[4, 30, 0], [20], [7, 3]];
    const items = [
      { prompt, completion },
      { prompt: [2, 3], completion: [7, 8] },
    ];
    const [s, other] = await score(model, items, { gather: [sets, undefined], maxBatchTokens: 7 });
    expect(other.gathered).toBeUndefined();
    for (const [t, set] of sets.entries()) {
      const prefix = completion.slice(0, t);
      const direct = await score(
        model,
        set.map((id) => ({ prompt, completion: [...prefix, id] })),
      );
      set.forEach((_, v) => expect(s.gathered![t][v]).toBeCloseTo(direct[v].logprobs[t], 5));
    }
  });

  it('refuses a set per token missing, and an id outside the vocabulary', async () => {
    await expect(score(model, [{ prompt, completion }], { gather: [[[1], [2]]] })).rejects.toThrow(/2 gather sets for 3 completion tokens/);
    await expect(score(model, [{ prompt, completion }], { gather: [[[1], [2], [9999]]] })).rejects.toThrow(/outside the vocabulary/);
  });
});

describe('score at a sampling temperature', () => {
  const be = new CpuBackend();
  const model = checkModel(be, tinyConfig('llama'), 11);
  const V = model.config.vocabSize;
  const prompt = [1, 5, 9];
  const T = 0.6;

  it('gives log softmax(logits / T) of each token, computed by hand from the logits at 1', async () => {
    const completion = [4, 20, 3];
    const [atT] = await score(model, [{ prompt, completion }], { temperature: T });
    for (let j = 0; j < completion.length; j++) {
      const prefix = [...prompt, ...completion.slice(0, j)];
      // log p_1(v) = l_v - lse(l): the logits up to a constant, which the softmax at T cancels.
      const at1 = (
        await score(
          model,
          Array.from({ length: V }, (_, v) => ({ prompt: prefix, completion: [v] })),
        )
      ).map((x) => x.logprobs[0]);
      const max = Math.max(...at1.map((lp) => lp / T));
      const lse = max + Math.log(at1.reduce((sum, lp) => sum + Math.exp(lp / T - max), 0));
      const byHand = at1[completion[j]] / T - lse;
      expect(atT.logprobs[j]).toBeCloseTo(byHand, 5);
      expect(Math.abs(byHand - at1[completion[j]])).toBeGreaterThan(1e-3);
    }
  });

  it('agrees with the log-probs generate records while it samples at T, and not with scoring at 1', async () => {
    const [g] = await generate(model, [prompt], { maxNewTokens: 6, sampling: { temperature: T, topK: 0, topP: 1 }, seed: 4 });
    const [atT] = await score(model, [{ prompt, completion: g.tokens }], { temperature: T });
    const [at1] = await score(model, [{ prompt, completion: g.tokens }]);
    for (let j = 0; j < g.tokens.length; j++) expect(atT.logprobs[j]).toBeCloseTo(g.logprobs[j], 5);
    expect(Math.max(...g.logprobs.map((lp, j) => Math.abs(lp - at1.logprobs[j])))).toBeGreaterThan(1e-3);
  });
});
