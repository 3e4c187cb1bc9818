/**
 * The tool-call track's outcome reward o. A right final answer is +1. A wrong one is -1
 * ('flat'), or, as the reference's tool-call reward function shapes it to encourage calling the
 * tool ('tool-calls', toolcall-rl/generate_with_retool.py reward_func):
 *
 *   o = min(-0.6, -1 + (n - 2) / 2 * 0.1),  n = the trajectory's rounds with a tool call
 *
 * so a wrong answer after no call is -1.1 and one after ten or more rounds of calls is -0.6.
 */

export const WRONG_ANSWER_REWARDS = ['tool-calls', 'flat'] as const;
export type WrongAnswerReward = (typeof WRONG_ANSWER_REWARDS)[number];

/** The shaped reward's ceiling for a wrong answer, and what each round of tool calls adds to -1 past the second. */
const WRONG_CEILING = -0.6;
const PER_ROUND = 0.05;

/** o for a trajectory whose final answer scored `outcome`, after `toolCallRounds` rounds with a tool call. */
export function outcomeReward(outcome: 1 | -1, toolCallRounds: number, rule: WrongAnswerReward): number {
  if (outcome === 1 || rule === 'flat') return outcome;
  return Math.min(WRONG_CEILING, -1 + (toolCallRounds - 2) * PER_ROUND);
}
