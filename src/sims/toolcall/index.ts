/**
 * The general-agent track (tool calls): GSM8K problems solved with a calculator tool, a PRM that
 * judges every step, step rewards r_t = o + mean(votes), and advantages standardized per step
 * index within a problem's group of rollouts.
 */
export { evaluateArithmetic, ArithmeticError, ARITHMETIC_LIMITS, ALLOWED_SYNTAX, FUNCTION_NAMES, type ArithmeticErrorKind } from './arithmetic';
export { formatNumber } from './format';
export { CALCULATOR_NAME, CALCULATOR_TOOL, TOOL_ERROR_PREFIX, runCalculator, toolError, type ToolOutcome } from './calculator';
export { parseToolCalls, TOOL_CALL_OPEN, TOOL_CALL_CLOSE, type CalculatorCall, type ToolCallError, type ParsedToolCalls } from './calls';
export { readFinalAnswer, numbersIn, sameAnswer, ANSWER_TOLERANCE, type FinalAnswer, type AnswerSource } from './answer';
export {
  runToolEpisode,
  runToolCalls,
  episodeMessages,
  generatorPolicy,
  PolicyOutputError,
  TOOL_SYSTEM_PROMPT,
  DEFAULT_MAX_STEPS,
  DEFAULT_MAX_CALLS_PER_STEP,
  type PolicyOutput,
  type PolicyStep,
  type EpisodeOptions,
  type EpisodeEnd,
  type ToolResult,
  type TrajectoryStep,
  type Trajectory,
} from './environment';
export {
  stepJudgeInputs,
  scoreTrajectory,
  DEFAULT_JUDGE_TEMPERATURE,
  REWARD_MODES,
  type RewardMode,
  type ScoreOptions,
  type StepScore,
  type ScoredTrajectory,
} from './prm';
export { RulesStepJudge } from './rules-judge';
export { groupAdvantages, sampleGroup, runGroup, DEFAULT_GROUP_SIZE, type StepAdvantage, type GroupOptions, type GroupResult } from './group';
