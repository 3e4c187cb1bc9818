import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../rl/records';
import { phaseAfter, recordAnnouncement } from './live';

const record = (r: object) => r as RunRecord;

describe('the live run', () => {
  it('announces training steps and evaluations, nothing else', () => {
    expect(recordAnnouncement(record({ kind: 'train_step', step: 3, version: 2 }))).toBe('Training step 3 done; the policy is now version 3.');
    expect(recordAnnouncement(record({ kind: 'train_step', step: 3, version: 2, skipped: 'no samples' }))).toBe('Training step 3 skipped: no samples');
    expect(recordAnnouncement(record({ kind: 'evaluation', step: 4, scores: { accuracy: 0.5 }, perProblem: [{}, {}], failed: 1 }))).toBe(
      'Evaluation at step 4: score 0.50, 1 of 2 problems failed and left out.',
    );
    expect(recordAnnouncement(record({ kind: 'evaluation', scores: {}, perProblem: [] }))).toBe('Evaluation at step 0: no score.');
    expect(recordAnnouncement(record({ kind: 'interaction' }))).toBeNull();
  });

  it("follows the loop's status, except on an idle page", () => {
    expect(phaseAfter('running', 'paused')).toBe('paused');
    expect(phaseAfter('paused', 'running')).toBe('running');
    expect(phaseAfter('running', 'stopping')).toBe('stopping');
    expect(phaseAfter('loading', 'finished')).toBe('loading');
    expect(phaseAfter('idle', 'running')).toBe('idle');
  });
});
