import { describe, it, expect } from 'vitest';
import { SampleBuffer, type BufferableSample, type ZeroAdvantagePolicy } from './buffer';
import { InvalidArgumentError } from './errors';

const s = (session: string, turn: number, advantages: number[], judged = true, version = 0): BufferableSample => ({
  session,
  turn,
  version,
  advantages,
  judged,
});

describe('SampleBuffer batching', () => {
  it('releases a batch every N samples, oldest first, with their versions', () => {
    const buffer = new SampleBuffer({ batchSize: 3 });
    expect(buffer.add(s('a', 1, [1], true, 2)).batch).toBeNull();
    expect(buffer.add(s('b', 1, [1], true, 0)).batch).toBeNull();
    const batch = buffer.add(s('a', 2, [-1], true, 2)).batch;
    expect(batch).not.toBeNull();
    expect(batch!.index).toBe(0);
    expect(batch!.samples.map((x) => `${x.session}#${x.turn}@v${x.version}`)).toEqual(['a#1@v2', 'b#1@v0', 'a#2@v2']);
    expect(batch!.versions).toEqual([0, 2]);
    expect(batch!.trainable).toBe(3);
    expect(buffer.size).toBe(0);
    expect(buffer.add(s('c', 1, [1])).batch).toBeNull();
    expect(buffer.flush()!.index).toBe(1);
  });

  it('defaults to batches of 16', () => {
    const buffer = new SampleBuffer();
    const batches = Array.from({ length: 16 }, (_, i) => buffer.add(s('x', i + 1, [1])).batch);
    expect(batches.slice(0, 15).every((b) => b === null)).toBe(true);
    expect(batches[15]!.samples).toHaveLength(16);
  });

  it('flushes a short batch, and nothing when empty', () => {
    const buffer = new SampleBuffer({ batchSize: 4 });
    expect(buffer.flush()).toBeNull();
    buffer.add(s('a', 1, [1]));
    expect(buffer.flush()!.samples).toHaveLength(1);
    expect(buffer.flush()).toBeNull();
  });

  it('zero-advantage samples still fill batches, so training never stalls', () => {
    const buffer = new SampleBuffer({ batchSize: 2 });
    buffer.add(s('a', 1, [0, 0]));
    const batch = buffer.add(s('a', 2, [0])).batch;
    expect(batch!.samples).toHaveLength(2);
    expect(buffer.stats()).toMatchObject({ added: 2, zeroAdvantage: 2, batches: 1 });
  });

  it('trains every sample that carries a distillation term, though its advantages are all zero', () => {
    const buffer = new SampleBuffer({ batchSize: 8 });
    const term = { weight: 1 };
    const tagged = [1, 2, 3].map((turn) => buffer.add({ ...s('a', turn, [0, 0]), opdTopK: term }).sample);
    expect(tagged.map((x) => [x.trainable, x.promoted])).toEqual([
      [true, false],
      [true, false],
      [true, false],
    ]);
    // A term weighted 0 teaches nothing: the zero-advantage rule applies (promoted once per session).
    const off = [1, 2].map((turn) => buffer.add({ ...s('b', turn, [0]), opdTopK: { weight: 0 } }).sample);
    expect(off.map((x) => [x.trainable, x.promoted])).toEqual([
      [true, true],
      [false, false],
    ]);
    expect(buffer.stats()).toMatchObject({ zeroAdvantage: 2, promoted: 1, masked: 1 });
  });

  it('tags a copy and leaves the input alone', () => {
    const buffer = new SampleBuffer({ batchSize: 1 });
    const input = Object.freeze(s('a', 1, [1]));
    const { sample, batch } = buffer.add(input);
    expect(batch!.samples[0]).toBe(sample);
    expect(sample).not.toBe(input);
    expect(sample).toMatchObject({ session: 'a', turn: 1, version: 0, trainable: true, promoted: false });
    expect(input).not.toHaveProperty('trainable');
  });

  it('refuses bad settings and untagged samples', () => {
    expect(() => new SampleBuffer({ batchSize: 0 })).toThrow(InvalidArgumentError);
    expect(() => new SampleBuffer({ batchSize: 2.5 })).toThrow(InvalidArgumentError);
    const buffer = new SampleBuffer();
    expect(() => buffer.add(s('a', 1, [1], true, -1))).toThrow(InvalidArgumentError);
    expect(() => buffer.add(s('a', 1, [1], true, 1.5))).toThrow(/policy version 1.5/);
  });
});

describe('SampleBuffer zero-advantage policy', () => {
  // session, judged, advantages
  const script: [string, boolean, number[]][] = [
    ['A', true, [0, 0]], // A's first judged sample, zero
    ['A', true, [0]], // zero again
    ['A', true, [0.5, 0]], // nonzero
    ['B', false, [0]], // unjudged (no next state), zero
    ['B', true, [1]], // nonzero
    ['C', true, [-1]], // nonzero first
    ['C', true, [0]], // zero after an effective one
  ];
  const cases: [ZeroAdvantagePolicy, boolean[], boolean[], { promoted: number; masked: number }][] = [
    ['at-least-one-per-session', [true, false, true, false, true, true, false], [true, false, false, false, false, false, false], { promoted: 1, masked: 3 }],
    ['mask-all', [false, false, true, false, true, true, false], [false, false, false, false, false, false, false], { promoted: 0, masked: 4 }],
    ['train-all', [true, true, true, true, true, true, true], [false, false, false, false, false, false, false], { promoted: 0, masked: 0 }],
  ];
  it.each(cases)('%s', (policy, trainable, promoted, counts) => {
    const buffer = new SampleBuffer({ batchSize: script.length, zeroAdvantage: policy });
    const results = script.map(([session, judged, adv], i) => buffer.add(s(session, i + 1, adv, judged)));
    const samples = results[results.length - 1].batch!.samples;
    expect(results.map((r) => r.sample)).toEqual(samples);
    expect(samples.map((x) => x.trainable)).toEqual(trainable);
    expect(samples.map((x) => x.promoted)).toEqual(promoted);
    expect(buffer.stats()).toEqual({ added: 7, zeroAdvantage: 4, batches: 1, ...counts });
  });

  it('forgetting a session lets it be promoted again', () => {
    const buffer = new SampleBuffer({ batchSize: 10 });
    buffer.add(s('A', 1, [1]));
    buffer.add(s('A', 2, [0]));
    buffer.forgetSession('A');
    buffer.add(s('A', 3, [0]));
    expect(buffer.flush()!.samples.map((x) => x.promoted)).toEqual([false, false, true]);
  });
});
