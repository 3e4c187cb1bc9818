import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunRecord } from '../../rl/records';
import { deviceNotice, endNotice, FLUSH_MS, phaseAfter, RecordFeed, recordAnnouncement } from './live';

const record = (r: object) => r as RunRecord;

describe('the live run', () => {
  it('announces training steps, evaluations and where a resumed run went on, nothing else', () => {
    expect(recordAnnouncement(record({ kind: 'train_step', step: 3, version: 2 }))).toBe('Training step 3 done; the policy is now version 3.');
    expect(recordAnnouncement(record({ kind: 'train_step', step: 3, version: 2, skipped: 'no samples' }))).toBe('Training step 3 skipped: no samples');
    expect(recordAnnouncement(record({ kind: 'evaluation', step: 4, scores: { accuracy: 0.5 }, perProblem: [{}, {}], failed: 1 }))).toBe(
      'Evaluation at step 4: score 0.50, 1 of 2 problems failed and left out.',
    );
    expect(recordAnnouncement(record({ kind: 'evaluation', scores: {}, perProblem: [] }))).toBe('Evaluation at step 0: no score.');
    expect(recordAnnouncement(record({ kind: 'interaction' }))).toBeNull();
    expect(recordAnnouncement(record({ kind: 'runtime_event', event: 'run_resumed', message: 'resumed at step 2 (v2) with 1 buffered sample' }))).toBe(
      'Resumed at step 2 (v2) with 1 buffered sample.',
    );
    expect(recordAnnouncement(record({ kind: 'runtime_event', event: 'paused', message: 'paused' }))).toBeNull();
  });

  it("follows the loop's status, except on an idle page", () => {
    expect(phaseAfter('running', 'paused')).toBe('paused');
    expect(phaseAfter('paused', 'running')).toBe('running');
    expect(phaseAfter('running', 'stopping')).toBe('stopping');
    expect(phaseAfter('loading', 'finished')).toBe('loading');
    expect(phaseAfter('idle', 'running')).toBe('idle');
  });
});

describe('the live run, continued', () => {
  afterEach(() => vi.useRealTimers());

  it('says how a run ended; a stop ends a method comparison', () => {
    expect(endNotice({ status: 'finished', step: 8 })).toEqual({ text: 'Run finished after 8 steps.', endsComparison: false });
    expect(endNotice({ status: 'finished', step: 1 }).text).toBe('Run finished after 1 step.');
    expect(endNotice({ status: 'stopped', step: 3 })).toEqual({ text: 'Run stopped at step 3.', endsComparison: true });
  });

  it('logs a real device loss and a recovery, not a loss the debug menu already logged', () => {
    expect(deviceNotice({ type: 'device-lost', message: 'gone' }, false).log).toEqual({ kind: 'device_lost', detail: 'GPU device lost: gone' });
    expect(deviceNotice({ type: 'device-lost', message: 'gone' }, true).log).toBeNull();
    expect(deviceNotice({ type: 'recovered', version: 4 }, true)).toMatchObject({
      text: 'Recovered from the lost device at version 4.',
      log: { kind: 'recovered' },
    });
  });

  it('hands records to the views in one batch per FLUSH_MS, after the ones the run had', () => {
    vi.useFakeTimers();
    const handed: RunRecord[][] = [];
    const feed = new RecordFeed((rs) => handed.push(rs));
    feed.reset([record({ kind: 'evaluation', n: 0 })]);
    feed.push(record({ kind: 'interaction', n: 1 }));
    feed.push(record({ kind: 'interaction', n: 2 }));
    expect(handed).toEqual([]);
    expect(feed.records()).toHaveLength(3);
    expect(feed.published()).toHaveLength(1);
    vi.advanceTimersByTime(FLUSH_MS);
    expect(handed.map((rs) => rs.length)).toEqual([3]);
    feed.push(record({ kind: 'interaction', n: 3 }));
    feed.flush();
    expect(handed.map((rs) => rs.length)).toEqual([3, 4]);
    vi.advanceTimersByTime(FLUSH_MS);
    expect(handed).toHaveLength(2);
  });
});
