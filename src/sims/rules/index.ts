import type { TextGenerator } from '../../generators/generator';
import type { HomeworkPhase, Scenario } from '../scenarios/scenario';
import { normaliseChild } from '../scenarios/storyteller';
import { RulesEvaluator, type RulesRating } from './evaluator';
import { RulesJudge } from './judge';
import type { RulesProfile } from './profile';
import { rateStory } from './story-score';
import { storytellerRules } from './storyteller';
import { STUDENT_RULES } from './student';
import { TEACHER_RULES } from './teacher';
import { PhasedRulesUser, RulesUser } from './user';

/**
 * The offline stand-ins for a scenario's models. The judges work for every scenario; the user and
 * the evaluator exist only where the scenario's wishes are written down as rules (not for a
 * custom persona, whose wishes are free text, nor for talk-yourself, where the person is the user).
 */
export interface ScenarioRules {
  user: TextGenerator | null;
  judge: TextGenerator;
  hintJudge: TextGenerator;
  evaluator: TextGenerator | null;
}

export function rulesProfileFor(scenario: Scenario): RulesProfile | null {
  switch (scenario.config.id) {
    case 'student':
      return STUDENT_RULES;
    case 'teacher':
      return TEACHER_RULES;
    case 'storyteller':
      return storytellerRules(normaliseChild(scenario.config));
    default:
      return null;
  }
}

/**
 * How the evaluator rates a first answer where the scenario reads answers more closely than by
 * counting its user's complaints: the storyteller scores what a reader finds (story-score.ts).
 */
function ratingFor(scenario: Scenario): RulesRating | undefined {
  if (scenario.config.id !== 'storyteller') return undefined;
  const child = normaliseChild(scenario.config);
  return (answer, question) => rateStory(child, question, answer);
}

const PHASE_RULES: Record<HomeworkPhase['id'], RulesProfile> = { student: STUDENT_RULES, teacher: TEACHER_RULES };

export function createRules(scenario: Scenario): ScenarioRules {
  const profile = rulesProfileFor(scenario);
  if (scenario.workspace) {
    // Each phase's user is its own (the student's, then the teacher's); the judges know them all,
    // the scenario's own first, and the evaluator scores the scenario's phase.
    const phases = scenario.workspace.phases;
    const profiles = [...phases].reverse().map((p) => PHASE_RULES[p.id]);
    const users = phases.map((p) => ({ persona: p.persona, user: new RulesUser(PHASE_RULES[p.id], { workspace: true }) }));
    return {
      user: users.length === 1 ? users[0].user : new PhasedRulesUser(users),
      judge: new RulesJudge('binary', profiles),
      hintJudge: new RulesJudge('hint', profiles),
      evaluator: profile && new RulesEvaluator(profile),
    };
  }
  return {
    user: profile && new RulesUser(profile),
    judge: new RulesJudge('binary', profile),
    hintJudge: new RulesJudge('hint', profile),
    evaluator: profile && new RulesEvaluator(profile, ratingFor(scenario)),
  };
}

export { RulesUser, PhasedRulesUser } from './user';
export { RulesJudge, type JudgeMode } from './judge';
export { RulesEvaluator, type RulesRating } from './evaluator';
export {
  rateStory,
  readStory,
  storyEvaluationScores,
  storyKeywordScore,
  storyScore,
  storyShape,
  STORY_WISHES,
  type StoryReading,
  type StoryShape,
  type StoryWishId,
} from './story-score';
export { RulesInputError, readNextState, readSimulatorView, type SimulatorView } from './reading';
export { classifyReaction, type Reaction } from './reaction';
export type { Issue, RulesProfile } from './profile';
