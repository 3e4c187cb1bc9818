import { InvalidArgumentError } from './errors';
import { copyMessage, type ChatMessage } from './messages';

/**
 * Session bookkeeping: which request answered which, and when a turn has its next state.
 *
 * Only main-line turns become samples. The next state of main turn t is the last message of
 * the session's next main request (the user's reply or the tool result that came back), so a
 * main turn stays pending until that request arrives. Side turns (memory upkeep, background
 * queries) are numbered and logged but never pending, and they do not count as a next state.
 * A session's last turn is closed without a next state when the session ends explicitly or
 * goes idle past the timeout, so no turn waits forever.
 */

/** Main-line turns become samples; side turns never do. The one list: the type and the record checker (record-shapes.ts) use it. */
export const TURN_TYPES = ['main', 'side'] as const;
export type TurnType = (typeof TURN_TYPES)[number];

/** One request to the policy, as the client sends it. */
export interface TurnRequest {
  session: string;
  turnType: TurnType;
  /** The prompt messages; for a main request, the last one is the previous turn's next state. */
  messages: readonly ChatMessage[];
  /** The policy version that generated the response to this request. */
  version: number;
  /** The client says this is the session's last request. */
  done?: boolean;
  /**
   * The message that answers the previous main turn, when it is not the last one (an agent that
   * appends context after the user's message); default: the last message.
   */
  nextState?: ChatMessage;
}

/** A request the tracker has numbered. */
export interface ObservedTurn<R> {
  session: string;
  /** 1-based, counts main and side requests of the session; (session, turn) is unique. */
  turn: number;
  turnType: TurnType;
  version: number;
  messages: ChatMessage[];
  response: R;
  /** Clock time when the tracker saw the request. */
  at: number;
}

/** Why a pending main turn stopped waiting. */
export type CloseReason = 'next-request' | 'session-end' | 'timeout';

/** A main turn that will get no further information: ready to be judged (or not). */
export interface ClosedTurn<R> extends ObservedTurn<R> {
  /** s_{t+1}; null when the session ended (or a next request had no messages) first. */
  nextState: ChatMessage | null;
  closedBy: CloseReason;
  closedAt: number;
}

/**
 * How a session ended. 'context-full': the conversation no longer fits the policy's positions, so
 * nothing more can be answered. The one list: the type and the checkers (record-shapes.ts, storage) use it.
 */
export const SESSION_END_REASONS = ['explicit', 'timeout', 'context-full'] as const;
export type SessionEndReason = (typeof SESSION_END_REASONS)[number];

/** A session the tracker no longer follows. */
export interface SessionEnd {
  session: string;
  reason: SessionEndReason;
  at: number;
  /** Requests seen since the session (re)started, main and side. */
  turns: number;
  mainTurns: number;
}

/** What a tracker call produced. */
export interface TrackerEvents<R> {
  closed: ClosedTurn<R>[];
  ended: SessionEnd[];
}

/** The result of observe: the numbered request and whatever closed because of it. */
export interface ObserveResult<R> extends TrackerEvents<R> {
  turn: ObservedTurn<R>;
}

/** Tracker settings. */
export interface SessionTrackerOptions {
  /** A session with no request for this long is ended (default 30 minutes; Infinity = never). */
  idleTimeoutMs?: number;
  /** Milliseconds clock; injectable so tests control time. Default Date.now. */
  now?: () => number;
  /** Turns each session already had (a resumed log's), so its next turn is numbered after them. */
  turnsSoFar?: ReadonlyMap<string, number>;
}

/** Default idle timeout: long enough for a person to read an answer and reply. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60 * 1000;

interface SessionState<R> {
  pending: ObservedTurn<R> | null;
  lastActivity: number;
  turns: number;
  mainTurns: number;
}

/**
 * Pairs main turns with their next states.
 *
 * Every call first ends sessions that have been idle past the timeout, so results do not
 * depend on how often `sweep` is called. A request for a session the tracker does not know
 * (new, ended or timed out) starts it afresh: its last message pairs with nothing, because
 * the turn it answers, if any, was already closed without a next state.
 *
 * @typeParam R - the response payload kept with each turn (text, token ids, log-probs)
 */
export class SessionTracker<R> {
  private readonly sessions = new Map<string, SessionState<R>>();
  /** Survives session ends so that a resumed session never reuses a (session, turn) key. */
  private readonly turnCounters: Map<string, number>;
  private readonly idleTimeoutMs: number;
  private readonly now: () => number;

  constructor(options: SessionTrackerOptions = {}) {
    const timeout = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    if (!(timeout > 0)) {
      throw new InvalidArgumentError(
        `idleTimeoutMs is ${timeout}; use a positive number of milliseconds (Infinity never ` +
          `times out, which lets a silent session hold its last turn forever).`,
      );
    }
    this.idleTimeoutMs = timeout;
    this.now = options.now ?? Date.now;
    this.turnCounters = new Map(options.turnsSoFar ?? []);
  }

  /**
   * Records one request and its response.
   *
   * A main request closes the session's pending main turn with the request's last message as
   * next state (or with none if the request has no messages) and becomes the new pending
   * turn. A side request only counts as activity. `done` then ends the session, closing the
   * pending turn without a next state.
   */
  observe(request: TurnRequest, response: R): ObserveResult<R> {
    const events = this.sweep();
    const at = this.now();
    let state = this.sessions.get(request.session);
    if (!state) {
      state = { pending: null, lastActivity: at, turns: 0, mainTurns: 0 };
      this.sessions.set(request.session, state);
    }
    state.lastActivity = at;
    state.turns++;
    const turnNumber = (this.turnCounters.get(request.session) ?? 0) + 1;
    this.turnCounters.set(request.session, turnNumber);
    const turn: ObservedTurn<R> = {
      session: request.session,
      turn: turnNumber,
      turnType: request.turnType,
      version: request.version,
      messages: request.messages.map(copyMessage),
      response,
      at,
    };
    if (request.turnType === 'main') {
      state.mainTurns++;
      if (state.pending) {
        const last = request.nextState ?? request.messages[request.messages.length - 1];
        events.closed.push(this.close(state.pending, last ? copyMessage(last) : null, 'next-request', at));
      }
      state.pending = turn;
    }
    if (request.done) this.end(request.session, state, 'explicit', at, events);
    return { turn, ...events };
  }

  /**
   * Ends a session now, closing its pending turn with `finalState` as next state (a user's
   * last word that asks for no answer, e.g. a simulator's "thanks, done"), or without one.
   * Ending a session the tracker does not know (never seen, already ended) does nothing.
   */
  endSession(session: string, finalState?: ChatMessage, reason: Exclude<SessionEndReason, 'timeout'> = 'explicit'): TrackerEvents<R> {
    const events = this.sweep();
    const state = this.sessions.get(session);
    if (state) this.end(session, state, reason, this.now(), events, finalState ? copyMessage(finalState) : null);
    return events;
  }

  /**
   * Takes back a main turn that was waiting for its next state when a server stopped: the
   * session's next main request closes it as if the server had never stopped. `counts` are the
   * session's requests since it (re)started. Its idle time starts now, since nobody could answer
   * a stopped server.
   */
  restore(turn: ObservedTurn<R>, counts: { turns: number; mainTurns: number }): void {
    this.sessions.set(turn.session, { pending: turn, lastActivity: this.now(), ...counts });
  }

  /** Ends every session idle for at least the timeout. Call it from a timer; see nextDeadline. */
  sweep(): TrackerEvents<R> {
    const events: TrackerEvents<R> = { closed: [], ended: [] };
    const at = this.now();
    for (const [session, state] of this.sessions) {
      if (at - state.lastActivity >= this.idleTimeoutMs) this.end(session, state, 'timeout', at, events);
    }
    return events;
  }

  /** Clock time at which the next session times out, or null when none is open. */
  nextDeadline(): number | null {
    let deadline: number | null = null;
    for (const state of this.sessions.values()) {
      const t = state.lastActivity + this.idleTimeoutMs;
      if (deadline === null || t < deadline) deadline = t;
    }
    return deadline === null || !Number.isFinite(deadline) ? null : deadline;
  }

  /** Sessions currently followed. */
  openSessions(): string[] {
    return [...this.sessions.keys()];
  }

  /** Main turns still waiting for a next state. */
  pendingTurns(): ObservedTurn<R>[] {
    const out: ObservedTurn<R>[] = [];
    for (const state of this.sessions.values()) if (state.pending) out.push(state.pending);
    return out;
  }

  private close(turn: ObservedTurn<R>, nextState: ChatMessage | null, closedBy: CloseReason, closedAt: number): ClosedTurn<R> {
    return { ...turn, nextState, closedBy, closedAt };
  }

  private end(
    session: string,
    state: SessionState<R>,
    reason: SessionEndReason,
    at: number,
    events: TrackerEvents<R>,
    finalState: ChatMessage | null = null,
  ): void {
    if (state.pending) {
      events.closed.push(this.close(state.pending, finalState, reason === 'timeout' ? 'timeout' : 'session-end', at));
    }
    this.sessions.delete(session);
    events.ended.push({ session, reason, at, turns: state.turns, mainTurns: state.mainTurns });
  }
}
