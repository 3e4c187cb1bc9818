/**
 * The tool-call track's run loop (docs/method.md#general-agents-tool-calls). Each worker takes the
 * next training problem and samples a group of n rollouts of it concurrently: every policy step
 * is one generation through the shared batcher, rendered with the calculator in the chat
 * template's `tools`, and logged as an interaction record (session = the rollout, turn = step
 * index + 1). A finished group goes to the PRM off the worker's path: every step gets m votes
 * and the reward r_t = o + mean(votes) (integrated) or o (outcome); advantages are standardized
 * among the group's steps that share a step index, and a tool_step record logs all of it.
 *
 * Samples (preset batch.toolCallSamples). 'trajectory' (the reference's): one sample per
 * trajectory, prompt = the first step's, completion = every step's tokens with the tokens the
 * policy read in between (tool results, turn markers), each step's advantage on its own tokens
 * and the read tokens loss-masked (src/rl/trajectory-sample.ts). Each step after the first then
 * continues the ids of the step before it (PolicyRequest.continues), as the reference samples, so
 * the steps join whatever the chat template does to earlier turns. A trajectory whose steps still
 * do not join (a policy that reports no prompt ids, or renders each prompt itself) falls back to
 * per-step samples, each logged with why (trajectoryFallback). 'step': one sample per step,
 * prompt = the messages before it, completion = its tokens, all carrying its advantage. Either
 * way a step whose index had no ranking carries 0. Batching, training, versions and the
 * evaluation schedule are the shared RunLoopCore's; the evaluation here is greedy accuracy on
 * held-out problems, its steps read as the rollouts' are.
 */
import type { ChatMessage } from '../../rl/messages';
import type { EvaluationRecord, ToolStepRecord } from '../../rl/records';
import { toolCallSamplesOf } from '../../rl/presets';
import type { TrainingSample } from '../../rl/samples';
import { tryJoinTrajectory, type TrajectoryFallback } from '../../rl/trajectory-sample';
import type { TextGenerator } from '../../generators/generator';
import type { PromptContinuation } from '../../gpu/policy';
import type { Problem } from '../../sims/problems/problem';
import { groupAdvantages, runToolEpisode, scoreTrajectory, type PolicyStep, type StepAdvantage, type Trajectory } from '../../sims/toolcall/index';
import { interactionRecord, isAbort, RunLoopCore } from '../loop-core';
import type { RecordSink, RunLoopOptions } from '../loop-types';
import type { PolicyReply, PolicyService } from '../policy-service';
import { TOOL_TRACK_TOOLS, type ToolCallRunConfig } from '../run-config';

export interface ToolCallServices {
  policy: PolicyService;
  /** The step judge (PRM); unused in outcome mode. */
  judge: TextGenerator;
}

/**
 * The track needs a policy with a chat template (it renders the calculator in `tools` and reads
 * tool results back); a base model would only continue the prompt's text.
 *
 * @throws Error naming the model and models that work
 */
export function checkToolCallPolicy(model: string, hasChatTemplate: boolean): void {
  if (hasChatTemplate) return;
  throw new Error(
    `${model} has no chat template: the tool-call track needs a chat model that can read tool results ` +
      '(e.g. Qwen/Qwen3-0.6B or HuggingFaceTB/SmolLM2-135M-Instruct)',
  );
}

/** Training problems and the held-out evaluation problems (disjoint). */
export interface ToolCallProblems {
  train: Problem[];
  heldOut: Problem[];
}

/** Greedy decoding: two evaluations differ only by the policy, not by sampling luck. */
const GREEDY = { temperature: 0, topP: 1, topK: 0 };

/** Longest per-problem detail kept in an evaluation record. */
const DETAIL_CHARS = 4000;

/** The sampling seed of one policy step: distinct for every rollout of every group. */
export function rolloutSeed(runSeed: number, group: number, rollout: number, step: number): number {
  return runSeed * 1_000_003 + group * 10_007 + rollout * 101 + step;
}

/** The judge's base seed for one rollout (vote k of step t adds t * m + k). */
export function judgeSeed(runSeed: number, group: number, rollout: number): number {
  return runSeed * 7_919 + group * 104_729 + rollout * 4_099;
}

export const groupId = (index: number) => `g${index}`;
export const rolloutId = (index: number, rollout: number) => `g${index}.r${rollout}`;

export class ToolCallRunLoop extends RunLoopCore {
  constructor(
    readonly config: ToolCallRunConfig,
    private readonly services: ToolCallServices,
    private readonly problems: ToolCallProblems,
    sink: RecordSink,
    options: RunLoopOptions = {},
  ) {
    super(
      {
        steps: config.schedule.steps,
        evalEvery: config.schedule.evalEvery,
        workers: config.schedule.concurrentGroups,
        batchSize: config.preset.batch.size,
        zeroAdvantage: config.preset.batch.zeroAdvantage,
        tools: TOOL_TRACK_TOOLS,
        // Simulated episodes: a run is a function of its config and seed.
        fixedSchedule: true,
      },
      services.policy,
      sink,
      options,
    );
    if (problems.train.length === 0) throw new Error('the run has no training problems');
    if (config.schedule.evalEvery > 0 && problems.heldOut.length === 0) {
      throw new Error('the run evaluates (schedule.evalEvery > 0) but has no held-out problems; raise toolcall.evalHeldOut or load more problems');
    }
  }

  protected async worker(): Promise<void> {
    while (!this.stopping) {
      const index = this.sessionsStarted++;
      const version = await this.admit(index);
      if (version === null) return;
      await this.runGroup(index, this.problems.train[index % this.problems.train.length], version);
    }
  }

  /**
   * Samples the group's n rollouts, then hands them to the PRM: off this worker's path in a free
   * run; under a fixed schedule (`version` given) on it, and the group's samples go to the buffer
   * in group order.
   */
  private async runGroup(index: number, problem: Problem, version: number | undefined): Promise<void> {
    const { groupSize, maxSteps } = this.config.toolcall;
    let trajectories: Trajectory<PolicyReply>[];
    try {
      trajectories = await Promise.all(
        Array.from({ length: groupSize }, (_, r) => runToolEpisode(problem, this.rolloutPolicy(index, r, version), { maxSteps, signal: this.abort.signal })),
      );
    } catch (e) {
      if (isAbort(e) && this.stopping) return;
      throw e;
    }
    if (this.stopping) return;
    const rollouts = trajectories.map((_, r) => rolloutId(index, r));
    if (version !== undefined) {
      await this.finishIndex(index, rollouts, await this.scoreGroup(index, problem, trajectories));
      return;
    }
    await this.offPath(async () => {
      for (const sample of await this.scoreGroup(index, problem, trajectories)) {
        if (this.stopping) return;
        await this.addSample(sample);
      }
      // A scored group's rollouts are finished: none of them gives another sample.
      for (const r of rollouts) this.sessionDone(r);
    });
  }

  /** One rollout's policy: each step waits for capacity, generates through the batcher and is logged. */
  private rolloutPolicy(index: number, rollout: number, version: number | undefined): PolicyStep<PolicyReply> {
    const session = rolloutId(index, rollout);
    const sp = this.config.sampling.policy;
    let step = 0;
    return this.steps(async (messages, continues) => {
      const t = step++;
      await this.waitForCapacity();
      if (this.stopping) throw this.abort.signal.reason;
      const reply = await this.generate({
        ...this.pin(version),
        messages,
        tools: TOOL_TRACK_TOOLS,
        ...(continues ? { continues } : {}),
        maxNewTokens: sp.maxNewTokens,
        sampling: { temperature: sp.temperature, topP: sp.topP, topK: sp.topK },
        seed: rolloutSeed(this.config.seed, index, rollout, t),
      });
      if (!reply) throw this.abort.signal.reason;
      const interaction = interactionRecord(reply, this.now(), { session, turn: t + 1, turnType: 'main', messages });
      await this.commit([interaction]);
      return reply;
    });
  }

  /**
   * An episode's policy from one generation call per step. Where the preset trains a trajectory
   * as one sample, each step after the first continues the ids the step before it read and
   * wrote, as the reference samples it: its prompt is then that sequence plus what the policy
   * reads next, which the sample joins step by step. One sample per step renders each step's
   * conversation whole, as the trainer renders that sample's prompt.
   */
  private steps(ask: (messages: ChatMessage[], continues: PromptContinuation | undefined) => Promise<PolicyReply>): PolicyStep<PolicyReply> {
    const continuing = toolCallSamplesOf(this.config.preset) === 'trajectory';
    let before: PromptContinuation | undefined;
    return async (messages) => {
      const reply = await ask(messages, before);
      // A policy that reports no prompt ids (a server's) has nothing to continue: the steps then fall back.
      before = continuing && reply.promptIds ? { ids: [...reply.promptIds, ...reply.tokenIds], messages: messages.length + 1 } : undefined;
      return reply;
    };
  }

  /** PRM votes and rewards for every step, advantages per step index, the tool_step records, and the samples the preset asks for. */
  private async scoreGroup(index: number, problem: Problem, trajectories: Trajectory<PolicyReply>[]): Promise<TrainingSample[]> {
    if (this.stopping) return [];
    const { judge } = this.config.preset;
    const mode = this.config.toolcall.rewardMode;
    const scored = await Promise.all(
      trajectories.map((trajectory, r) =>
        scoreTrajectory(trajectory, this.services.judge, {
          votes: judge.binaryVotes,
          mode,
          wrongAnswer: this.config.toolcall.wrongAnswer,
          temperature: judge.temperature,
          maxNewTokens: judge.maxNewTokens,
          seed: judgeSeed(this.config.seed, index, r),
          signal: this.abort.signal,
        }),
      ),
    );
    if (this.stopping) return [];
    const advantages = groupAdvantages(scored);
    const ts = this.now();
    const records: ToolStepRecord[] = [];
    const samples: TrainingSample[] = [];
    const perTrajectory = toolCallSamplesOf(this.config.preset) === 'trajectory';
    scored.forEach((s, r) => {
      const session = rolloutId(index, r);
      const whole = perTrajectory ? trajectorySample(session, s.trajectory, advantages[r]) : null;
      if (whole && 'sample' in whole) samples.push(whole.sample);
      else samples.push(...stepSamples(session, s.trajectory, advantages[r], whole?.fallback));
    });
    scored.forEach((s, r) => {
      const session = rolloutId(index, r);
      s.trajectory.steps.forEach((step, t) => {
        const { reward, advantage } = advantages[r][t];
        const score = s.steps[t];
        const reply = step.output;
        records.push({
          kind: 'tool_step',
          version: reply.version,
          ts,
          session,
          turn: step.index + 1,
          group: groupId(index),
          problem: problem.id,
          stepIndex: step.index,
          final: step.final,
          toolResults: step.toolMessages.map((m) => m.content),
          outcome: s.trajectory.outcome,
          mode,
          votes: [...score.votes],
          raw: [...score.texts],
          reward,
          advantage,
        });
      });
    });
    await this.commit(records);
    return samples;
  }

  /** Greedy accuracy on the held-out problems: the share whose final answer equals `#### N`. */
  protected async evaluate(): Promise<void> {
    const problems = this.problems.heldOut;
    if (problems.length === 0) return;
    const { maxSteps } = this.config.toolcall;
    const maxNewTokens = this.config.sampling.policy.maxNewTokens;
    const versions: number[] = [];
    // The evaluation of step k reads version k, whatever else is being answered meanwhile.
    const pinned = this.pin(this.version);
    let done = 0;
    const trajectories = await Promise.all(
      problems.map(async (problem) => {
        // Read as the rollouts are: an evaluation measures the policy on the prompts it trains on.
        const policy = this.steps(async (messages, continues) => {
          const reply = await this.batcher.request(
            { messages, tools: TOOL_TRACK_TOOLS, ...(continues ? { continues } : {}), maxNewTokens, sampling: GREEDY, seed: 0, ...pinned },
            this.abort.signal,
          );
          versions.push(reply.version);
          return reply;
        });
        const trajectory = await runToolEpisode(problem, policy, { maxSteps, signal: this.abort.signal });
        this.options.onProgress?.({ phase: 'evaluate', done: ++done, total: problems.length });
        return trajectory;
      }),
    );
    const n = trajectories.length;
    const calls = trajectories.flatMap((t) => t.steps.flatMap((s) => s.results));
    const scores: Record<string, number> = {
      accuracy: trajectories.filter((t) => t.outcome === 1).length / n,
      /** Share of episodes that ended with a final answer rather than the step limit. */
      answered: trajectories.filter((t) => t.end === 'answered').length / n,
      meanSteps: trajectories.reduce((k, t) => k + t.steps.length, 0) / n,
      meanToolCalls: calls.length / n,
    };
    if (calls.length > 0) scores.toolSuccess = calls.filter((c) => c.outcome.ok).length / calls.length;
    const record: EvaluationRecord = {
      kind: 'evaluation',
      // The version that wrote the answers (a finished step swaps in at the next generation).
      version: Math.min(...versions),
      ts: this.now(),
      step: this.step,
      name: 'accuracy',
      scores,
      perProblem: trajectories.map((t, i) => ({ id: problems[i].id, score: t.outcome === 1 ? 1 : 0, detail: evaluationDetail(t) })),
    };
    await this.commit([record]);
  }
}

/**
 * One sample per step: the messages before it, its tokens, each carrying its advantage; with
 * `fallback`, why they stand in for one trajectory sample (logged on each).
 */
function stepSamples(
  session: string,
  trajectory: Trajectory<PolicyReply>,
  advantages: readonly StepAdvantage[],
  fallback?: TrajectoryFallback,
): TrainingSample[] {
  return trajectory.steps.map((step, t) => {
    const reply = step.output;
    return {
      session,
      turn: step.index + 1,
      version: reply.version,
      messages: step.messages,
      response: { text: reply.text, tokenIds: reply.tokenIds, logprobs: reply.logprobs },
      nextState: step.toolMessages[0] ?? null,
      reward: advantages[t].reward,
      // The step's advantage on each of its tokens; a step whose index carried no ranking gets 0.
      advantages: new Array<number>(reply.tokenIds.length).fill(advantages[t].advantage ?? 0),
      opdWeight: 0,
      judged: true,
      ...(fallback ? { trajectoryFallback: fallback } : {}),
    };
  });
}

/**
 * The whole trajectory as one sample (turn 1: its steps are the session's turns 1..S), or why
 * its steps do not join into one sequence; a one-step trajectory that does not join needs no
 * reason, as its one sample per step is the same sample. Its reward is the mean of its step
 * rewards, o + mean PRM score, the reference's sample score.
 */
function trajectorySample(
  session: string,
  trajectory: Trajectory<PolicyReply>,
  advantages: readonly StepAdvantage[],
): { sample: TrainingSample } | { fallback?: TrajectoryFallback } {
  const steps = trajectory.steps;
  // Where the steps do not join, per-step samples score each step after exactly what it read; a forced join would not.
  const attempt = tryJoinTrajectory(steps.map((s, t) => ({ ...s.output, advantage: advantages[t].advantage ?? 0 })));
  if ('fallback' in attempt) return steps.length > 1 ? { fallback: attempt.fallback } : {};
  const { joined } = attempt;
  return {
    sample: {
      session,
      turn: steps[0].index + 1,
      version: steps[0].output.version,
      messages: steps[0].messages,
      // For reading only: training takes the ids.
      response: {
        text: steps.flatMap((s) => [s.output.text, ...s.toolMessages.map((m) => m.content)]).join('\n'),
        tokenIds: joined.tokenIds,
        logprobs: joined.logprobs,
      },
      nextState: null,
      reward: advantages.reduce((sum, a) => sum + a.reward, 0) / advantages.length,
      advantages: joined.advantages,
      lossMask: joined.lossMask,
      opdWeight: 0,
      judged: true,
    },
  };
}

function evaluationDetail(t: Trajectory): string {
  const calls = t.steps.reduce((k, s) => k + s.results.length, 0);
  const answer = t.finalAnswer ? String(t.finalAnswer.value) : 'none';
  const head = `answer ${answer} (expected ${t.expected}); ${t.steps.length} step(s), ${calls} tool call(s)${t.end === 'step-limit' ? ', step limit reached' : ''}`;
  const text = t.finalText === null ? head : `${head}\n${t.finalText}`;
  return text.length > DETAIL_CHARS ? text.slice(0, DETAIL_CHARS) : text;
}
