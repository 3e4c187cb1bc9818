/**
 * The OpenClaw-RL method as a pure TypeScript library: judge prompts and parsing, votes,
 * hints, advantages, PPO loss terms, sessions, sample batching, presets and the run log's
 * record types. No browser APIs and no dependencies; runs unchanged in Node and the page.
 */
export type { ChatMessage, Role } from './messages';
export { RlError, LengthMismatchError, InvalidArgumentError, PresetError, RecordValidationError } from './errors';
export { buildBinaryJudgePrompt, buildHintJudgePrompt } from './judge';
export {
  buildStepJudgePrompt,
  readStepJudgePrompt,
  parseStepVote,
  StepJudgePromptError,
  STEP_JUDGE_CLOSING,
  type StepJudgeInput,
  type StepVote,
} from './step-judge';
export { parseBoxedScore, boxContent, type BoxChoice, type BoxedScore } from './boxed';
export { majorityVote } from './votes';
export { parseHintVote, selectBestHint, appendHint, MIN_HINT_CHARS, HINT_HEADER, type HintVote, type AppendHintOptions } from './hints';
export {
  hintCandidates,
  overlapSize,
  overlapPerToken,
  chooseHintByOverlap,
  winningTeacherLogp,
  clipDifference,
  clippedOpdAdvantages,
  usesTopK,
  LONGEST_HINT,
  TOPK_HINT_SELECTION,
  TOPK_HINT_VOTES,
  type HintRule,
  type HintSelection,
  type HintChoice,
} from './topk-hints';
export {
  opdAdvantages,
  opdAdvantage,
  binaryAdvantages,
  combinedAdvantages,
  stepwiseRewards,
  standardizeByStep,
  summarizeAdvantages,
  STD_EPSILON,
  type AdvantageWeights,
  type StepSample,
  type AdvantageSummary,
} from './advantages';
export {
  ppoTokenLoss,
  k3,
  aggregateLoss,
  clipFractions,
  clipState,
  ppoBatchLoss,
  LOSS_AGGREGATIONS,
  type LossAggregation,
  type ClipStats,
  type ClipState,
  type PpoSampleInput,
  type PpoSettings,
  type PpoBatchStats,
} from './ppo';
export {
  SessionTracker,
  DEFAULT_IDLE_TIMEOUT_MS,
  TURN_TYPES,
  type TurnType,
  type TurnRequest,
  type ObservedTurn,
  type ClosedTurn,
  type CloseReason,
  type SessionEnd,
  SESSION_END_REASONS,
  type SessionEndReason,
  type TrackerEvents,
  type ObserveResult,
  type SessionTrackerOptions,
} from './sessions';
export {
  SampleBuffer,
  DEFAULT_BATCH_SIZE,
  ZERO_ADVANTAGE_POLICIES,
  type ZeroAdvantagePolicy,
  type BufferableSample,
  type BufferedSample,
  type Batch,
  type BufferStats,
  type AddResult,
  type SampleBufferOptions,
} from './buffer';
export { assembleSample, sampleRecord, type PolicyResponse, type TurnJudgement, type TrainingSample } from './samples';
export {
  makePreset,
  parsePreset,
  topKSelectPreset,
  hintSelectionOf,
  hintSourceOf,
  HINT_SOURCES,
  LR_FULL,
  LR_LORA,
  LORA_ALL_PROJECTIONS,
  type MethodName,
  type MethodPreset,
  type PresetOverrides,
  type TeacherSource,
  type HintSource,
  type FinetuneMode,
} from './presets';
export { HintShuffler } from './hint-shuffle';
export {
  RECORD_KINDS,
  turnCount,
  type RunRecord,
  type RecordKind,
  type RecordBase,
  type JudgeKind,
  type InteractionRecord,
  type JudgeVoteRecord,
  type JudgeResultRecord,
  type SampleRecord,
  type TrainStats,
  type TrainStepRecord,
  type ProblemScore,
  type EvaluationRecord,
  type VersionBoundaryRecord,
  type SessionEndRecord,
  type ToolStepRecord,
  type WorkspaceFileRecord,
  type TokenUpdateRecord,
  type RuntimeEventRecord,
  type SessionTurns,
} from './records';
export { validateRecord } from './validate';
export { RECORD_LIMITS } from './record-limits';
export { TRAJECTORY_FALLBACKS, type TrajectoryFallback } from './trajectory-sample';
