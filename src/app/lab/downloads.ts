/**
 * Byte progress of model files as rows the page can show: bytes so far, total, speed, and
 * whether the file came from the browser's cache (then there is no download to wait for).
 */
export interface FileEvent {
  file: string;
  loaded: number;
  total: number | null;
  fromCache: boolean;
}

export interface DownloadRow {
  /** "policy", "judge", ...: which model the file belongs to. */
  model: string;
  file: string;
  loaded: number;
  total: number | null;
  fromCache: boolean;
  /** Bytes per second since the file's first event; null until there is a measurable span. */
  bytesPerSecond: number | null;
  done: boolean;
}

export class DownloadTracker {
  private readonly rows = new Map<string, DownloadRow & { startedAt: number }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  update(model: string, e: FileEvent): DownloadRow[] {
    const key = `${model}\u0000${e.file}`;
    const t = this.now();
    const row = this.rows.get(key) ?? { model, file: e.file, loaded: 0, total: null, fromCache: e.fromCache, bytesPerSecond: null, done: false, startedAt: t };
    row.loaded = e.loaded;
    row.total = e.total;
    row.fromCache = e.fromCache;
    const span = (t - row.startedAt) / 1000;
    row.bytesPerSecond = !e.fromCache && span > 0.05 ? e.loaded / span : null;
    row.done = e.total !== null && e.loaded >= e.total;
    this.rows.set(key, row);
    return this.list();
  }

  list(): DownloadRow[] {
    return [...this.rows.values()].map(({ startedAt: _s, ...r }) => r);
  }

  clear(): void {
    this.rows.clear();
  }
}
