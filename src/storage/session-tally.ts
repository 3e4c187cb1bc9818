/**
 * Which sessions a run file's records show begun and ended, for `nextstate inspect`. The
 * summary's `sessions` counts session_end records only, so the snapshot of a run still serving
 * (its sessions open) counts none; a session begins with its first interaction. Kept out of the
 * header's summary, whose fields older readers check.
 */
import type { RunRecord } from '../rl';

export interface SessionCounts {
  /** Sessions with an interaction or a session_end record. */
  begun: number;
  /** Sessions with a session_end record. */
  ended: number;
  /** Sessions begun without a session_end record yet, in the order they began. */
  open: string[];
}

export class SessionTally {
  // Insertion order is the order the sessions began, which `open` keeps.
  private readonly begun = new Set<string>();
  private readonly ended = new Set<string>();

  add(record: RunRecord): void {
    if (record.kind === 'interaction') this.begun.add(record.session);
    else if (record.kind === 'session_end') {
      this.begun.add(record.session);
      this.ended.add(record.session);
    }
  }

  result(): SessionCounts {
    return { begun: this.begun.size, ended: this.ended.size, open: [...this.begun].filter((s) => !this.ended.has(s)) };
  }
}
