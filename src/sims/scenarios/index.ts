export type {
  Scenario,
  ScenarioConfig,
  ScenarioId,
  CustomScenarioConfig,
  StorytellerScenarioConfig,
  HomeworkScenarioConfig,
  HomeworkMode,
  HomeworkPhase,
  HomeworkWorkspace,
  ProblemSource,
  OtherUserHints,
} from './scenario';
export { ScenarioConfigError } from './scenario';
export { SCENARIO_IDS, createScenario } from './registry';
export { AI_REPLY_PREFIX, simulatorMessages, simulatorReply, isDone } from './simulator-view';
export { studentWorkWithSlip, type StudentWork } from './student-work';
export { HOMEWORK_DONE, STUDENT_PHASE } from './student';
export { GRADING_DONE, TEACHER_PHASE } from './teacher';
export { STORY_DONE, DEFAULT_STORY_SUBJECT, DEFAULT_PET_NAME, DEFAULT_FAVOURITE, STORY_MAX_NEW_TOKENS, normaliseChild, type StoryChild } from './storyteller';
export { childLabel, childMentionRates, otherChildFor, otherChildHints, OTHER_CHILDREN, type ChildWishes } from './other-child';
