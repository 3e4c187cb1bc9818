import type { TrainStats } from '../../../src/rl/records';

/** The stats a skipped train step logs: nothing was computed, so every value is null and no tokens were seen. */
export const skippedStats: TrainStats = {
  loss: null,
  policyLoss: null,
  kl: null,
  clipFracLow: null,
  clipFracHigh: null,
  entropy: null,
  meanAbsAdv: null,
  gradNorm: null,
  tokens: 0,
  stepMs: null,
  logpGap: null,
};
