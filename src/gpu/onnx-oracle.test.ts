/**
 * Oracle 2: the engine's logits against onnxruntime on the same tiny random weights (the ONNX
 * graph of the fixtures, itself checked against an independent float64 forward).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { OrtOracle } from '../../test/fixtures/ort-oracle';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { CpuBackend } from './cpu/backend';
import { leftPad } from './generate';
import { Policy } from './policy';
import { DirSource } from '../models/source-node';

function maxRelErr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let err = 0;
  let scale = 1e-6;
  for (let i = 0; i < a.length; i++) {
    err = Math.max(err, Math.abs(a[i] - b[i]));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return err / scale;
}

const oracles: OrtOracle[] = [];
afterAll(async () => {
  for (const o of oracles) await o.close();
});

describe.each([
  { family: 'llama' as const, tied: true },
  { family: 'qwen2' as const, tied: false },
  { family: 'qwen3' as const, tied: false },
])('engine (CPU) vs onnxruntime on the tiny $family fixture', (opts) => {
  it('agrees on every position of a chat prompt, a left-padded batch and KV-cache decoding (1e-4)', async () => {
    const { dir } = await tinyModel({ ...opts, onnx: true });
    const oracle = await OrtOracle.open(dir);
    oracles.push(oracle);
    const policy = await Policy.load(new DirSource(dir), new CpuBackend());
    const model = policy.model;
    const a = policy.promptIds([{ role: 'user', content: 'What is 12 * 7?' }]);
    const b = policy.promptIds('Hi there');
    expect(a.length).toBeGreaterThan(b.length);

    // A left-padded batch: the engine's layout; ORT gets the same mask and positions.
    const { ids, T, padLeft } = leftPad([a, b], 0);
    const cache = model.createCache(2, T + 2);
    const hidden = model.forward({ ids, B: 2, T, start: 0, padLeft }, cache);
    const rows = Int32Array.from({ length: 2 * T }, (_, i) => i);
    const engine = await model.backend.read(model.logits(hidden, rows));
    const V = model.config.vocabSize;
    const rowsOf = (seq: number[], pad: number) => [...Array(pad).fill(0), ...seq];
    const ort = await oracle.run([rowsOf(a, 0), rowsOf(b, padLeft[1])], {
      mask: [Array(T).fill(1), [...Array(padLeft[1]).fill(0), ...Array(b.length).fill(1)]],
      positions: [a.map((_, i) => i), [...Array(padLeft[1]).fill(0), ...b.map((_, i) => i)]],
    });
    for (let s = 0; s < 2; s++) {
      for (let t = padLeft[s]; t < T; t++) {
        expect(maxRelErr(engine.subarray((s * T + t) * V, (s * T + t + 1) * V), ort.logits[s][t])).toBeLessThan(1e-4);
      }
    }

    // Two decode steps through the cache match ORT's full forward over the longer sequence.
    let start = T;
    const seq = [...a];
    for (const next of [17, 42]) {
      seq.push(next);
      const h = model.forward({ ids: Int32Array.from([next, next]), B: 2, T: 1, start, padLeft }, cache);
      const got = await model.backend.read(model.logits(h, Int32Array.from([0])));
      const full = await oracle.run([seq]);
      expect(maxRelErr(got, full.logits[0][seq.length - 1])).toBeLessThan(1e-4);
      start++;
    }
  });
});
