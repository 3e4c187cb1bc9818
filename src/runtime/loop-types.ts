/**
 * What a run loop takes and gives, whatever the track: the settings and options it runs with,
 * the sink its records go to, and the snapshot, result and controls the CLI and the page use.
 */
import type { BufferedSample, ZeroAdvantagePolicy } from '../rl/buffer';
import type { RunRecord } from '../rl/records';
import type { TrainingSample } from '../rl/samples';

/** Where records go; `append` resolves only once they are committed (storage, a file). */
export interface RecordSink {
  append(records: RunRecord[]): Promise<void>;
  /**
   * A training step is about to start (step: its number once done): a sink that others read while
   * the run goes on brings what they read up to date first, since a step may hold the process.
   */
  stepStarting?(step: { step: number; samples: number; at: number }): Promise<void>;
}

export type RunStatus = 'running' | 'paused' | 'stopping' | 'finished' | 'stopped' | 'failed';

export interface RunSnapshot {
  status: RunStatus;
  step: number;
  version: number;
  /** Sessions (personal track) or rollout groups (tool-call track) started. */
  sessionsStarted: number;
  generationQueue: number;
  /** Requests in the generation batch running now. */
  generating: number;
  judgeInFlight: number;
  judgeWaiting: number;
  bufferedSamples: number;
  batchesWaiting: number;
  /** Generated tokens per second over the last few seconds. */
  tokensPerSecond: number;
  /** Tokens per second of the last training step (forward, backward and optimizer). */
  trainTokensPerSecond: number | null;
  /** The policy engine's device memory, as of the last per-second update. */
  memory: { allocated: number; peak: number } | null;
}

export interface RunLoopOptions {
  now?: () => number;
  /** Called after each record is committed: the UI shows only what storage holds. */
  onRecord?: (r: RunRecord) => void;
  onSnapshot?: (s: RunSnapshot) => void;
  onProgress?: (p: { phase: 'train' | 'evaluate'; done: number; total: number }) => void;
  /**
   * Requests the batcher merges into one generation at most (default 32); 1 generates them one at
   * a time (the served run's bench compares the two).
   */
  generationBatch?: number;
  /** How often onSnapshot fires while the run goes (default every second; 0 = only on changes). */
  snapshotEveryMs?: number;
  /** Continue a saved run: its step and version (the adapter is restored by the caller). */
  resume?: {
    step: number;
    version: number;
    sessionsStarted: number;
    /**
     * Samples that were buffered but not trained on when the run stopped (storage's
     * resumePoint().buffered), oldest first. They go back into the buffer with the loss mask
     * they were logged with, and no new sample record is written: their records are in the log.
     */
    samples?: BufferedSample<TrainingSample>[];
    /**
     * Whether the log holds the evaluation due at `step`. false: it is run first (the run
     * stopped between that step and its evaluation). Absent: only step 0's is run, when due.
     */
    evaluated?: boolean;
    /**
     * The teacher scenario's student attempts the log holds, by their slot in prepare()'s order
     * (the attempt's side turn minus one): a resumed run grades the same work, not a new draw
     * from the trained policy.
     */
    studentWork?: ReadonlyMap<number, string>;
    /**
     * The log the run resumes from. Given, the loop's first record says where it went on and
     * marks the turns of the interrupted step it leaves behind (resume-plan.ts interruptedTurns).
     */
    logged?: readonly RunRecord[];
    /** Buffered samples left out because their interaction is missing from the log, for that record's line. */
    dropped?: number;
  };
}

export interface RunResult {
  status: RunStatus;
  step: number;
  version: number;
}

/** What the CLI and the page drive, whatever the track. */
export interface RunController {
  run(): Promise<RunResult>;
  pause(): void;
  resume(): void;
  stop(): void;
  snapshot(): RunSnapshot;
}

/** The numbers the shared machinery needs from a track's config. */
export interface LoopSettings {
  /** Training steps before the run finishes. */
  steps: number;
  /** Evaluate before training and after every K steps (and at the last step); 0 = never. */
  evalEvery: number;
  /** Concurrent workers (sessions, or rollout groups). */
  workers: number;
  batchSize: number;
  zeroAdvantage: ZeroAdvantagePolicy;
  /**
   * false: the policy's server judges and trains (a remote policy), so the loop neither judges nor
   * buffers nor trains; it counts a step per `batchSize` closed main turns (what the server
   * trains on when its batch is set alike), and evaluates on that schedule. Absent: true.
   */
  trainsHere?: boolean;
  /**
   * A fixed schedule (version-schedule.ts): which version answers each session, and the order in
   * which samples are buffered, follow the sessions' indices, so a run is a function of its config
   * and seed. Only where the loop trains here and the policy keeps pinned versions; absent: false,
   * the loop runs free (serving never waits for training), as `serve` and talk-yourself do.
   */
  fixedSchedule?: boolean;
  /** Tools every prompt of this track is rendered with, for training on the same prompt it was sampled from. */
  tools?: readonly object[];
}
