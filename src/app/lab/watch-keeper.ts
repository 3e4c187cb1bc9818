/**
 * What the lab keeps of a watched server run: each validated record goes into a read-only run
 * in IndexedDB before anything shows it, so the run is in Runs, survives a reload and exports
 * like any run. Reopening the watch carries on from the last kept record; a server that now
 * serves another run (another start time) is kept as another run, from its first record.
 */
import type { RunRecord } from '../../rl/records';
import type { RunInfo, RunStore } from '../../storage/index';
import type { WatchedRunHeader } from './watch-stream';

export class WatchKeepError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WatchKeepError';
  }
}

/** A kept run as the watch view opens it: its header and records so far. */
export interface KeptRun {
  runId: string;
  header: WatchedRunHeader;
  records: RunRecord[];
}

export class WatchKeeper {
  private run: RunInfo | null = null;
  /** Records kept in the current run; the next the server is asked for is one more. */
  private kept = 0;

  constructor(
    private readonly store: RunStore,
    /** The server's root, checked by serverRoot. */
    readonly root: string,
    /** Called when a new run was made, so the Runs list can show it. */
    private readonly onCreated: (runId: string) => void = () => {},
  ) {}

  /** The id of the run the records go to (null before the first `run` event of a new watch). */
  get runId(): string | null {
    return this.run?.id ?? null;
  }

  /** The run kept last from this server, to show at once and to carry on from; null if none. */
  async resume(): Promise<KeptRun | null> {
    const run = await this.store.latestWatched(this.root);
    if (!run) return null;
    const records = (await this.store.records(run.id)).map((r) => r.record);
    this.run = run;
    this.kept = records.length;
    return { runId: run.id, header: { label: run.label, created: run.created, config: run.config }, records };
  }

  /**
   * The server's `run` event: the run its records go to (the kept one when it is the same server
   * run, a new one otherwise). Resolves with the record needed next.
   */
  async serving(run: WatchedRunHeader): Promise<{ next: number; fresh: boolean }> {
    if (this.run?.watch?.created === run.created) return { next: this.kept + 1, fresh: false };
    const id = await this.store
      .createWatchedRun({ config: run.config, label: run.label, source: { server: this.root, created: run.created } })
      .catch((e: unknown) => {
        throw new WatchKeepError(`Could not keep the server's run in this browser: ${(e as Error).message}`, { cause: e });
      });
    this.run = (await this.store.getRun(id)) ?? null;
    this.kept = 0;
    this.onCreated(id);
    return { next: 1, fresh: true };
  }

  /**
   * Keeps records `from`, `from + 1`, … of the current run; resolves once they are committed.
   *
   * @throws WatchKeepError when they could not be kept (nothing of them was; the message says what to do)
   */
  async keep(records: readonly RunRecord[], from: number): Promise<void> {
    if (!this.run) throw new WatchKeepError('The server sent records before its run: update nextstate.');
    try {
      await this.store.appendWatched(this.run.id, from, records);
    } catch (e) {
      throw new WatchKeepError(`Could not keep records ${from}–${from + records.length - 1} in this browser: ${(e as Error).message}`, { cause: e });
    }
    this.kept = from - 1 + records.length;
  }
}
