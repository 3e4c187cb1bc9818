/**
 * The numbers a run file's header advertises (and `nextstate inspect` prints), accumulated
 * one record at a time so export and import compute them the same way without holding the
 * log in memory.
 */
import {
  RECORD_KINDS,
  SESSION_END_REASONS,
  TRAJECTORY_FALLBACKS,
  turnCount,
  type RecordKind,
  type RunRecord,
  type SessionEndReason,
  type TrajectoryFallback,
} from '../rl';
import { checker, int, mapOf, nullable, num, object, oneOf, str, type Checker, type Infer } from '../base/check';

const count = int();

const evaluationSummary = object(
  {
    name: str(256),
    step: nullable(int()),
    version: int(),
    scores: mapOf(str(256), num(), 256),
  },
  {
    /** Which problems it scored, in words (EvaluationRecord.problemSet), where the record says. */
    problemSet: str(1000),
  },
);
export type EvaluationSummary = Infer<typeof evaluationSummary>;

const kindCounts = mapOf(oneOf(...RECORD_KINDS), count, RECORD_KINDS.length);

/** The summary in a run file's header, as its reader checks it; RunSummary is its type. */
export const summaryChecker = object(
  {
    records: count,
    // A kind the file never logged may be left out; the summary holds every kind, 0 for those.
    byKind: checker(kindCounts.schema, (value, path): Record<RecordKind, number> => {
      const kinds = kindCounts(value, path);
      return Object.fromEntries(RECORD_KINDS.map((k) => [k, kinds[k] ?? 0])) as Record<RecordKind, number>;
    }),
    /** train_step records, skipped ones included. */
    steps: count,
    skippedSteps: count,
    lastStep: nullable(count),
    evaluations: count,
    /** session_end records. */
    sessions: count,
    /** Highest policy version any record carries. */
    lastVersion: count,
    firstEvaluation: nullable(evaluationSummary),
    lastEvaluation: nullable(evaluationSummary),
  },
  {
    /**
     * Main turns whose session ended before their next state came (session_end.unjudgedTurn), by
     * how it ended: never judged, never a sample. Absent in files written before it was counted.
     */
    unjudgedTurns: object(Object.fromEntries(SESSION_END_REASONS.map((r) => [r, count])) as Record<SessionEndReason, Checker<number>>),
    /**
     * Tool-call trajectories the preset asked to train as one sample that were trained one sample
     * per step instead, by why (SampleRecord.trajectoryFallback). Absent in files written before it
     * was counted.
     */
    trajectoryFallbacks: object(Object.fromEntries(TRAJECTORY_FALLBACKS.map((r) => [r, count])) as Record<TrajectoryFallback, Checker<number>>),
    /**
     * Main turns a stop cut off before they reached the buffer, which a resume went on without
     * (runtime_event run_resumed): kept in the log, never trained. Absent where no resume is
     * logged, so the summary of a run never resumed reads as it did before it was counted.
     */
    interruptedTurns: count,
  },
);
export type RunSummary = Infer<typeof summaryChecker>;

export class Summarizer {
  private s: RunSummary = {
    records: 0,
    byKind: Object.fromEntries(RECORD_KINDS.map((k) => [k, 0])) as Record<RecordKind, number>,
    steps: 0,
    skippedSteps: 0,
    lastStep: null,
    evaluations: 0,
    sessions: 0,
    unjudgedTurns: Object.fromEntries(SESSION_END_REASONS.map((r) => [r, 0])) as Record<SessionEndReason, number>,
    trajectoryFallbacks: Object.fromEntries(TRAJECTORY_FALLBACKS.map((r) => [r, 0])) as Record<TrajectoryFallback, number>,
    lastVersion: 0,
    firstEvaluation: null,
    lastEvaluation: null,
  };

  add(record: RunRecord): void {
    const s = this.s;
    s.records++;
    s.byKind[record.kind]++;
    s.lastVersion = Math.max(s.lastVersion, record.version);
    if (record.kind === 'train_step') {
      s.steps++;
      if (record.skipped !== null) s.skippedSteps++;
      s.lastStep = Math.max(s.lastStep ?? record.step, record.step);
    } else if (record.kind === 'evaluation') {
      s.evaluations++;
      const e: EvaluationSummary = {
        name: record.name,
        step: record.step ?? null,
        version: record.version,
        scores: { ...record.scores },
        ...(record.problemSet ? { problemSet: record.problemSet } : {}),
      };
      s.firstEvaluation ??= e;
      s.lastEvaluation = e;
    } else if (record.kind === 'session_end') {
      s.sessions++;
      if (record.unjudgedTurn !== undefined) s.unjudgedTurns![record.reason]++;
    } else if (record.kind === 'sample' && record.trajectoryFallback && record.turn === 1) {
      // Every step of such a trajectory logs the reason; its first counts the trajectory once.
      s.trajectoryFallbacks![record.trajectoryFallback]++;
    } else if (record.kind === 'runtime_event' && record.event === 'run_resumed') {
      s.interruptedTurns = (s.interruptedTurns ?? 0) + turnCount(record.interrupted);
    }
  }

  result(): RunSummary {
    return structuredClone(this.s);
  }
}
