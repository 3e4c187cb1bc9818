import { describe, expect, it } from 'vitest';
import { ComparisonQueue, comparisonSetups } from './comparison';
import { defaultSetup, toRunConfig } from './setup';

describe('comparing the methods', () => {
  it('makes one runnable setup per method that differ only in the method and its votes and weights', () => {
    const setup = defaultSetup();
    setup.preset.optimizer.lr = 2e-3;
    setup.preset.batch.size = 4;
    const setups = comparisonSetups(setup);
    expect(setups.map((s) => s.method)).toEqual(['binary', 'opd', 'combined']);
    expect(setups.map((s) => s.label)).toEqual(['storyteller comparison · Binary RL', 'storyteller comparison · OPD', 'storyteller comparison · Combined']);
    for (const s of setups) {
      expect(s.preset.method).toBe(s.method);
      expect(s.preset.optimizer.lr).toBe(2e-3);
      expect(s.preset.batch.size).toBe(4);
      expect(s.seed).toBe(setup.seed);
      expect(() => toRunConfig(s)).not.toThrow();
    }
    expect(setups[0].preset.advantage.weights).toMatchObject({ opd: 0 });
    expect(setups[1].preset.advantage.weights).toMatchObject({ binary: 0 });
  });
});

describe('ComparisonQueue', () => {
  it('hands out one setup per method in turn, tells each run the runs before it, and ends after the last', () => {
    const queue = new ComparisonQueue();
    expect(queue.active).toBe(false);
    expect(queue.next()).toBeNull();
    const first = queue.begin(defaultSetup());
    expect(queue.active).toBe(true);
    expect(first.method).toBe('binary');
    expect(queue.add('run-a')).toEqual([]);
    expect(queue.next()?.method).toBe('opd');
    expect(queue.add('run-b')).toEqual(['run-a']);
    expect(queue.next()?.method).toBe('combined');
    expect(queue.add('run-c')).toEqual(['run-a', 'run-b']);
    expect(queue.next()).toBeNull();
    expect(queue.active).toBe(false);
  });

  it('stops handing out setups once ended', () => {
    const queue = new ComparisonQueue();
    queue.begin(defaultSetup());
    queue.end();
    expect(queue.active).toBe(false);
    expect(queue.next()).toBeNull();
  });
});
