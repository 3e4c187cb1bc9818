/**
 * The evaluations of a run log as the views show them: the score series and each problem's
 * answer before and after training (the paper's Figure 2). Pure; tested in Node (derive.test.ts).
 */
import type { EvaluationRecord, RunRecord } from '../../rl/records';
import { STORY_WISHES, wishRateKey } from '../../sims/rules/story-score';
import { readReply } from '../../rl/readable-text';
import { finite } from './record-values';

/** The evaluation the paper reports (the simulator's rating of the first answer). */
export const PERSONALIZATION = 'personalization';

export interface WishRate {
  /** The key of the evaluation's scores that holds the rate (storyEvaluationScores). */
  key: string;
  title: string;
  /**
   * The wish no other child shares (the pet's name): the one rate the other-child control, whose
   * hints carry another child's wishes, cannot learn from them.
   */
  own: boolean;
}

/**
 * The rates a storyteller's evaluation carries beside its score, in the order the views show
 * them: each wish's share of the evaluation stories that meet it, then the share of replies that
 * read as stories at all, since a reply that is no story meets no wish.
 */
export const WISH_RATES: readonly WishRate[] = [
  ...STORY_WISHES.map((id) => ({ key: wishRateKey(id), title: id, own: id === 'name' })),
  { key: 'story', title: 'stories', own: false },
];

/**
 * An evaluation's WISH_RATES (null where one is missing), or null when it has none: older logs
 * and other scenarios, which the views then show no wishes for.
 */
export function wishRatesOf(scores: Readonly<Record<string, number>>): (number | null)[] | null {
  const rates = WISH_RATES.map((w) => finite(scores[w.key]));
  return rates.some((r) => r !== null) ? rates : null;
}

/**
 * What the personalization score means, in one line. A storyteller's evaluations carry wish rates
 * (wishRatesOf), and its score reads each story for the child's five wishes (story-score.ts).
 */
export function scoreMeaning(storyteller: boolean): string {
  return storyteller
    ? `Score 0–1: the evaluator’s rating of the first story told to each held-out opening, averaged. A story that meets all five of the child’s wishes (${STORY_WISHES.join(', ')}) rates 1, each wish missed costs 0.25, and a reply that is not a story meets none and rates 0.`
    : 'Score 0–1: the evaluator’s rating of the policy’s first answer to each held-out problem, averaged: how well it suits the simulated user’s preferences.';
}

export interface EvalPoint {
  /** Train steps done when the policy was evaluated (the record's step, else counted). */
  step: number;
  version: number;
  ts: number;
  score: number | null;
  /** Problems whose evaluator votes all failed, left out of the score; null for older logs. */
  failed: number | null;
  /** Problems the evaluation scored (failed ones included). */
  problems: number;
  /** The evaluation's wish rates, in WISH_RATES order (wishRatesOf). */
  wishes: (number | null)[] | null;
}

export interface EvalSeries {
  points: EvalPoint[];
  /** The first evaluation's score: the policy before training. */
  baseline: number | null;
}

/** The evaluations named `name`, in log order, with the first as the baseline. */
export function evalSeries(records: readonly RunRecord[], name: string = PERSONALIZATION): EvalSeries {
  const points: EvalPoint[] = [];
  let stepsDone = 0;
  for (const r of records) {
    if (r.kind === 'train_step') stepsDone = Math.max(stepsDone, r.step);
    else if (r.kind === 'evaluation' && r.name === name) {
      points.push({
        step: r.step ?? stepsDone,
        version: r.version,
        ts: r.ts,
        score: finite(r.scores.score),
        failed: r.failed ?? null,
        problems: r.perProblem.length,
        wishes: wishRatesOf(r.scores),
      });
    }
  }
  return { points, baseline: points.length ? points[0].score : null };
}

export interface AnswerView {
  id: string;
  text: string | null;
  score: number | null;
  version: number;
  step: number | null;
  /** The whole evaluation's score. */
  evalScore: number | null;
  /** The evaluation's problems left out of evalScore because their votes all failed; null for older logs. */
  evalFailed: number | null;
}

export interface BeforeAfterProblem {
  id: string;
  /** The problem as the policy was shown it (a story opening), null in logs that did not record it. */
  prompt: string | null;
  /** Problems the evaluation scored: what the evaluation's score is a mean over. */
  of: number;
  baseline: AnswerView;
  /** The latest evaluation's answer; null when there is only the baseline. */
  latest: AnswerView | null;
}

function answerOf(e: EvaluationRecord, id: string): AnswerView | null {
  const p = e.perProblem.find((x) => x.id === id);
  if (!p) return null;
  return {
    id,
    text: p.detail === undefined ? null : readReply(p.detail, p.detailTokens),
    score: finite(p.score),
    version: e.version,
    step: e.step ?? null,
    evalScore: finite(e.scores.score),
    evalFailed: e.failed ?? null,
  };
}

/**
 * Each problem of the first evaluation named `name` with its answer there (the baseline) and in
 * the latest such evaluation (the paper's Figure 2).
 */
export function beforeAfter(records: readonly RunRecord[], name: string = PERSONALIZATION): BeforeAfterProblem[] {
  const evals = records.filter((r): r is EvaluationRecord => r.kind === 'evaluation' && r.name === name);
  if (evals.length === 0) return [];
  const first = evals[0];
  const last = evals.length > 1 ? evals[evals.length - 1] : null;
  const out: BeforeAfterProblem[] = [];
  for (const p of first.perProblem) {
    const baseline = answerOf(first, p.id);
    if (!baseline) continue;
    out.push({ id: p.id, prompt: p.prompt ?? null, of: first.perProblem.length, baseline, latest: last ? answerOf(last, p.id) : null });
  }
  return out;
}

export interface WishesBeforeAfter {
  before: { step: number; version: number };
  /** The latest evaluation; null when there is only the first. */
  now: { step: number; version: number } | null;
  /** One per WISH_RATES entry: its rate at the first evaluation and at the latest. */
  rows: (WishRate & { before: number | null; now: number | null })[];
}

/**
 * The wish rates of the first evaluation named `name` (before training) and of the latest, or
 * null when neither carries any.
 */
export function wishesBeforeAfter(records: readonly RunRecord[], name: string = PERSONALIZATION): WishesBeforeAfter | null {
  const { points } = evalSeries(records, name);
  if (points.length === 0) return null;
  const first = points[0];
  const last = points.length > 1 ? points[points.length - 1] : null;
  if (!first.wishes && !last?.wishes) return null;
  return {
    before: { step: first.step, version: first.version },
    now: last && { step: last.step, version: last.version },
    rows: WISH_RATES.map((w, i) => ({ ...w, before: first.wishes?.[i] ?? null, now: last?.wishes?.[i] ?? null })),
  };
}
