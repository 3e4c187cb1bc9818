/**
 * The tool-call track's runtime for the page and the CLI: the run loop, its problems and the
 * record it adds (tool_step, in src/rl/records.ts). Node-only services are in ./services-node.
 *
 * What a chart can read from a tool-call run's records:
 * - tool_step: per step of every rollout its group, problem, step index, PRM votes and raw
 *   replies, outcome o, reward r_t and standardized advantage (null: no ranking at that index);
 *   one trajectory = one session, one step = one turn.
 * - interaction: the messages each step saw and the tokens it wrote (session and turn as above).
 * - sample: one per step, the step's advantage on each of its tokens, and its loss mask.
 * - train_step, token_update, version_boundary: as in the personal track.
 * - evaluation named 'accuracy': scores.accuracy (greedy, held-out problems), answered,
 *   meanSteps, meanToolCalls and toolSuccess (when any call was made); per problem 1 or 0 with
 *   the answer, the expected number and the final text as detail.
 */
export { ToolCallRunLoop, checkToolCallPolicy, rolloutSeed, judgeSeed, groupId, rolloutId, type ToolCallServices, type ToolCallProblems } from './loop';
export { loadToolCallProblems, splitHeldOut } from './problems';
