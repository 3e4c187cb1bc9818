/**
 * The evaluations of a run log as the views show them: the score series and each problem's
 * answer before and after training (the paper's Figure 2). Pure; tested in Node (derive.test.ts).
 */
import type { EvaluationRecord, RunRecord } from '../../rl/records';
import { finite } from './record-values';

/** The evaluation the paper reports (the simulator's rating of the first answer). */
export const PERSONALIZATION = 'personalization';

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
  baseline: AnswerView;
  /** The latest evaluation's answer; null when there is only the baseline. */
  latest: AnswerView | null;
}

function answerOf(e: EvaluationRecord, id: string): AnswerView | null {
  const p = e.perProblem.find((x) => x.id === id);
  if (!p) return null;
  return {
    id,
    text: p.detail ?? null,
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
    out.push({ id: p.id, baseline, latest: last ? answerOf(last, p.id) : null });
  }
  return out;
}
