export { type Problem, PROBLEM_LIMITS, ProblemFileError } from './problem';
export { parseGsm8kAnswer, gsm8kSteps, Gsm8kAnswerError } from './gsm8k-answer';
export { parseProblemsText, readProblemFile } from './problem-file';
export { fetchGsm8kFromHub, gsm8kRowsUrl, DatasetDownloadError, type HubOptions } from './gsm8k-hub';
export { BUILT_IN_PROBLEMS } from './builtin';
export { storyOpenings } from './story-openings';
export {
  GSM8K_TEST_ROWS,
  inReferenceOrder,
  PROBLEM_ORDERS,
  REFERENCE_ORDER,
  REFERENCE_ORDER_SOURCE,
  referenceRows,
  type ProblemOrder,
} from './reference-order';
