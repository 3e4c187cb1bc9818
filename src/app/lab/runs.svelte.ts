/**
 * The runs in this browser as the pages show them: the list, the open run and its records, the
 * runs overlaid for comparison, and the storage actions on them (open, rename, delete). Records
 * are read once per run and kept; the live run's come from its feed, not from storage.
 */
import type { RunRecord } from '../../rl/records';
import type { RunInfo, RunStore } from '../../storage/index';
import { runOutcome, type RunOutcome } from './run-outcome';

export interface RunRecords {
  id: string;
  label: string;
  records: readonly RunRecord[];
}

/** The live run, as far as the library needs it: its id and the records handed to the views. */
export interface LiveRecords {
  id: string;
  records(): RunRecord[];
}

/**
 * Whether two runs' charts mean the same thing (the same track and scenario), so one can be
 * overlaid on the other: a story score and a talk run, or accuracy and a personalization score, cannot.
 */
export function sameKind(a: Pick<RunInfo, 'config'>, b: Pick<RunInfo, 'config'>): boolean {
  const kind = (c: unknown) => {
    const config = c as { track?: unknown; scenario?: { id?: unknown } } | undefined;
    return `${String(config?.track ?? 'personal')}/${String(config?.scenario?.id ?? '')}`;
  };
  return kind(a.config) === kind(b.config);
}

export class RunLibrary {
  runs = $state.raw<RunInfo[]>([]);
  /** The run on the Run page (live, stored or imported). */
  openRun = $state.raw<RunInfo | null>(null);
  records = $state.raw<RunRecord[]>([]);
  /** Runs overlaid on the open run's charts, in the order they were ticked. */
  compareIds = $state.raw<string[]>([]);
  compared = $state.raw<RunRecords[]>([]);
  /** What each listed run came to (steps, score, duration), by id, for the Runs page. */
  outcomes = $state.raw<Record<string, RunOutcome>>({});

  // Not state: the views read `records`, never the cache behind it.
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  private readonly cache = new Map<string, RunRecord[]>();
  /** Outcomes by run id, with the `updated` time they were read at: a run that changed is read again. */
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  private readonly outcomeCache = new Map<string, { updated: number; outcome: RunOutcome }>();

  constructor(
    private readonly store: Pick<RunStore, 'listRuns' | 'getRun' | 'records' | 'metrics' | 'rename' | 'deleteRun'>,
    private readonly live: () => LiveRecords | null,
  ) {}

  async refresh(): Promise<void> {
    this.runs = await this.store.listRuns();
    if (this.openRun) this.openRun = this.runs.find((r) => r.id === this.openRun!.id) ?? this.openRun;
    await this.readOutcomes();
  }

  /** From the chart rows only (a few per step), never the records behind them. */
  private async readOutcomes(): Promise<void> {
    const out: Record<string, RunOutcome> = {};
    for (const r of this.runs) {
      let known = this.outcomeCache.get(r.id);
      if (known?.updated !== r.updated) {
        known = { updated: r.updated, outcome: runOutcome(await this.store.metrics(r.id), r.created) };
        this.outcomeCache.set(r.id, known);
      }
      out[r.id] = known.outcome;
    }
    this.outcomes = out;
  }

  async loadRecords(id: string): Promise<RunRecord[]> {
    const live = this.live();
    if (live?.id === id) return live.records();
    const cached = this.cache.get(id);
    if (cached) return cached;
    const records = (await this.store.records(id)).map((r) => r.record);
    this.cache.set(id, records);
    return records;
  }

  /** Keeps a run's records (a live run's when it ends), or forgets them (`records` absent). */
  remember(id: string, records?: RunRecord[]): void {
    if (records) this.cache.set(id, records);
    else this.cache.delete(id);
  }

  /** Makes `id` the open run with its records; it stops being overlaid on itself. */
  async open(id: string): Promise<void> {
    const info = await this.store.getRun(id);
    if (!info) throw new Error(`No run with id ${id} in this browser; it may have been deleted.`);
    this.openRun = info;
    this.records = await this.loadRecords(id);
    this.compareIds = this.compareIds.filter((c) => c !== id);
    await this.loadCompared();
  }

  async toggleCompare(id: string, on: boolean): Promise<void> {
    this.compareIds = on ? (this.compareIds.includes(id) ? this.compareIds : [...this.compareIds, id]) : this.compareIds.filter((c) => c !== id);
    await this.loadCompared();
  }

  /** Overlays exactly these runs. */
  async compareWith(ids: string[]): Promise<void> {
    this.compareIds = [...ids];
    await this.loadCompared();
  }

  private async loadCompared(): Promise<void> {
    const out: RunRecords[] = [];
    for (const id of this.compareIds) {
      const info = this.runs.find((r) => r.id === id);
      if (info) out.push({ id, label: info.label, records: await this.loadRecords(id) });
    }
    this.compared = out;
  }

  /** Renames a run; returns the clean label, or null for a blank one (nothing done). */
  async rename(id: string, label: string): Promise<string | null> {
    const clean = label.trim();
    if (!clean) return null;
    await this.store.rename(id, clean);
    await this.refresh();
    return clean;
  }

  /** Deletes a run and every trace of it on the pages. */
  async remove(id: string): Promise<void> {
    await this.store.deleteRun(id);
    this.cache.delete(id);
    this.compareIds = this.compareIds.filter((c) => c !== id);
    this.compared = this.compared.filter((c) => c.id !== id);
    if (this.openRun?.id === id) {
      this.openRun = null;
      this.records = [];
    }
    await this.refresh();
  }
}
