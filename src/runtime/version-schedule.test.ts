import { describe, expect, it } from 'vitest';
import { VersionSchedule } from './version-schedule';

describe('VersionSchedule', () => {
  it('answers the first W sessions with the start version, then each by the batches filled up to i − W', () => {
    const s = new VersionSchedule<string>({ window: 2, first: 0, startVersion: 0, lastVersion: 5 });
    expect([0, 1].map((i) => s.versionFor(i))).toEqual([0, 0]);
    // Session 2 waits for session 0.
    expect(s.versionFor(2)).toBeUndefined();
    expect(s.finish(0, 'a')).toEqual([{ index: 0, results: 'a' }]);
    s.flushed(0, 0);
    expect(s.versionFor(2)).toBe(0);
    expect(s.versionFor(3)).toBeUndefined();
    s.finish(1, 'b');
    s.flushed(1, 1);
    expect(s.versionFor(3)).toBe(1);
  });

  it('flushes finished sessions only in index order, whatever order they finish in', () => {
    const s = new VersionSchedule<string>({ window: 3, first: 10, startVersion: 2, lastVersion: 9 });
    expect(s.finish(12, 'c')).toEqual([]);
    expect(s.finish(11, 'b')).toEqual([]);
    expect(s.finish(10, 'a').map((r) => r.index)).toEqual([10, 11, 12]);
    expect(() => s.flushed(11, 0)).toThrow(/flushed before session 10/);
    s.flushed(10, 1);
    s.flushed(11, 1);
    s.flushed(12, 3);
    expect([13, 14, 15].map((i) => s.versionFor(i))).toEqual([3, 3, 5]);
  });

  it('admits no session beyond the W − 1 after the one that filled the last batch, and is drained once they are flushed', async () => {
    const s = new VersionSchedule<null>({ window: 2, first: 0, startVersion: 0, lastVersion: 1 });
    const waiting = s.admit(3);
    s.finish(0, null);
    s.flushed(0, 0);
    s.finish(1, null);
    s.flushed(1, 1);
    // Session 1 filled the last batch: session 2 still runs, session 3 never starts.
    expect(await waiting).toBeNull();
    expect(s.versionFor(2)).toBe(0);
    expect(s.drained).toBe(false);
    s.finish(2, null);
    s.flushed(2, 1);
    expect(s.drained).toBe(true);
  });

  it('cancel() releases every waiting admission with null', async () => {
    const s = new VersionSchedule<null>({ window: 1, first: 0, startVersion: 0, lastVersion: 4 });
    const waiting = s.admit(5);
    s.cancel();
    expect(await waiting).toBeNull();
  });
});
