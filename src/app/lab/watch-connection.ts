/**
 * One watcher of a live server run: reads its record feed, and when the connection drops,
 * says so and reconnects with backoff from the record after the last one it has, so nothing is
 * shown twice or skipped. What cannot get better by retrying (a wrong key, a bad record, a run
 * over the limits) stops it with the reason.
 */
import type { RunRecord } from '../../rl/records';
import { readWatchStream, recordsUrl, WATCH_LIMITS, WatchError, type WatchedRunHeader, type WatchLimits } from './watch-stream';

export type WatchStatus =
  { kind: 'connecting' } | { kind: 'live' } | { kind: 'lost'; message: string; retryInMs: number } | { kind: 'stopped'; message: string; needsKey: boolean };

/** Waits between reconnections: quick at first, then every 30 s while the server stays away. */
export const BACKOFF_MS = [1000, 2000, 4000, 8000, 15_000, 30_000];

export interface WatchOptions {
  /** The server's --api-key, sent as a Bearer token; never stored. */
  apiKey?: string;
  /**
   * The run the server serves, at each connection. May answer with the record this watcher needs
   * next, when that is an earlier one than it asked for (what it kept belongs to another run):
   * the watcher then asks again from there.
   */
  onRun(run: WatchedRunHeader): void | { next: number } | Promise<void | { next: number }>;
  /** Records new to this watcher, in order, starting at record `from`; awaited before the next. */
  onRecords(records: RunRecord[], from: number): void | Promise<void>;
  onStatus(status: WatchStatus): void;
  fetch?: typeof fetch;
  limits?: WatchLimits;
  backoffMs?: readonly number[];
}

/** A failure the next connection may not have (a restarting server, a gap). */
class Transient extends WatchError {}

/** The run's records are wanted from an earlier one: ask again at once. */
class Restart extends WatchError {}

/** A failure that retrying will not fix. */
class Permanent extends WatchError {
  constructor(
    message: string,
    readonly needsKey = false,
  ) {
    super(message);
  }
}

function abortable(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

export class WatchConnection {
  private readonly abort = new AbortController();
  /** The next record this watcher lacks (1-based, the server's order). */
  private next = 1;
  private running: Promise<void> | null = null;

  constructor(
    readonly root: string,
    private readonly o: WatchOptions,
  ) {}

  /** Connects, and keeps reconnecting until stop() or a permanent failure; resolves then. */
  start(): Promise<void> {
    this.running ??= this.loop();
    return this.running;
  }

  stop(): void {
    this.abort.abort();
  }

  /** Starts at record `next` instead of the first, for a watcher that has the ones before. */
  skipTo(next: number): void {
    this.next = Math.max(this.next, next);
  }

  private async loop(): Promise<void> {
    const backoff = this.o.backoffMs ?? BACKOFF_MS;
    let failures = 0;
    const signal = this.abort.signal;
    while (!signal.aborted) {
      this.o.onStatus({ kind: 'connecting' });
      let reason: string;
      try {
        await this.readOnce(() => {
          failures = 0;
          this.o.onStatus({ kind: 'live' });
        });
        reason = 'the server ended the feed (stopped or restarted)';
      } catch (e) {
        if (signal.aborted) return;
        if (e instanceof Restart) continue;
        if (e instanceof Permanent || !(e instanceof TypeError || e instanceof Transient)) {
          this.o.onStatus({ kind: 'stopped', message: (e as Error).message, needsKey: e instanceof Permanent && e.needsKey });
          return;
        }
        // A server that refuses this page's origin sends it no CORS, so the browser shows only a network error.
        reason = e instanceof Transient ? e.message : `the server does not answer, or refuses this page (start it with --allow-origin ${pageOrigin()})`;
      }
      if (signal.aborted) return;
      const wait = backoff[Math.min(failures++, backoff.length - 1)];
      this.o.onStatus({
        kind: 'lost',
        message: `Lost the connection to ${this.root}: ${reason}; retrying in ${Math.round(wait / 1000)} s (is nextstate serve still running?).`,
        retryInMs: wait,
      });
      await abortable(wait, signal);
    }
  }

  /** One connection, read to its end; `onOpen` once the server has answered 200. */
  private async readOnce(onOpen: () => void): Promise<void> {
    const limits = this.o.limits ?? WATCH_LIMITS;
    const response = await (this.o.fetch ?? fetch)(recordsUrl(this.root, this.next), {
      // No cookies: the address came from a link. The key, when given, is the only credential.
      credentials: 'omit',
      mode: 'cors',
      cache: 'no-store',
      headers: this.o.apiKey ? { authorization: `Bearer ${this.o.apiKey}` } : {},
      signal: this.abort.signal,
    });
    if (response.status === 401) throw new Permanent(`${this.root} wants its API key: enter the --api-key the server was started with.`, true);
    if (response.status >= 500 || response.status === 429) throw new Transient(`the server answered HTTP ${response.status}`);
    if (!response.ok || !response.body)
      throw new Permanent(
        `${this.root} answered HTTP ${response.status} to the record feed: is it nextstate serve, and a version with GET /v1/nextstate/records?`,
      );
    onOpen();
    await readWatchStream(
      response.body,
      async (event) => {
        if (event.type === 'run') {
          const need = (await this.o.onRun(event.run))?.next;
          if (need !== undefined && need < this.next) {
            this.next = need;
            throw new Restart(`records wanted from ${need}`);
          }
          return;
        }
        // A reconnection starts at `next`; anything before it was shown already.
        if (event.from > this.next) throw new Transient(`records ${this.next} to ${event.from - 1} went missing`);
        const fresh = event.records.slice(this.next - event.from);
        if (!fresh.length) return;
        if (this.next - 1 + fresh.length > limits.maxRecords)
          throw new Permanent(`The run has more than ${limits.maxRecords} records, more than the lab watches; inspect its run file with nextstate inspect.`);
        const from = this.next;
        await this.o.onRecords(fresh, from);
        this.next += fresh.length;
      },
      limits,
      this.abort.signal,
    );
  }
}

/** This page's origin, as --allow-origin wants it. */
function pageOrigin(): string {
  return globalThis.location?.origin ?? 'ORIGIN';
}
