/**
 * The per-step series of the charts, from a run log (RunRecord[]): what the lab plots and what
 * `nextstate export --metrics` writes. Pure; tested in Node (app/views/derive.test.ts).
 *
 * Step windows: train step k covers the records after train step k-1 (by `ts`) up to and
 * including train step k. Judge votes and results and generation throughput are counted by
 * window ("what the judges said while this step's batch filled"); rewards are those of the
 * samples the step actually trained (its token_update records), falling back to the window's
 * trainable samples for logs without token_update records.
 */
import type { RunRecord, SampleRecord, TokenUpdateRecord, TrainStepRecord } from '../rl/records';
import { finite, turnKey } from './record-keys';

function meanOf(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** One train step as the charts plot it; null where the value is unknown. */
export interface StepPoint {
  step: number;
  /** The train_step record's version (the policy that generated the step's data). */
  version: number;
  ts: number;
  samples: number;
  skipped: string | null;
  /** Mean r_final of the samples trained in the step (null: none had a reward). */
  meanReward: number | null;
  /** Shares of the step window's valid binary votes that were +1, -1 and 0 (null: no vote). */
  votePos: number | null;
  voteNeg: number | null;
  voteZero: number | null;
  /** Accepted hint-judge results / hint-judge results in the step window. */
  opdAcceptance: number | null;
  meanAbsAdv: number | null;
  loss: number | null;
  kl: number | null;
  clipFracLow: number | null;
  clipFracHigh: number | null;
  entropy: number | null;
  /** Rollout-train log-prob gap reported by the engine. */
  logpGap: number | null;
  /** Mean |A_OPD at training - A_OPD at sampling| of the step's OPD tokens (that gap's effect on OPD). */
  opdGap: number | null;
  /** Judged turns the method dropped (no sample) since the previous step; null for older logs. */
  dropped: number | null;
  /** Response tokens of interactions finished in the step window / window seconds. */
  genTokensPerSec: number | null;
  /** Trained tokens / step time. */
  trainTokensPerSec: number | null;
}

/**
 * One point per train_step record, in log order. Skipped steps are kept (with null training
 * statistics where the engine reported none) so that the step axis has no holes.
 */
export function stepSeries(records: readonly RunRecord[]): StepPoint[] {
  const steps: TrainStepRecord[] = [];
  const samples = new Map<string, SampleRecord>();
  const updatesByStep = new Map<number, TokenUpdateRecord[]>();
  for (const r of records) {
    if (r.kind === 'train_step') steps.push(r);
    else if (r.kind === 'sample') samples.set(turnKey(r.session, r.turn), r);
    else if (r.kind === 'token_update') {
      const list = updatesByStep.get(r.step);
      if (list) list.push(r);
      else updatesByStep.set(r.step, [r]);
    }
  }
  // Window k holds timestamps in (ends[k-1], ends[k]]; ends are made non-decreasing.
  const ends: number[] = [];
  for (const s of steps) ends.push(Math.max(s.ts, ends.length ? ends[ends.length - 1] : -Infinity));
  const windowOf = (ts: number): number => {
    let lo = 0;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid] >= ts) hi = mid;
      else lo = mid + 1;
    }
    return lo < ends.length ? lo : -1;
  };
  const acc = steps.map(() => ({
    pos: 0,
    neg: 0,
    zero: 0,
    hintResults: 0,
    hintAccepted: 0,
    genTokens: 0,
    firstStart: Infinity,
    samples: [] as SampleRecord[],
  }));
  for (const r of records) {
    if (r.kind === 'judge_vote' && r.judge === 'binary') {
      const w = windowOf(r.ts);
      if (w < 0) continue;
      if (r.score === 1) acc[w].pos++;
      else if (r.score === -1) acc[w].neg++;
      else if (r.score === 0) acc[w].zero++;
    } else if (r.kind === 'judge_result' && r.judge === 'hint') {
      const w = windowOf(r.ts);
      if (w < 0) continue;
      acc[w].hintResults++;
      if (r.accepted) acc[w].hintAccepted++;
    } else if (r.kind === 'interaction') {
      const w = windowOf(r.finishedAt);
      if (w < 0) continue;
      acc[w].genTokens += r.tokenIds.length;
      acc[w].firstStart = Math.min(acc[w].firstStart, r.startedAt);
    } else if (r.kind === 'sample' && r.trainable) {
      const w = windowOf(r.ts);
      if (w >= 0) acc[w].samples.push(r);
    }
  }
  return steps.map((s, k) => {
    const a = acc[k];
    const updates = updatesByStep.get(s.step);
    const trained = updates ? updates.map((u) => samples.get(turnKey(u.session, u.turn))).filter((x): x is SampleRecord => !!x) : a.samples;
    const rewards = trained.map((x) => x.reward).filter((x): x is number => typeof x === 'number');
    const votes = a.pos + a.neg + a.zero;
    const from = k > 0 ? ends[k - 1] : a.firstStart;
    const seconds = (ends[k] - from) / 1000;
    const stepMs = finite(s.stats.stepMs);
    return {
      step: s.step,
      version: s.version,
      ts: s.ts,
      samples: s.samples,
      skipped: s.skipped,
      meanReward: meanOf(rewards),
      votePos: votes ? a.pos / votes : null,
      voteNeg: votes ? a.neg / votes : null,
      voteZero: votes ? a.zero / votes : null,
      opdAcceptance: a.hintResults ? a.hintAccepted / a.hintResults : null,
      meanAbsAdv: finite(s.stats.meanAbsAdv),
      loss: finite(s.stats.loss),
      kl: finite(s.stats.kl),
      clipFracLow: finite(s.stats.clipFracLow),
      clipFracHigh: finite(s.stats.clipFracHigh),
      entropy: finite(s.stats.entropy),
      logpGap: finite(s.stats.logpGap),
      opdGap: finite(s.stats.opdGap),
      dropped: s.dropped ?? null,
      genTokensPerSec: a.genTokens > 0 && seconds > 0 ? a.genTokens / seconds : null,
      trainTokensPerSec: stepMs && stepMs > 0 && s.stats.tokens > 0 ? s.stats.tokens / (stepMs / 1000) : null,
    };
  });
}
