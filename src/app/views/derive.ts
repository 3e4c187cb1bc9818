// Pure functions that turn a run log (RunRecord[]) into what the views show. No DOM, no storage.
import type { RunRecord } from '../../rl/records';

/** One train step as the charts plot it; null where the value is unknown. */
export interface StepPoint {
  step: number;
  version: number;
  ts: number;
  samples: number;
  skipped: string | null;
  meanReward: number | null;
  votePos: number | null;
  voteNeg: number | null;
  voteZero: number | null;
  opdAcceptance: number | null;
  meanAbsAdv: number | null;
  loss: number | null;
  kl: number | null;
  clipFracLow: number | null;
  clipFracHigh: number | null;
  entropy: number | null;
  logpGap: number | null;
  genTokensPerSec: number | null;
  trainTokensPerSec: number | null;
}

export function stepSeries(_records: readonly RunRecord[]): StepPoint[] {
  return [];
}
