/**
 * A server run watched from the lab, as runes state for the page: its header (label, config),
 * its records (handed to the views in batches, as a live run's are), and one line about the
 * connection. Each record is kept in IndexedDB (watch-keeper.ts) before the views get it, so a
 * reload shows what was kept and asks the server only for newer records.
 */
import type { RunRecord } from '../../rl/records';
import type { RunStore } from '../../storage/index';
import { RecordFeed } from './live';
import { WatchConnection, type WatchOptions, type WatchStatus } from './watch-connection';
import { WatchKeeper } from './watch-keeper';
import type { WatchedRunHeader } from './watch-stream';

export class WatchedRun {
  header = $state.raw<WatchedRunHeader | null>(null);
  records = $state.raw<RunRecord[]>([]);
  status = $state.raw<WatchStatus>({ kind: 'connecting' });
  /** The run in this browser that keeps the records (null until the server's run is known). */
  runId = $state.raw<string | null>(null);

  private connection: WatchConnection | null = null;
  private readonly feed = new RecordFeed((records) => (this.records = records));
  private readonly keeper: WatchKeeper;
  private resumed: Promise<boolean> | null = null;
  /** Bumped by every connect and stop, so only the latest connect opens a connection. */
  private generation = 0;

  constructor(
    /** The server's root, checked by serverRoot. */
    readonly root: string,
    store: RunStore,
    private readonly options: Pick<WatchOptions, 'fetch' | 'limits' | 'backoffMs'> & { onKept?: (runId: string) => void } = {},
  ) {
    this.keeper = new WatchKeeper(store, root, (id) => {
      this.runId = id;
      options.onKept?.(id);
    });
  }

  /** Connects (again, with `apiKey` when the server wants one); the records so far stay. */
  connect(apiKey?: string): Promise<void> {
    this.connection?.stop();
    this.connection = null;
    const generation = ++this.generation;
    this.resumed ??= this.resume();
    return this.resumed.then((ok) => {
      if (ok && generation === this.generation) this.open(apiKey);
    });
  }

  stop(): void {
    this.generation++;
    this.connection?.stop();
    this.connection = null;
    this.feed.flush();
  }

  /** Shows the run kept from this server last, before the server is asked for anything. */
  private async resume(): Promise<boolean> {
    try {
      const kept = await this.keeper.resume();
      if (kept) {
        this.header = kept.header;
        this.runId = kept.runId;
        this.feed.reset(kept.records);
        this.records = kept.records;
      }
      return true;
    } catch (e) {
      this.status = { kind: 'stopped', message: `Could not read what this browser kept of ${this.root}: ${(e as Error).message}`, needsKey: false };
      this.resumed = null;
      return false;
    }
  }

  private open(apiKey?: string): void {
    const connection = new WatchConnection(this.root, {
      ...this.options,
      apiKey,
      onRun: async (run) => {
        const { next, fresh } = await this.keeper.serving(run);
        if (fresh) {
          // Another server run than the one kept: shown from its start.
          this.feed.reset([]);
          this.records = [];
          this.header = run;
        }
        this.header ??= run;
        return { next };
      },
      onRecords: async (records, from) => {
        await this.keeper.keep(records, from);
        for (const r of records) this.feed.push(r);
      },
      onStatus: (status) => {
        // What arrived before a drop is shown at once, not a batch later.
        if (status.kind !== 'live') this.feed.flush();
        this.status = status;
      },
    });
    this.connection = connection;
    // A new connection carries on from what was kept.
    connection.skipTo(this.feed.records().length + 1);
    void connection.start();
  }
}
