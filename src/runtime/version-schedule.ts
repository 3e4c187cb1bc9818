/**
 * A fixed schedule: a run with simulated users is a function of its config and seed, because
 * which policy version answers each session, and the order in which samples reach the buffer,
 * follow the sessions' indices rather than how fast the trainer, the disk or the judges were.
 *
 * - Session i starts once every session up to i − W has finished and been judged (W: the
 *   sessions that run at once), and all of it is answered by the version trained on the batches
 *   those sessions filled. Until then it waits; so does a session whose version is still training.
 * - A finished session's results wait until every session before it has finished; then they go
 *   to the buffer in index order, and within a session in the order its turns closed.
 * - Once the sessions flushed fill the last batch the run needs, no later session starts beyond
 *   the W − 1 already admitted, which run to their end so that every run holds the same sessions.
 *
 * Training overlaps the sessions in flight; only the start of a session that needs the newest
 * version waits for it. Versions here count steps from the run's start (or its resumed version).
 */
export interface ScheduleOptions {
  /** Sessions that run at once (W). */
  window: number;
  /** The first session index of this run (a resumed run goes on from where the last stopped). */
  first: number;
  /** The version the first W sessions are answered by. */
  startVersion: number;
  /** The version after the run's last step: no session needs a later one. */
  lastVersion: number;
}

export class VersionSchedule<T> {
  /** The lowest index not yet flushed. */
  private next: number;
  private readonly finished = new Map<number, T>();
  /** By index: the version trained on every batch filled once that session was flushed. */
  private readonly versions = new Map<number, number>();
  /** Once the last batch is filled: the highest index that runs. */
  private last: number | null = null;
  private waiters: (() => void)[] = [];

  constructor(private readonly o: ScheduleOptions) {
    this.next = o.first;
    if (o.startVersion >= o.lastVersion) this.last = o.first + o.window - 1;
  }

  /**
   * The version session `index` is answered by: undefined while the sessions that decide it are
   * still running, null when the run needs no such session.
   */
  versionFor(index: number): number | null | undefined {
    if (this.last !== null && index > this.last) return null;
    const decides = index - this.o.window;
    return decides < this.o.first ? this.o.startVersion : this.versions.get(decides);
  }

  /** Resolves with versionFor(index) once it is known; null also when cancel() is called first. */
  async admit(index: number): Promise<number | null> {
    for (;;) {
      const v = this.versionFor(index);
      if (v !== undefined) return v;
      if (this.cancelled) return null;
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  private cancelled = false;

  /** Wakes every waiting admit with null: the run stops. */
  cancel(): void {
    this.cancelled = true;
    this.wake();
  }

  /**
   * Session `index` finished with `results` (in its own order). Returns the sessions that may now
   * go to the buffer, in index order: this one and any later ones that were waiting for it, or
   * none while an earlier session still runs. Pass each to flushed() once its results are in.
   */
  finish(index: number, results: T): { index: number; results: T }[] {
    this.finished.set(index, results);
    const ready: { index: number; results: T }[] = [];
    for (let i = this.next + this.pendingFlush; this.finished.has(i); i++) {
      ready.push({ index: i, results: this.finished.get(i)! });
      this.finished.delete(i);
    }
    this.pendingFlush += ready.length;
    return ready;
  }

  /** Handed out by finish but not yet flushed. */
  private pendingFlush = 0;

  /** Session `index`'s results are in the buffer, which has released `batches` batches since the run's start. */
  flushed(index: number, batches: number): void {
    if (index !== this.next) throw new Error(`session ${index} flushed before session ${this.next}: flush in the order finish() returns`);
    this.next++;
    this.pendingFlush--;
    const version = Math.min(this.o.lastVersion, this.o.startVersion + batches);
    this.versions.set(index, version);
    if (this.last === null && version >= this.o.lastVersion) this.last = index + this.o.window - 1;
    this.wake();
  }

  /** Whether every session that runs has been flushed (true only once the last batch is filled). */
  get drained(): boolean {
    return this.last !== null && this.next > this.last;
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
