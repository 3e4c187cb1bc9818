/**
 * The live run's pure parts: what the aria-live line says about a committed record, and the
 * phase a loop snapshot puts the page in.
 */
import type { RunRecord } from '../../rl/records';
import type { RunSnapshot } from '../../workers/runtime/runloop';

/** Where the live run is: loading models, running, paused (by the person or a full disk), stopping. */
export type LivePhase = 'idle' | 'loading' | 'running' | 'paused' | 'stopping';

/** The milestones a screen-reader user wants to hear about; null for every other record. */
export function recordAnnouncement(r: RunRecord): string | null {
  if (r.kind === 'train_step') return r.skipped ? `Training step ${r.step} skipped: ${r.skipped}` : `Training step ${r.step} done; the policy is now version ${r.version + 1}.`;
  if (r.kind === 'evaluation') {
    const score = r.scores.score ?? r.scores.accuracy;
    const failed = r.failed ? `, ${r.failed} of ${r.perProblem.length} problems failed and left out` : '';
    return `Evaluation at step ${r.step ?? 0}: ${score === undefined ? 'no score' : `score ${score.toFixed(2)}`}${failed}.`;
  }
  return null;
}

/** The phase after a snapshot: the loop's own status, except that an idle page stays idle. */
export function phaseAfter(phase: LivePhase, status: RunSnapshot['status']): LivePhase {
  if (phase === 'idle') return phase;
  return status === 'paused' || status === 'running' || status === 'stopping' ? status : phase;
}
