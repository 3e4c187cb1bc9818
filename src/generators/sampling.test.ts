import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../gpu/random';
import { cutAtStop, drawToken, seededDraw, stopIndex } from './sampling';

describe('drawToken', () => {
  it('follows the softmax: frequencies match the probabilities', () => {
    const logits = [Math.log(0.5), Math.log(0.3), Math.log(0.2)];
    const rand = mulberry32(3);
    const counts = [0, 0, 0];
    for (let i = 0; i < 20_000; i++) counts[drawToken(logits, rand)]++;
    expect(counts[0] / 20_000).toBeCloseTo(0.5, 1);
    expect(counts[1] / 20_000).toBeCloseTo(0.3, 1);
    expect(counts[2] / 20_000).toBeCloseTo(0.2, 1);
  });

  it('keeps to the nucleus under top-p and never draws a masked token', () => {
    const logits = [Math.log(0.6), Math.log(0.25), Math.log(0.15), -Infinity];
    const rand = mulberry32(5);
    const seen = new Set<number>();
    for (let i = 0; i < 5_000; i++) seen.add(drawToken(logits, rand, 0.8));
    expect([...seen].sort()).toEqual([0, 1]);
    // top-p so small that only the most probable token is left.
    for (let i = 0; i < 100; i++) expect(drawToken(logits, rand, 0.01)).toBe(0);
  });

  it('repeats given the seed', () => {
    const logits = Float32Array.from({ length: 50 }, (_, i) => Math.sin(i));
    const a = Array.from(
      { length: 20 },
      (
        (r) => () =>
          drawToken(logits, r)
      )(mulberry32(9)),
    );
    const b = Array.from(
      { length: 20 },
      (
        (r) => () =>
          drawToken(logits, r)
      )(mulberry32(9)),
    );
    expect(a).toEqual(b);
  });
});

describe('seededDraw', () => {
  it('leaves the drawn token the only finite logit of each row, each row on its own stream', () => {
    const vocab = 6;
    const rows = Float32Array.from({ length: 2 * vocab }, (_, i) => (i % vocab) * 0.1);
    const draw = seededDraw(11, 1);
    draw(rows, vocab);
    for (let b = 0; b < 2; b++) {
      const row = rows.subarray(b * vocab, (b + 1) * vocab);
      expect(row.filter((x) => Number.isFinite(x)).length).toBe(1);
    }
    // The same seed draws the same sequence of tokens, step after step.
    const steps = (seed: number) => {
      const d = seededDraw(seed, 0.9);
      return Array.from({ length: 10 }, () => {
        const row = Float32Array.from({ length: vocab }, (_, i) => Math.cos(i));
        d(row, vocab);
        return row.findIndex((x) => Number.isFinite(x));
      });
    };
    expect(steps(4)).toEqual(steps(4));
    expect(steps(4)).not.toEqual(steps(5));
  });
});

describe('stop strings', () => {
  it('cuts before the earliest stop string, and leaves text without one alone', () => {
    expect(stopIndex('abc HOMEWORK_DONE x', ['x', 'HOMEWORK_DONE'])).toBe(4);
    expect(cutAtStop('abc HOMEWORK_DONE x', ['x', 'HOMEWORK_DONE'])).toBe('abc ');
    expect(cutAtStop('abc', ['z'])).toBe('abc');
    expect(cutAtStop('abc', undefined)).toBe('abc');
    expect(cutAtStop('abc', [''])).toBe('abc');
  });
});
