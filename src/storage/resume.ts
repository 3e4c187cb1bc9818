/**
 * Where a run picks up after its tab closed. Pure over the run's train_step and
 * version_boundary records and the versions that have a saved adapter.
 *
 * Contract with the run loop (what it must write for this to hold):
 * - every optimizer step, applied or skipped, logs a train_step record whose `samples` is the
 *   size of the batch it consumed; batches leave the SampleBuffer oldest first, so the first
 *   sum(samples) sample records were consumed;
 * - an applied step that changes the policy logs a version_boundary {from, to} after its
 *   train_step (without one, the new version is taken to be train_step.version + 1);
 * - the adapter of a version is saved with saveAdapter when it should be resumable.
 *
 * A step is resumable when the policy it left behind can be rebuilt: version 0 (the base
 * model, no adapter) or a version with a saved adapter. The resume point is the last
 * resumable step. Everything after it (a step in flight, versions without an adapter, turns
 * awaiting the judge) is dropped; its samples go back into the buffer.
 */
import type { TrainStepRecord, VersionBoundaryRecord } from '../rl';

interface Seq<R> {
  seq: number;
  record: R;
}

export interface ResumeStep {
  /** null: no resumable step; start from the base model. */
  lastStep: number | null;
  version: number;
  /** seq of the last record that belongs to the resumed state (0 when none). */
  throughSeq: number;
  /** Sample records consumed by the steps up to and including lastStep. */
  consumedSamples: number;
}

export function findResumeStep(
  steps: readonly Seq<TrainStepRecord>[],
  boundaries: readonly Seq<VersionBoundaryRecord>[],
  savedVersions: ReadonlySet<number>,
): ResumeStep {
  let best: ResumeStep = { lastStep: null, version: 0, throughSeq: 0, consumedSamples: 0 };
  let version = 0;
  let consumed = 0;
  let b = 0;
  for (let i = 0; i < steps.length; i++) {
    const { seq, record } = steps[i];
    const nextSeq = i + 1 < steps.length ? steps[i + 1].seq : Infinity;
    while (b < boundaries.length && boundaries[b].seq < seq) b++;
    const boundary = b < boundaries.length && boundaries[b].seq < nextSeq ? boundaries[b] : null;
    if (record.skipped === null) version = boundary ? boundary.record.to : record.version + 1;
    consumed += record.samples;
    if (version === 0 || savedVersions.has(version)) {
      best = { lastStep: record.step, version, throughSeq: Math.max(seq, boundary?.seq ?? 0), consumedSamples: consumed };
    }
  }
  return best;
}
