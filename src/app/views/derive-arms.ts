/**
 * Overlaid runs read as a comparison of arms: each run's arm from its config, and per arm the
 * personalization score at each evaluation step as the mean and range over its runs (its seeds).
 * The base arm is no run of its own: it is every run's step-0 evaluation, the untrained policy.
 * Pure; tested in Node (derive-arms.test.ts).
 */
import { HINT_SOURCES, METHODS, type HintSource, type MethodName } from '../../rl/presets';
import type { RunRecord } from '../../rl/records';
import { ARM_TITLES, armOf, TRAINED_ARMS, type Arm, type TrainedArm } from '../../runtime/arms';
import { evalSeries } from './derive-evaluations';
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

/** Per step, the spread of the scores `runs` have there, in step order. */
function pointsOf(runs: readonly { step: number; score: number | null }[][]): { step: number; score: Spread }[] {
  const at = new Map<number, number[]>();
  for (const points of runs)
    for (const p of points) {
      if (p.score === null) continue;
      at.set(p.step, [...(at.get(p.step) ?? []), p.score]);
    }
  return [...at.entries()].sort(([a], [b]) => a - b).map(([step, scores]) => ({ step, score: spread(scores)! }));
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
  const base = spread(series.flatMap((points) => points.filter((p) => p.step === 0 && p.score !== null).map((p) => p.score!)));
  const lines: ArmLine[] = [];
  if (base) lines.push({ arm: 'base', title: ARM_TITLES.base, runs: runs.length, points: [{ step: 0, score: base }] });
  for (const arm of TRAINED_ARMS) {
    const mine = series.filter((_, i) => arms[i] === arm);
    if (mine.length) lines.push({ arm, title: ARM_TITLES[arm], runs: mine.length, points: pointsOf(mine) });
  }
  // Runs without a score (talk-yourself runs, or none evaluated yet) have nothing to compare.
  return lines.some((l) => l.points.length > 0) ? lines : null;
}

/** A spread as the summary table writes it: the mean, the range over runs that differ, and how many of the arm's runs it covers when not all. */
export function spreadText(s: Spread | undefined, runs: number): string {
  if (!s) return '–';
  // Seeds that agree to the digits shown have no range worth writing.
  const range = fmt(s.min) !== fmt(s.max) ? ` (${fmt(s.min)}–${fmt(s.max)})` : '';
  const some = s.n < runs ? `, ${s.n} of ${runs} runs` : '';
  return `${fmt(s.mean)}${range}${some}`;
}
