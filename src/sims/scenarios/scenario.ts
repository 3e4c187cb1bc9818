import type { BaseModelReplies } from '../../gpu/policy';
import type { Problem } from '../problems/problem';
import type { WordingSet } from '../rules/story-instructions';

/** The scenarios, in the picker's display order: the one list, which the run config's checker reads. */
export const SCENARIO_IDS = ['student', 'teacher', 'storyteller', 'custom', 'talk'] as const;
export type ScenarioId = (typeof SCENARIO_IDS)[number];

/** Where a scenario's tasks come from. */
export type ProblemSource = 'gsm8k' | 'story-openings' | 'none';

/** What a run stores to recreate its scenario: plain JSON. */
export type ScenarioConfig = HomeworkScenarioConfig | StorytellerScenarioConfig | CustomScenarioConfig | { id: 'talk' };

/**
 * Where the homework is: 'chat' (absent: the default), the problem and the student's work are in
 * the messages; 'workspace', they are files the policy reads and appends to with its tools, as
 * in the reference's runners (docs/lab.md, The student and the teacher).
 */
export const HOMEWORK_MODES = ['chat', 'workspace'] as const;
export type HomeworkMode = (typeof HOMEWORK_MODES)[number];

export interface HomeworkScenarioConfig {
  id: 'student' | 'teacher';
  homework?: HomeworkMode;
}

/** The storyteller's child: what their pet is, its name and its favourite thing. */
export interface StorytellerScenarioConfig {
  id: 'storyteller';
  /** The pet: "dog", "little cat". */
  subject?: string;
  /** The pet's name, one capitalised word: "Max". */
  name?: string;
  /** The pet's favourite thing, one or two words: "kite", "red ball". */
  favourite?: string;
  /**
   * The wordings the rules judge writes its hints in: 'held-out' (default), paraphrases the demo
   * model was never fine-tuned on; 'fine-tuning', the ones it was (to show how much wording matters).
   */
  hintWording?: WordingSet;
  /**
   * How the rules child accepts a story: 'graded' (default) accepts one that meets most wishes,
   * the more readily the more it meets (STORY_ACCEPTANCE); 'strict' only one that meets all.
   */
  acceptance?: 'graded' | 'strict';
}

export interface CustomScenarioConfig {
  id: 'custom';
  /** Who the simulated user is and what they want, in the person's words. */
  persona: string;
  /** What a good first answer looks like to this user; the evaluator scores against it. */
  preference: string;
  doneMarker?: string;
  maxTurns?: number;
  problemSource?: 'gsm8k' | 'none';
  /** The user's first message; `{question}` is replaced by the problem. */
  firstMessageTemplate?: string;
}

/**
 * A simulated-user setting, declared as data: the simulator's system prompt, how the first message
 * is made from a problem, how the simulator says it is finished, and what the evaluator looks for.
 */
export interface Scenario {
  /** With every default filled in. */
  readonly config: ScenarioConfig;
  readonly id: ScenarioId;
  readonly title: string;
  /** One line for the scenario picker. */
  readonly summary: string;
  /** System prompt of an LLM-simulated user; null when the person at the keyboard is the user. */
  readonly persona: string | null;
  readonly firstMessage: (problem: Problem) => string;
  /** The simulator ends the conversation by writing this; null when only the person ends it. */
  readonly doneMarker: string | null;
  /** Policy answers per conversation; null for no limit. */
  readonly maxTurns: number | null;
  /** What a base-model policy is shown of the user's later messages (Policy.promptText). */
  readonly baseModelReplies: BaseModelReplies;
  /** What the personalization evaluator rewards; null when the scenario has no score. */
  readonly preference: string | null;
  readonly problemSource: ProblemSource;
  /** The homework workspace's phases; null for a plain chat (every scenario but a workspace student or teacher). */
  readonly workspace: HomeworkWorkspace | null;
  /**
   * The judge's hints as they would read for another user of this scenario, drawn by the run's
   * seed: the other-child control (preset advantage.hintSource "other-child"). Absent where the
   * scenario has no other user to write for: only the storyteller has one.
   */
  readonly otherUserHints?: (seed: number) => OtherUserHints;
}

/** Another user of a scenario, and the judge's hints rewritten for them (Scenario.otherUserHints). */
export interface OtherUserHints {
  /** Who the hints are rewritten for, as the run's records name them ("cat/Tom/hat"). */
  user: string;
  rewrite: (hint: string) => string;
}

/**
 * One conversation over a homework's files: a simulated user who asks the policy to work on
 * `path` and, once happy with the answer in the chat, in a separate message to append it there.
 */
export interface HomeworkPhase {
  id: 'student' | 'teacher';
  /** The simulator's system prompt for this phase. */
  persona: string;
  firstMessage: (problem: Problem, path: string) => string;
  doneMarker: string;
  maxTurns: number;
}

/**
 * The phases each homework runs, in order, over one workspace: the student's alone, or the
 * student's then the teacher's (the teacher grades what the student phase left in the file).
 */
export interface HomeworkWorkspace {
  phases: readonly HomeworkPhase[];
}

export class ScenarioConfigError extends Error {
  override name = 'ScenarioConfigError';
}
