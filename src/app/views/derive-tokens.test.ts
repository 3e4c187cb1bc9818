import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../rl/records';
import { clipState } from '../../rl/ppo';
import { advantageOf, advantageRange, tokenTable } from './derive-tokens';
import { LOG } from '../../../test/support/views/derive-log';

describe('tokenTable', () => {
  const table = tokenTable(LOG, 's0', 1, { epsLow: 0.2, epsHigh: 0.28 })!;

  it('describes the turn', () => {
    expect(table).toMatchObject({
      turnType: 'main',
      version: 0,
      rFinal: 1,
      hint: 'Be brief please',
      hintAccepted: true,
      trainable: true,
      trainedAt: 1,
    });
  });

  it.each([
    // index, display, student, teacher, opd, binary, combined, ratio, clip
    [0, 'Hi', -1, -0.5, 0.5, 1, 1.5, Math.exp(0.5), 'high'], // A > 0, 1.6487 > 1.28
    [1, ',', -2, -2.5, -0.5, 1, 0.5, Math.exp(-0.1), 'none'], // A > 0, ratio went down
    [2, ' there', -0.5, -0.5, 0, 1, 1, 1, 'none'],
  ] as const)('token %i', (i, display, student, teacher, opd, binary, combined, ratio, clip) => {
    const r = table.rows[i];
    expect(r.display).toBe(display);
    expect(r.student).toBe(student);
    expect(r.teacher).toBe(teacher);
    expect(r.opd).toBeCloseTo(opd, 12);
    expect(r.binary).toBe(binary);
    expect(r.combined).toBe(combined);
    expect(r.ratio).toBeCloseTo(ratio, 12);
    expect(r.clip).toBe(clip);
  });

  it('uses w_binary and leaves missing signals null', () => {
    const t = tokenTable(LOG, 's0', 1, { epsLow: 0.2, epsHigh: 0.28, weights: { binary: 0.5, opd: 1 } })!;
    expect(t.rows[0].binary).toBe(0.5);
    const untrained = tokenTable(LOG, 's0', 3, { epsLow: 0.2, epsHigh: 0.28 })!;
    expect(untrained.rows[0]).toMatchObject({ text: '#1', teacher: null, opd: null, binary: null, combined: null, ratio: null, clip: null });
    expect(untrained.trainedAt).toBeNull();
    const rejected = tokenTable(LOG, 's1', 1, { epsLow: 0.2, epsHigh: 0.28 })!;
    expect(rejected.rows.map((r) => [r.teacher, r.binary, r.combined, r.clip])).toEqual([
      [null, 0, 0, 'none'],
      [null, 0, 0, 'none'],
    ]);
    expect(tokenTable(LOG, 'nope', 1, { epsLow: 0.2, epsHigh: 0.28 })).toBeNull();
  });

  it('shows what the step trained: the logged advantages, OPD re-based on the old policy', () => {
    // The trainer's old log-probs were below the rollout's, so A_OPD grew by as much.
    const rebased = LOG.map((r) =>
      r.kind === 'token_update' && r.session === 's0' ? { ...r, before: [-1.25, -2.25, -0.625], advantages: [1.75, 0.75, 1.125] } : r,
    );
    const t = tokenTable(rebased, 's0', 1, { epsLow: 0.2, epsHigh: 0.28 })!;
    expect(t.rows.map((r) => r.combined)).toEqual([1.5, 0.5, 1]);
    expect(t.rows.map((r) => r.trained)).toEqual([1.75, 0.75, 1.125]);
    expect(t.rows.map((r) => r.opd)).toEqual([0.5, -0.5, 0]);
    expect(t.rows.map((r) => r.opdTrained)).toEqual([0.75, -0.25, 0.125]);
    expect(t.rows.map((r) => advantageOf(r, 'combined'))).toEqual([1.75, 0.75, 1.125]);
    // Ratios exp(after - before): 2.01 (clipped high), 1.16 and 1.13 (inside the band).
    expect(t.rows.map((r) => r.clip)).toEqual(['high', 'none', 'none']);
    // A log without the field trained perToken, and OPD against the rollout.
    expect(table.rows.map((r) => [r.trained, r.opdTrained])).toEqual([
      [1.5, 0.5],
      [0.5, -0.5],
      [1, 0],
    ]);
  });

  it('shows a clipped A_OPD (top-k hint selection) as judged and as trained', () => {
    const clipped = LOG.map((r): RunRecord => {
      if (r.kind === 'judge_result' && r.judge === 'hint' && r.session === 's0') return { ...r, teacherLogp: [0.5, -4.5, -0.5] };
      if (r.kind === 'sample' && r.session === 's0') return { ...r, perToken: [2, 0, 1], opdWeight: 1, opdClip: { clip: 1, teacherLogp: [0.5, -4.5, -0.5] } };
      if (r.kind === 'token_update' && r.session === 's0') return { ...r, before: [-1.25, -2.25, -0.625], advantages: [2, 0, 1.125] };
      return r;
    });
    const t = tokenTable(clipped, 's0', 1, { epsLow: 0.2, epsHigh: 0.28 })!;
    // Teacher minus rollout: 1.5, -2.5, 0 -> clipped 1, -1, 0; minus the trainer's old: 1.75, -2.25, 0.125 -> 1, -1, 0.125.
    expect(t.rows.map((r) => r.opd)).toEqual([1, -1, 0]);
    expect(t.rows.map((r) => r.opdTrained)).toEqual([1, -1, 0.125]);
    expect(t.opdClip).toBe(1);
    expect(table.opdClip).toBe(0);
  });

  it('gives the advantage and the scale of each kind', () => {
    expect(table.rows.map((r) => advantageOf(r, 'opd'))).toEqual([0.5, -0.5, 0]);
    expect(advantageRange(table.rows, 'opd')).toBe(0.5);
    expect(advantageRange(table.rows, 'combined')).toBe(1.5);
    expect(advantageRange(table.rows, 'binary')).toBe(1);
  });
});

describe('clipState', () => {
  it.each([
    [1, 1.3, 'high'],
    [1, 1.28, 'none'], // the band's edge is inside
    [1, 0.5, 'none'], // moved against a positive advantage: not clipped
    [-1, 0.79, 'low'],
    [-1, 0.8, 'none'],
    [-1, 1.5, 'none'],
    [0, 2, 'none'],
  ] as const)('A=%s ratio=%s -> %s', (a, ratio, want) => {
    expect(clipState(a, ratio, 0.2, 0.28)).toBe(want);
  });
});
