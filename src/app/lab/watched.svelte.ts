/**
 * A server run watched from the lab, as runes state for the page: its header (label, config),
 * its records (handed to the views in batches, as a live run's are), and one line about the
 * connection. Kept in memory only: a watched run is the server's, and its run file is the copy
 * to keep (`nextstate serve --out`).
 */
import type { RunRecord } from '../../rl/records';
import { RecordFeed } from './live';
import { WatchConnection, type WatchOptions, type WatchStatus } from './watch-connection';
import type { WatchedRunHeader } from './watch-stream';

export class WatchedRun {
  header = $state.raw<WatchedRunHeader | null>(null);
  records = $state.raw<RunRecord[]>([]);
  status = $state.raw<WatchStatus>({ kind: 'connecting' });

  private connection: WatchConnection | null = null;
  private readonly feed = new RecordFeed((records) => (this.records = records));

  constructor(
    /** The server's root, checked by serverRoot. */
    readonly root: string,
    private readonly options: Pick<WatchOptions, 'fetch' | 'limits' | 'backoffMs'> = {},
  ) {}

  /** Connects (again, with `apiKey` when the server wants one); the records so far stay. */
  connect(apiKey?: string): void {
    this.connection?.stop();
    const connection = new WatchConnection(this.root, {
      ...this.options,
      apiKey,
      onRun: (run) => (this.header = run),
      onRecords: (records) => {
        for (const r of records) this.feed.push(r);
      },
      onStatus: (status) => {
        // What arrived before a drop is shown at once, not a batch later.
        if (status.kind !== 'live') this.feed.flush();
        this.status = status;
      },
    });
    this.connection = connection;
    // A new connection carries on from what the old one had.
    if (this.records.length) connection.skipTo(this.records.length + 1);
    void connection.start();
  }

  stop(): void {
    this.connection?.stop();
    this.connection = null;
    this.feed.flush();
  }
}
