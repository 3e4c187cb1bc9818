import { standardizeByStep, type StepSample } from '../../rl/advantages';
import { InvalidArgumentError } from '../../rl/errors';
import type { TextGenerator } from '../../generators/generator';
import type { Problem } from '../problems/problem';
import { runToolEpisode, type EpisodeOptions, type PolicyOutput, type PolicyStep, type Trajectory } from './environment';
import { scoreTrajectory, type ScoreOptions, type ScoredTrajectory } from './prm';

/**
 * Group sampling for the tool-call track: n rollouts of one problem, step rewards from the PRM,
 * and advantages standardized among the actions of the group that share a step index (the
 * first tool call of every rollout is compared with the other first calls, and so on).
 *
 * A step's advantage belongs to that step's tokens only; mapping it onto token positions is the
 * trainer's job, so advantages here are keyed by rollout and step.
 */

export const DEFAULT_GROUP_SIZE = 8;

export interface StepAdvantage {
  step: number;
  reward: number;
  /** Standardized within the step's group; null when the group carries no ranking (all equal). */
  advantage: number | null;
}

/**
 * Advantages for a group of scored rollouts of the same problem, via the method library's
 * standardizeByStep (population std, +1e-6; equal rewards drop; a step reached by a single
 * rollout keeps its raw reward).
 *
 * @returns per rollout, per step in step order
 */
export function groupAdvantages(group: readonly Pick<ScoredTrajectory, 'steps'>[]): StepAdvantage[][] {
  const samples: StepSample[] = group.flatMap((scored) => scored.steps.map((s) => ({ step: s.step, reward: s.reward })));
  const advantages = standardizeByStep(samples);
  let next = 0;
  return group.map((scored) => scored.steps.map((s) => ({ step: s.step, reward: s.reward, advantage: advantages[next++] })));
}

export interface GroupOptions extends EpisodeOptions {
  /** Rollouts per problem. */
  n?: number;
}

/** n independent episodes of one problem, run concurrently. */
export async function sampleGroup<O extends PolicyOutput>(
  problem: Pick<Problem, 'question' | 'answer'>,
  policy: PolicyStep<O>,
  opts: GroupOptions = {},
): Promise<Trajectory<O>[]> {
  const n = opts.n ?? DEFAULT_GROUP_SIZE;
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`n is ${n}; a group needs a whole number of rollouts, at least 1.`);
  return Promise.all(Array.from({ length: n }, () => runToolEpisode(problem, policy, opts)));
}

export interface GroupResult<O extends PolicyOutput = PolicyOutput> {
  scored: ScoredTrajectory<O>[];
  advantages: StepAdvantage[][];
  /** Fraction of rollouts whose outcome is +1. */
  solved: number;
}

/** Samples, scores and standardizes one problem's group. */
export async function runGroup<O extends PolicyOutput>(
  problem: Pick<Problem, 'question' | 'answer'>,
  policy: PolicyStep<O>,
  judge: TextGenerator,
  opts: GroupOptions & ScoreOptions,
): Promise<GroupResult<O>> {
  const trajectories = await sampleGroup(problem, policy, opts);
  const scored = await Promise.all(trajectories.map((t) => scoreTrajectory(t, judge, opts)));
  return {
    scored,
    advantages: groupAdvantages(scored),
    solved: trajectories.filter((t) => t.outcome === 1).length / trajectories.length,
  };
}
