/**
 * What serve's trainer thread and the serving thread say to each other (worker_threads
 * messages): typed unions, one member per kind, so each side's handling is checked to be
 * complete. The step's types are the run loop's (policy-service.ts).
 */
import type { BackendName } from '../../gpu/backend';
import type { PeftFiles } from '../../gpu/peft';
import type { StepStats } from '../../gpu/train-types';
import type { RunConfig } from '../../runtime/run-config';
import type { TrainItem } from '../../runtime/policy-service';

/** The worker's workerData: what it loads and how it trains. */
export interface TrainerInit {
  /** The served run's config, its policy pinned to the commit the serving thread loaded. */
  config: RunConfig;
  backend: BackendName;
  /** The adapter the serving thread continued from before the worker started (a resumed run). */
  start?: { files: PeftFiles; version: number };
  /**
   * Holds each step in flight, for tests: while hold[0] is 1 the worker sleeps before the step
   * (its thread blocked, as a long step blocks it), with hold[1] set to 1 meanwhile.
   */
  hold?: Int32Array;
}

export type TrainerRequest = { type: 'train'; id: number; items: TrainItem[] } | { type: 'restore'; id: number; files: PeftFiles; version: number };

export type TrainerReply =
  | { type: 'ready' }
  | { type: 'progress'; id: number; done: number; total: number }
  | { type: 'trained'; id: number; version: number; stats: StepStats; adapter: PeftFiles }
  | { type: 'restored'; id: number }
  /** id null: the worker failed to load. */
  | { type: 'failed'; id: number | null; name: string; message: string };
