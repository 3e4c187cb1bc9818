export type { TextGenerator, GenerateOptions, GeneratorKind } from './generator';
export { OpenAICompatibleGenerator, describeEndpoint, type EndpointConfig, type EndpointDescription } from './endpoint';
export * from './endpoint-errors';
export {
  TransformersGenerator,
  TransformersLoadError,
  pickDevice,
  type TransformersConfig,
  type TransformersDevice,
  type DownloadProgress,
} from './transformers';
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
