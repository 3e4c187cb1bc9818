import { describe, expect, it } from 'vitest';
import { formatDuration, outcomeText, runOutcome } from './run-outcome';

const at = (ts: number, kind: 'train_step' | 'evaluation', values: Record<string, number | null> = {}) => ({ kind, ts, values });

describe('what a run came to', () => {
  it('counts steps, takes the first and last scores and the time since the run was created', () => {
    const o = runOutcome(
      [at(2_000, 'evaluation', { score: 0.125 }), at(5_000, 'train_step'), at(9_000, 'train_step'), at(12_500, 'evaluation', { score: 0.25 })],
      1_000,
    );
    expect(o).toEqual({ steps: 2, score: 0.25, baseScore: 0.125, durationMs: 11_500 });
    expect(outcomeText(o, 8)).toBe('2 of 8 steps · score 0.25 (0.13 before training) · 12 s');
  });

  it('reads a tool-call accuracy, and says when there is no score or nothing yet', () => {
    expect(runOutcome([at(10, 'evaluation', { accuracy: 0.5 })], 0)).toMatchObject({ score: 0.5, baseScore: 0.5 });
    expect(outcomeText(runOutcome([at(3_000, 'train_step')], 0))).toBe('1 step · no score · 3 s');
    expect(runOutcome([], 0)).toEqual({ steps: 0, score: null, baseScore: null, durationMs: null });
    // Before any step, the one score is the base: no "before training" beside itself.
    expect(outcomeText(runOutcome([at(10, 'evaluation', { score: 0.2 })], 0), 1)).toBe('0 of 1 step · score 0.20 · 0 s');
  });

  it('writes durations as a glance needs them', () => {
    expect([400, 59_400, 200_000, 3_600_000, 7_500_000].map(formatDuration)).toEqual(['0 s', '59 s', '3 min 20 s', '1 h', '2 h 5 min']);
  });
});
