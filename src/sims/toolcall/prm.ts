import { stepwiseRewards } from '../../rl/advantages';
import { InvalidArgumentError } from '../../rl/errors';
import { outcomeReward, type WrongAnswerReward } from '../../rl/tool-call-reward';
import { buildStepJudgePrompt, parseStepVote, type StepJudgeInput, type StepVote } from '../../rl/step-judge';
import type { GenerateOptions, TextGenerator } from '../../generators/generator';
import type { PolicyOutput, Trajectory } from './environment';

/**
 * The process reward model (PRM) for tool-call trajectories: a judge votes +1 or -1 on every
 * step (its prompt is the method library's step judge), and the step reward is
 * r_t = o + mean(votes) (integrated) or r_t = o (outcome only), as computed by the method
 * library's stepwiseRewards; o is the final answer's reward (outcomeReward: a wrong answer may be
 * shaped by the trajectory's rounds of tool calls).
 */

/** Sampling temperature of the judge unless the caller sets one (the reference's default). */
export const DEFAULT_JUDGE_TEMPERATURE = 0.6;

/** What the judge sees for each step of a trajectory, in step order. */
export function stepJudgeInputs(trajectory: Trajectory<PolicyOutput>): StepJudgeInput[] {
  // Messages the episode started with (system prompt, question) are the task, not history.
  const taskLength = trajectory.steps[0]?.messages.length ?? 0;
  return trajectory.steps.map((step) => ({
    question: trajectory.question,
    stepIndex: step.index,
    history: step.messages.slice(taskLength),
    output: step.output.text,
    toolResults: step.toolMessages.map((m) => m.content),
  }));
}

/** integrated: r_t = o + mean of the PRM votes; outcome: r_t = o (the judge is not called). */
export const REWARD_MODES = ['integrated', 'outcome'] as const;
export type RewardMode = (typeof REWARD_MODES)[number];

export interface ScoreOptions {
  /** m, the judge votes per step; ignored in outcome mode. */
  votes: number;
  mode: RewardMode;
  /** How a wrong final answer's o is rewarded (src/rl/tool-call-reward.ts); absent: 'flat', -1. */
  wrongAnswer?: WrongAnswerReward;
  temperature?: number;
  maxNewTokens?: number;
  /** Vote k of step t is sampled with seed + t * votes + k. */
  seed?: number;
  signal?: AbortSignal;
}

export interface StepScore {
  step: number;
  votes: StepVote[];
  /** The judge's raw replies, one per vote, for the run log. */
  texts: string[];
  reward: number;
}

export interface ScoredTrajectory<O extends PolicyOutput = PolicyOutput> {
  trajectory: Trajectory<O>;
  mode: RewardMode;
  /** The final answer's +1 or -1 (trajectory.outcome). */
  outcome: number;
  steps: StepScore[];
  /** r_t per step, in step order. */
  rewards: number[];
}

/**
 * Step rewards for one trajectory. All votes of all steps are requested at once; a judge that
 * serves one request at a time queues them.
 *
 * @throws InvalidArgumentError when votes is not a positive integer; whatever the judge throws
 */
export async function scoreTrajectory<O extends PolicyOutput>(
  trajectory: Trajectory<O>,
  judge: TextGenerator,
  opts: ScoreOptions,
): Promise<ScoredTrajectory<O>> {
  const rounds = trajectory.steps.filter((s) => s.toolMessages.length > 0).length;
  const o = outcomeReward(trajectory.outcome, rounds, opts.wrongAnswer ?? 'flat');
  if (opts.mode === 'outcome') {
    const rewards = stepwiseRewards(
      o,
      trajectory.steps.map(() => []),
    );
    const steps = trajectory.steps.map((s, t) => ({ step: s.index, votes: [], texts: [], reward: rewards[t] }));
    return { trajectory, mode: opts.mode, outcome: trajectory.outcome, steps, rewards };
  }
  const m = opts.votes;
  if (!Number.isInteger(m) || m < 1) {
    throw new InvalidArgumentError(`votes is ${m}; the PRM needs a whole number of votes per step, at least 1.`);
  }
  const texts = await Promise.all(
    stepJudgeInputs(trajectory).map((input, t) => {
      const prompt = buildStepJudgePrompt(input);
      return Promise.all(
        Array.from({ length: m }, (_, k) => {
          const generate: GenerateOptions = {
            temperature: opts.temperature ?? DEFAULT_JUDGE_TEMPERATURE,
            maxNewTokens: opts.maxNewTokens,
            seed: opts.seed === undefined ? undefined : opts.seed + t * m + k,
            signal: opts.signal,
          };
          return judge.generate(
            prompt.map((msg) => ({ ...msg })),
            generate,
          );
        }),
      );
    }),
  );
  const votes = texts.map((replies) => replies.map(parseStepVote));
  const rewards = stepwiseRewards(o, votes);
  const steps = trajectory.steps.map((s, t) => ({ step: s.index, votes: votes[t], texts: texts[t], reward: rewards[t] }));
  return { trajectory, mode: opts.mode, outcome: trajectory.outcome, steps, rewards };
}
