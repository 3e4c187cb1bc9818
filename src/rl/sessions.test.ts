import { describe, it, expect } from 'vitest';
import { InvalidArgumentError } from './errors';
import type { ChatMessage } from './messages';
import { SessionTracker, type TurnRequest } from './sessions';

const u = (content: string): ChatMessage => ({ role: 'user', content });
const a = (content: string): ChatMessage => ({ role: 'assistant', content });

function setup(timeout = 1000) {
  let now = 0;
  const tracker = new SessionTracker<string>({ idleTimeoutMs: timeout, now: () => now });
  const req = (session: string, turnType: 'main' | 'side', messages: ChatMessage[], extra: Partial<TurnRequest> = {}) =>
    ({ session, turnType, messages, version: 0, ...extra }) satisfies TurnRequest;
  return { tracker, req, at: (t: number) => (now = t) };
}

describe('SessionTracker', () => {
  it('pairs main turn t with the last message of the next main request', () => {
    const { tracker, req } = setup();
    const first = tracker.observe(req('s', 'main', [u('q1')]), 'r1');
    expect(first.turn.turn).toBe(1);
    expect(first.closed).toEqual([]);
    const second = tracker.observe(req('s', 'main', [u('q1'), a('r1'), u('redo')]), 'r2');
    expect(second.closed).toHaveLength(1);
    expect(second.closed[0]).toMatchObject({ session: 's', turn: 1, response: 'r1', nextState: u('redo'), closedBy: 'next-request' });
    expect(tracker.pendingTurns().map((t) => t.turn)).toEqual([2]);
  });

  it('takes back a turn a stopped server left waiting: the next main request closes it, and its idle time starts at the restore', () => {
    let now = 0;
    const tracker = new SessionTracker<string>({ idleTimeoutMs: 1000, now: () => now, turnsSoFar: new Map([['s', 2]]) });
    now = 50_000;
    tracker.restore(
      { session: 's', turn: 2, turnType: 'main', version: 1, messages: [u('q1'), a('r1'), u('q2')], response: 'r2', at: 10 },
      { turns: 2, mainTurns: 2 },
    );
    now = 50_900;
    expect(tracker.sweep()).toEqual({ closed: [], ended: [] });
    const next = tracker.observe({ session: 's', turnType: 'main', messages: [u('q2'), a('r2'), u('no, redo it')], version: 1, done: true }, 'r3');
    expect(next.turn.turn).toBe(3);
    expect(next.closed.map((c) => [c.turn, c.response, c.nextState?.content, c.closedBy])).toEqual([
      [2, 'r2', 'no, redo it', 'next-request'],
      [3, 'r3', undefined, 'session-end'],
    ]);
    expect(next.ended).toEqual([{ session: 's', reason: 'explicit', at: 50_900, turns: 3, mainTurns: 3 }]);
  });

  it('never makes side turns pending, and side requests are not next states', () => {
    const { tracker, req } = setup();
    tracker.observe(req('s', 'main', [u('q1')]), 'main1');
    const side1 = tracker.observe(req('s', 'side', [u('summarize memory')]), 'side1');
    const side2 = tracker.observe(req('s', 'side', [u('background lookup')]), 'side2');
    expect([side1.turn.turn, side2.turn.turn]).toEqual([2, 3]);
    expect([...side1.closed, ...side2.closed]).toEqual([]);
    expect(tracker.pendingTurns().map((t) => t.response)).toEqual(['main1']);
    const next = tracker.observe(req('s', 'main', [u('q1'), a('main1'), u('thanks')]), 'main2');
    expect(next.turn.turn).toBe(4);
    expect(next.closed.map((c) => [c.turn, c.response, c.nextState?.content])).toEqual([[1, 'main1', 'thanks']]);
  });

  it('closes the last turn without a next state when the request says done', () => {
    const { tracker, req } = setup();
    tracker.observe(req('s', 'main', [u('q1')]), 'r1');
    const done = tracker.observe(req('s', 'main', [u('q1'), a('r1'), u('bye')], { done: true }), 'r2');
    expect(done.closed.map((c) => [c.turn, c.nextState?.content ?? null, c.closedBy])).toEqual([
      [1, 'bye', 'next-request'],
      [2, null, 'session-end'],
    ]);
    expect(done.ended).toEqual([{ session: 's', reason: 'explicit', at: 0, turns: 2, mainTurns: 2 }]);
    expect(tracker.openSessions()).toEqual([]);
  });

  it('ends a session explicitly; ending an unknown session does nothing', () => {
    const { tracker, req } = setup();
    tracker.observe(req('s', 'main', [u('q1')]), 'r1');
    const events = tracker.endSession('s');
    expect(events.closed.map((c) => [c.turn, c.nextState, c.closedBy])).toEqual([[1, null, 'session-end']]);
    expect(tracker.endSession('s')).toEqual({ closed: [], ended: [] });
    expect(tracker.endSession('never-seen')).toEqual({ closed: [], ended: [] });
  });

  it("closes the last turn with the user's final word when the session ends with one", () => {
    const { tracker, req } = setup();
    tracker.observe(req('s', 'main', [u('q1')]), 'r1');
    const final = u('perfect, thanks! HOMEWORK_DONE');
    const events = tracker.endSession('s', final);
    expect(events.closed.map((c) => [c.turn, c.nextState, c.closedBy])).toEqual([[1, final, 'session-end']]);
    expect(events.closed[0].nextState).not.toBe(final);
    expect(events.ended.map((e) => e.reason)).toEqual(['explicit']);
  });

  it('times out a session that never continues, with the injected clock', () => {
    const { tracker, req, at } = setup(1000);
    tracker.observe(req('s', 'main', [u('q1')]), 'r1');
    expect(tracker.nextDeadline()).toBe(1000);
    at(999);
    expect(tracker.sweep()).toEqual({ closed: [], ended: [] });
    at(1000);
    const events = tracker.sweep();
    expect(events.closed.map((c) => [c.turn, c.nextState, c.closedBy, c.closedAt])).toEqual([[1, null, 'timeout', 1000]]);
    expect(events.ended).toEqual([{ session: 's', reason: 'timeout', at: 1000, turns: 1, mainTurns: 1 }]);
    expect(tracker.nextDeadline()).toBeNull();
  });

  it('treats a late reply to a timed-out session as a new start: no pairing, turn numbers go on', () => {
    const { tracker, req, at } = setup(1000);
    tracker.observe(req('s', 'main', [u('q1')]), 'r1');
    at(5000);
    const late = tracker.observe(req('s', 'main', [u('q1'), a('r1'), u('late reply')]), 'r2');
    // the request itself runs the timeout first: turn 1 closes without the late reply
    expect(late.closed.map((c) => [c.turn, c.nextState, c.closedBy])).toEqual([[1, null, 'timeout']]);
    expect(late.ended.map((e) => e.reason)).toEqual(['timeout']);
    expect(late.turn.turn).toBe(2);
    expect(tracker.pendingTurns().map((t) => t.turn)).toEqual([2]);
  });

  it('starts an unknown session without pairing its last message', () => {
    const { tracker, req } = setup();
    const first = tracker.observe(req('new', 'main', [u('q0'), a('old answer'), u('reply to something we never saw')]), 'r');
    expect(first.closed).toEqual([]);
    expect(first.turn.turn).toBe(1);
  });

  it('sweeps other sessions on every request', () => {
    const { tracker, req, at } = setup(1000);
    tracker.observe(req('a', 'main', [u('q')]), 'ra');
    at(600);
    tracker.observe(req('b', 'main', [u('q')]), 'rb');
    at(1200);
    const events = tracker.observe(req('b', 'side', [u('side')]), 'side');
    expect(events.closed.map((c) => c.session)).toEqual(['a']);
    expect(tracker.openSessions()).toEqual(['b']);
  });

  it('side activity keeps a session alive', () => {
    const { tracker, req, at } = setup(1000);
    tracker.observe(req('s', 'main', [u('q')]), 'r');
    at(900);
    tracker.observe(req('s', 'side', [u('memory')]), 'm');
    at(1500);
    expect(tracker.sweep().closed).toEqual([]);
    expect(tracker.nextDeadline()).toBe(1900);
  });

  it('closes the pending turn without a next state when a main request has no messages', () => {
    const { tracker, req } = setup();
    tracker.observe(req('s', 'main', [u('q')]), 'r1');
    const empty = tracker.observe(req('s', 'main', []), 'r2');
    expect(empty.closed.map((c) => [c.turn, c.nextState, c.closedBy])).toEqual([[1, null, 'next-request']]);
  });

  it('keeps the version and copies the messages', () => {
    const { tracker, req } = setup();
    const messages = [u('q')];
    tracker.observe(req('s', 'main', messages, { version: 7 }), 'r1');
    messages[0].content = 'mutated';
    messages.push(u('later'));
    const next = tracker.observe(req('s', 'main', [u('q'), a('r1'), u('next')], { version: 8 }), 'r2');
    expect(next.closed[0]).toMatchObject({ version: 7, messages: [u('q')] });
    expect(next.turn.version).toBe(8);
  });

  it('refuses a non-positive timeout', () => {
    expect(() => new SessionTracker({ idleTimeoutMs: 0 })).toThrow(InvalidArgumentError);
    expect(() => new SessionTracker({ idleTimeoutMs: Number.NaN })).toThrow(InvalidArgumentError);
  });
});
