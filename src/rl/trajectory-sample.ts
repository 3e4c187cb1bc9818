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
 * A step's prompt does not continue the sequence so far: the chat template rendered an earlier
 * turn differently from the ids the policy wrote (or the policy reported no prompt ids), so no
 * single sequence holds every step as it was sampled.
 */
export class TrajectoryJoinError extends RlError {}

/**
 * Joins a trajectory's steps into one sequence with its loss mask.
 *
 * @throws TrajectoryJoinError when there is no step, or a step's prompt does not start with the
 *   sequence so far; LengthMismatchError when a step's log-probs do not cover its tokens
 */
export function joinTrajectory(steps: readonly TrajectoryStepTokens[]): JoinedTrajectory {
  if (steps.length === 0) throw new TrajectoryJoinError('a trajectory needs at least one step to become a sample; leave out an empty one.');
  const promptIds = [...steps[0].promptIds];
  const out: JoinedTrajectory = { promptIds, tokenIds: [], logprobs: [], lossMask: [], advantages: [], spans: [] };
  steps.forEach((step, t) => {
    assertSameLength(`log-probs of trajectory step ${t}`, step.tokenIds, step.logprobs);
    if (t > 0) {
      const before = promptIds.length + out.tokenIds.length;
      const divergesAt = firstDifference(step.promptIds, promptIds, out.tokenIds);
      if (divergesAt !== -1) {
        throw new TrajectoryJoinError(
          `trajectory step ${t}'s prompt differs from the ids before it at position ${divergesAt} of ${before}: the chat template ` +
            'rewrites earlier turns, so the steps cannot be one sequence; train this track with one sample per step (preset batch.toolCallSamples "step").',
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
 * The steps joined, or null where they do not join into one sequence: a step without prompt ids
 * (a policy on a server that returned none), or one whose prompt does not continue the sequence.
 * The run loop then makes one sample per step; a log reader (resume, export) then cannot rebuild
 * the sample. A step without `advantage` carries 0 (a reader takes the logged ones).
 */
export function joinedOrNull(
  steps: readonly (Omit<TrajectoryStepTokens, 'promptIds' | 'advantage'> & { promptIds?: readonly number[]; advantage?: number })[],
): JoinedTrajectory | null {
  if (steps.some((s) => !s.promptIds)) return null;
  try {
    return joinTrajectory(steps.map((s) => ({ promptIds: s.promptIds!, tokenIds: s.tokenIds, logprobs: s.logprobs, advantage: s.advantage ?? 0 })));
  } catch (e) {
    if (e instanceof TrajectoryJoinError) return null;
    throw e;
  }
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
