/**
 * Overlaid runs read as a comparison of arms: each run's arm from its config, and per arm the
 * personalization score at each evaluation step as the mean and range over its runs (its seeds),
 * and so each of the storyteller's wish rates. The base arm is no run of its own: it is every
 * run's step-0 evaluation, the untrained policy.
 * Pure; tested in Node (derive-arms.test.ts).
 */
import { HINT_SOURCES, METHODS, type HintSource, type MethodName } from '../../rl/presets';
import type { RunRecord } from '../../rl/records';
import { ARM_TITLES, armOf, TRAINED_ARMS, type Arm, type TrainedArm } from '../../runtime/arms';
import { evalSeries, WISH_RATES, type EvalPoint, type WishRate } from './derive-evaluations';
import { fmt } from './format';

export interface ArmRun {
  /** The run's stored config (RunInfo.config), read here only for its arm and scenario. */
  config: unknown;
  records: readonly RunRecord[];
}

/** Scores of one arm at one step, over the runs that have one there. */
export interface Spread {
  mean: number;
  min: number;
  max: number;
  n: number;
}

export interface ArmLine {
  arm: Arm;
  title: string;
  /** The arm's runs, scored at a step or not. */
  runs: number;
  points: { step: number; score: Spread }[];
  /**
   * Per evaluation step with any wish rate, each WISH_RATES rate's spread (null where no run has
   * it); empty for runs whose evaluations carry none (older logs, other scenarios).
   */
  wishes: { step: number; rates: (Spread | null)[] }[];
}

const field = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/** The trained arm a run's config makes; null for a tool-call run or a config without a known method. */
export function armOfConfig(config: unknown): TrainedArm | null {
  if (field(config, 'track') === 'toolcall') return null;
  const method = field(config, 'method');
  if (!(METHODS as readonly unknown[]).includes(method)) return null;
  const source = field(field(field(config, 'preset'), 'advantage'), 'hintSource');
  return armOf(method as MethodName, (HINT_SOURCES as readonly unknown[]).includes(source) ? (source as HintSource) : 'judge');
}

function spread(scores: number[]): Spread | null {
  if (scores.length === 0) return null;
  return { mean: scores.reduce((a, b) => a + b, 0) / scores.length, min: Math.min(...scores), max: Math.max(...scores), n: scores.length };
}

/** Per step, the spread of the values `value` reads in `runs`' evaluations there, in step order. */
function spreadsByStep(runs: readonly EvalPoint[][], value: (p: EvalPoint) => number | null): Map<number, Spread> {
  const at = new Map<number, number[]>();
  for (const points of runs)
    for (const p of points) {
      const v = value(p);
      if (v === null) continue;
      at.set(p.step, [...(at.get(p.step) ?? []), v]);
    }
  return new Map([...at.entries()].sort(([a], [b]) => a - b).map(([step, values]) => [step, spread(values)!]));
}

function pointsOf(runs: readonly EvalPoint[][]): ArmLine['points'] {
  return [...spreadsByStep(runs, (p) => p.score)].map(([step, score]) => ({ step, score }));
}

function wishesOf(runs: readonly EvalPoint[][]): ArmLine['wishes'] {
  const perRate = WISH_RATES.map((_, i) => spreadsByStep(runs, (p) => p.wishes?.[i] ?? null));
  const steps = [...new Set(perRate.flatMap((m) => [...m.keys()]))].sort((a, b) => a - b);
  return steps.map((step) => ({ step, rates: perRate.map((m) => m.get(step) ?? null) }));
}

/**
 * The base line and one line per trained arm (in TRAINED_ARMS order) of overlaid runs, or null
 * when they are not a comparison of arms: fewer than two runs, a run without an arm (tool-call
 * runs compare reward modes instead), runs of different scenarios, whose means would mix what
 * is not comparable, or no score yet.
 */
export function armLines(runs: readonly ArmRun[]): ArmLine[] | null {
  if (runs.length < 2) return null;
  const arms = runs.map((r) => armOfConfig(r.config));
  if (arms.some((a) => a === null)) return null;
  if (new Set(runs.map((r) => field(field(r.config, 'scenario'), 'id'))).size > 1) return null;
  const series = runs.map((r) => evalSeries(r.records).points);
  const untrained = series.map((points) => points.filter((p) => p.step === 0));
  const base = pointsOf(untrained);
  const lines: ArmLine[] = [];
  if (base.length) lines.push({ arm: 'base', title: ARM_TITLES.base, runs: runs.length, points: base, wishes: wishesOf(untrained) });
  for (const arm of TRAINED_ARMS) {
    const mine = series.filter((_, i) => arms[i] === arm);
    if (mine.length) lines.push({ arm, title: ARM_TITLES[arm], runs: mine.length, points: pointsOf(mine), wishes: wishesOf(mine) });
  }
  // Runs without a score (talk-yourself runs, or none evaluated yet) have nothing to compare.
  return lines.some((l) => l.points.length > 0) ? lines : null;
}

export interface WishesMet {
  /** The step the trained arms are read at; the base is read at step 0. */
  step: number;
  columns: readonly WishRate[];
  /** The base and each arm with wish rates, in the lines' order. */
  rows: { arm: Arm; title: string; runs: number; rates: (Spread | null)[] }[];
}

/**
 * Each arm's wish rates at the latest step every arm with wish rates has reached, so that no arm
 * is read further into training than another, and the base's at step 0; null when no run's
 * evaluations carry wish rates (not a storyteller, or an older log).
 */
export function wishesMet(lines: readonly ArmLine[]): WishesMet | null {
  const withRates = lines.filter((l) => l.wishes.length > 0);
  const trained = withRates.filter((l) => l.arm !== 'base');
  if (withRates.length === 0) return null;
  const reached = trained.map((l) => new Set(l.wishes.map((w) => w.step)));
  const common = [...(reached[0] ?? [0])].filter((step) => reached.every((steps) => steps.has(step)));
  if (common.length === 0) return null;
  const step = Math.max(...common);
  const rows = withRates.map((l) => ({
    arm: l.arm,
    title: l.title,
    runs: l.runs,
    rates: l.wishes.find((w) => w.step === (l.arm === 'base' ? 0 : step))?.rates ?? WISH_RATES.map(() => null),
  }));
  return { step, columns: WISH_RATES, rows };
}

/** A spread as the summary table writes it: the mean, the range over runs that differ, and how many of the arm's runs it covers when not all. */
export function spreadText(s: Spread | undefined, runs: number): string {
  if (!s) return '–';
  // Seeds that agree to the digits shown have no range worth writing.
  const range = fmt(s.min) !== fmt(s.max) ? ` (${fmt(s.min)}–${fmt(s.max)})` : '';
  const some = s.n < runs ? `, ${s.n} of ${runs} runs` : '';
  return `${fmt(s.mean)}${range}${some}`;
}
