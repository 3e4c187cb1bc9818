import { buildEvaluatorPrompt, parseEvaluatorScore } from './evaluator-prompt';
import type { TextGenerator } from '../generators/generator';

/** One problem to score: the user's first message and the policy's first answer to it. */
export interface EvaluationItem {
  id: string;
  question: string;
  answer: string;
}

export interface EvaluationProgress {
  votesDone: number;
  votesTotal: number;
  problemsDone: number;
  problemsTotal: number;
}

export interface EvaluationOptions {
  /** What this user wants; the scenario's `preference`. */
  preference: string;
  /** Independent evaluator samples per problem. */
  votes?: number;
  temperature?: number;
  maxNewTokens?: number;
  signal?: AbortSignal;
  onProgress?: (progress: EvaluationProgress) => void;
}

export interface ProblemEvaluation {
  id: string;
  /** Mean of the valid votes; null when there was none (the problem failed). */
  score: number | null;
  /** Parsed score of each vote, null where the vote had no valid \boxed{} score. */
  votes: (number | null)[];
  /** The evaluator's raw replies, for inspection. */
  texts: string[];
  /** True when no vote was valid. */
  failed: boolean;
}

export interface EvaluationResult {
  /**
   * Mean over the scored problems: the personalization score. A failed problem is left out,
   * not counted as 0 (an evaluator that cannot answer in format says nothing about the
   * policy); null when no problem was scored.
   */
  score: number | null;
  perProblem: ProblemEvaluation[];
  /** Problems left out of the score because none of their votes was valid. */
  failedProblems: number;
}

/**
 * The paper's personalization score: the simulator rates each first answer m times against the
 * user's preference, each problem scores the mean of its valid votes, and the run scores the mean
 * over the problems that have one. Calls run one at a time, since one model usually serves them all.
 */
export async function scoreEvaluation(generator: TextGenerator, items: readonly EvaluationItem[], options: EvaluationOptions): Promise<EvaluationResult> {
  const votes = options.votes ?? 3;
  if (!Number.isInteger(votes) || votes < 1) throw new RangeError(`votes must be a whole number ≥ 1, not ${votes}.`);
  const progress: EvaluationProgress = {
    votesDone: 0,
    votesTotal: items.length * votes,
    problemsDone: 0,
    problemsTotal: items.length,
  };
  const problems: ProblemEvaluation[] = [];
  for (const [index, item] of items.entries()) {
    const messages = buildEvaluatorPrompt(options.preference, item.question, item.answer);
    const texts: string[] = [];
    for (let vote = 0; vote < votes; vote++) {
      options.signal?.throwIfAborted();
      texts.push(
        await generator.generate(messages, {
          temperature: options.temperature ?? 0.6,
          maxNewTokens: options.maxNewTokens,
          seed: index * votes + vote,
          signal: options.signal,
        }),
      );
      progress.votesDone++;
      options.onProgress?.({ ...progress });
    }
    problems.push(problemScore(item.id, texts));
    progress.problemsDone++;
    options.onProgress?.({ ...progress });
  }
  return {
    score: mean(problems.flatMap((p) => (p.score === null ? [] : [p.score]))),
    perProblem: problems,
    failedProblems: problems.filter((p) => p.failed).length,
  };
}

function problemScore(id: string, texts: string[]): ProblemEvaluation {
  const votes = texts.map(parseEvaluatorScore);
  const valid = votes.filter((v): v is number => v !== null);
  return { id, score: mean(valid), votes, texts, failed: valid.length === 0 };
}

function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}
