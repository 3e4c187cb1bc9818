/**
 * The live run's pure parts: what the aria-live line says about a committed record, and the
 * phase a loop snapshot puts the page in.
 */
import type { RunRecord } from '../../rl/records';
import type { RunSnapshot } from '../../runtime/runloop';

/** Where the live run is: loading models, running, paused (by the person or a full disk), stopping. */
export type LivePhase = 'idle' | 'loading' | 'running' | 'paused' | 'stopping';

/** The milestones a screen-reader user wants to hear about; null for every other record. */
export function recordAnnouncement(r: RunRecord): string | null {
  if (r.kind === 'train_step')
    return r.skipped ? `Training step ${r.step} skipped: ${r.skipped}` : `Training step ${r.step} done; the policy is now version ${r.version + 1}.`;
  if (r.kind === 'evaluation') {
    const score = r.scores.score ?? r.scores.accuracy;
    const failed = r.failed ? `, ${r.failed} of ${r.perProblem.length} problems failed and left out` : '';
    return `Evaluation at step ${r.step ?? 0}: ${score === undefined ? 'no score' : `score ${score.toFixed(2)}`}${failed}.`;
  }
  if (r.kind === 'runtime_event' && r.event === 'run_resumed') return `${r.message[0].toUpperCase()}${r.message.slice(1)}.`;
  return null;
}

/** The phase after a snapshot: the loop's own status, except that an idle page stays idle. */
export function phaseAfter(phase: LivePhase, status: RunSnapshot['status']): LivePhase {
  if (phase === 'idle') return phase;
  return status === 'paused' || status === 'running' || status === 'stopping' ? status : phase;
}

/** What a loop's end says, and whether it ends a method comparison (a stop does: the person chose it). */
export function endNotice(result: { status: string; step: number }): { text: string; endsComparison: boolean } {
  const finished = result.status === 'finished';
  const steps = `${result.step} step${result.step === 1 ? '' : 's'}`;
  return { text: finished ? `Run finished after ${steps}.` : `Run stopped at step ${result.step}.`, endsComparison: !finished };
}

/** A policy worker's device event, as the page says it and as the run's log records it. */
export function deviceNotice(
  e: { type: 'device-lost'; message: string } | { type: 'recovered'; version: number },
  simulated: boolean,
): { text: string; log: { kind: 'device_lost' | 'recovered'; detail: string } | null } {
  if (e.type === 'device-lost') {
    return {
      text: 'The GPU device was lost; the policy reloads on a fresh device from the last saved step.',
      // A simulated loss was logged when the button was pressed.
      log: simulated ? null : { kind: 'device_lost', detail: `GPU device lost: ${e.message}` },
    };
  }
  return {
    text: `Recovered from the lost device at version ${e.version}.`,
    log: { kind: 'recovered', detail: `policy reloaded on a fresh device at version ${e.version}` },
  };
}

/** How often committed records are handed to the views: often enough to feel live, rarely enough not to re-render per record. */
export const FLUSH_MS = 250;

/**
 * The live run's committed records, handed to the views in batches: `publish` gets the whole
 * log at most every FLUSH_MS, so the page re-renders per batch, not per record.
 */
export class RecordFeed {
  private all: RunRecord[] = [];
  private pending: RunRecord[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly publish: (records: RunRecord[]) => void) {}

  /** Starts the feed from the records the run already has (a resumed run's log). */
  reset(records: readonly RunRecord[]): void {
    this.cancel();
    this.all = records.slice();
    this.pending = [];
  }

  push(r: RunRecord): void {
    this.pending.push(r);
    this.timer ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Hands the records committed since the last flush over now. */
  flush(): void {
    this.cancel();
    if (!this.pending.length) return;
    this.all.push(...this.pending);
    this.pending = [];
    this.publish(this.all.slice());
  }

  /** Every record so far, flushed or not yet. */
  records(): RunRecord[] {
    return [...this.all, ...this.pending];
  }

  /** The records the views have been handed. */
  published(): RunRecord[] {
    return this.all.slice();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
