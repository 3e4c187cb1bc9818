import { RlError } from './errors';
import { assertSameLength } from './numbers';

/**
 * One multi-turn tool-call trajectory as ONE training sequence, the way the reference builds it
 * (toolcall-rl/generate_with_retool.py `generate`, slime's `step_wise` estimator): after the
 * first prompt come the policy's tokens of step 0, the tokens it then read (the tool results and
 * the chat template's turn markers), the tokens of step 1, and so on. The policy's tokens carry
 * their step's advantage and loss mask 1; the read tokens carry advantage 0, loss mask 0 and a
 * placeholder log-prob of 0, as the reference pads `rollout_log_probs`.
 *
 * The read tokens are what the policy actually read: step t+1's prompt ids minus the sequence so
 * far. So the trainer scores every policy token after exactly the ids it was sampled after.
 */

/** One policy step as the rollout returned it. */
export interface TrajectoryStepTokens {
  /** The ids the policy read before this step (its whole prompt). */
  promptIds: readonly number[];
  tokenIds: readonly number[];
  /** Sampling log-prob of every token in tokenIds. */
  logprobs: readonly number[];
  /** The step's advantage, put on each of its tokens. */
  advantage: number;
}

export interface JoinedTrajectory {
  /** The first step's prompt: the sample's prompt. */
  promptIds: number[];
  /** Everything after it: policy tokens and observation tokens in order. */
  tokenIds: number[];
  /** Rollout log-probs; 0 on observation tokens (never read: their mask is 0). */
  logprobs: number[];
  /** 1 on the policy's tokens, 0 on observation tokens. */
  lossMask: number[];
  /** Each step's advantage on its own tokens, 0 on observation tokens. */
  advantages: number[];
  /** [start, end) of each step's tokens in tokenIds (slime's step_token_spans). */
  spans: [number, number][];
}

/**
 * A step's prompt does not continue the sequence so far: the policy rendered that prompt afresh
 * from the conversation (a policy on a server does) and the chat template wrote an earlier turn
 * differently from the ids the policy read and wrote, or the policy reported no prompt ids, so no
 * single sequence holds every step as it was sampled.
 */
export class TrajectoryJoinError extends RlError {}

const NO_STEP = 'a trajectory needs at least one step to become a sample; leave out an empty one.';

/**
 * Joins a trajectory's steps into one sequence with its loss mask.
 *
 * @throws TrajectoryJoinError when there is no step, or a step's prompt does not start with the
 *   sequence so far; LengthMismatchError when a step's log-probs do not cover its tokens
 */
export function joinTrajectory(steps: readonly TrajectoryStepTokens[]): JoinedTrajectory {
  if (steps.length === 0) throw new TrajectoryJoinError(NO_STEP);
  const promptIds = [...steps[0].promptIds];
  const out: JoinedTrajectory = { promptIds, tokenIds: [], logprobs: [], lossMask: [], advantages: [], spans: [] };
  steps.forEach((step, t) => {
    assertSameLength(`log-probs of trajectory step ${t}`, step.tokenIds, step.logprobs);
    if (t > 0) {
      const before = promptIds.length + out.tokenIds.length;
      const divergesAt = firstDifference(step.promptIds, promptIds, out.tokenIds);
      if (divergesAt !== -1) {
        throw new TrajectoryJoinError(
          `trajectory step ${t}'s prompt differs from the ids before it at position ${divergesAt} of ${before}: the policy rendered it afresh ` +
            'and the chat template rewrote an earlier turn, so the steps cannot be one sequence; continue each step from the ids so far ' +
            '(PolicyRequest.continues), or train this track with one sample per step (preset batch.toolCallSamples "step").',
        );
      }
      const observation = step.promptIds.slice(before);
      out.tokenIds.push(...observation);
      out.logprobs.push(...observation.map(() => 0));
      out.lossMask.push(...observation.map(() => 0));
      out.advantages.push(...observation.map(() => 0));
    }
    const start = out.tokenIds.length;
    out.tokenIds.push(...step.tokenIds);
    out.logprobs.push(...step.logprobs);
    out.lossMask.push(...step.tokenIds.map(() => 1));
    out.advantages.push(...step.tokenIds.map(() => step.advantage));
    out.spans.push([start, out.tokenIds.length]);
  });
  return out;
}

/**
 * Why a trajectory of more than one step became one sample per step instead of one sample:
 * 'no-prompt-ids', a step's policy reported no prompt ids (a policy on a server that returns
 * none); 'prompt-mismatch', a step's prompt does not continue the ids before it (a policy that
 * rendered the conversation afresh instead of continuing them).
 */
export const TRAJECTORY_FALLBACKS = ['no-prompt-ids', 'prompt-mismatch'] as const;
export type TrajectoryFallback = (typeof TRAJECTORY_FALLBACKS)[number];

/** A step as a log or a rollout holds it: prompt ids where the policy reported them, advantage where known. */
export type LoggedTrajectoryStep = Omit<TrajectoryStepTokens, 'promptIds' | 'advantage'> & { promptIds?: readonly number[]; advantage?: number };

/**
 * The steps joined, or why they do not join into one sequence. A step without `advantage`
 * carries 0 (a log reader takes the logged ones).
 *
 * @throws TrajectoryJoinError when there is no step; LengthMismatchError when a step's log-probs
 *   do not cover its tokens
 */
export function tryJoinTrajectory(steps: readonly LoggedTrajectoryStep[]): { joined: JoinedTrajectory } | { fallback: TrajectoryFallback } {
  if (steps.length === 0) throw new TrajectoryJoinError(NO_STEP);
  if (steps.some((s) => !s.promptIds)) return { fallback: 'no-prompt-ids' };
  try {
    return { joined: joinTrajectory(steps.map((s) => ({ promptIds: s.promptIds!, tokenIds: s.tokenIds, logprobs: s.logprobs, advantage: s.advantage ?? 0 }))) };
  } catch (e) {
    if (e instanceof TrajectoryJoinError) return { fallback: 'prompt-mismatch' };
    throw e;
  }
}

/**
 * The steps joined, or null where they do not join into one sequence (tryJoinTrajectory): a log
 * reader (resume, export) then cannot rebuild the sample.
 */
export function joinedOrNull(steps: readonly LoggedTrajectoryStep[]): JoinedTrajectory | null {
  if (steps.length === 0) return null;
  const attempt = tryJoinTrajectory(steps);
  return 'joined' in attempt ? attempt.joined : null;
}

/** The first position where `ids` does not continue prompt ++ completion, or -1 when it does. */
function firstDifference(ids: readonly number[], prompt: readonly number[], completion: readonly number[]): number {
  const n = prompt.length + completion.length;
  for (let i = 0; i < n; i++) {
    const expected = i < prompt.length ? prompt[i] : completion[i - prompt.length];
    if (ids[i] !== expected) return i;
  }
  return -1;
}
