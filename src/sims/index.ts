export * from './problems/index';
export * from './scenarios/index';
export * from './rules/index';
export { EVALUATOR_SCORES, buildEvaluatorPrompt, readEvaluatorPrompt, parseEvaluatorScore } from './evaluator-prompt';
export {
  scoreEvaluation,
  type EvaluationItem,
  type EvaluationOptions,
  type EvaluationProgress,
  type EvaluationResult,
  type ProblemEvaluation,
} from './evaluator';
