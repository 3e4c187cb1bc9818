/**
 * Pure functions that turn a tool-call run's log (the general-agent track,
 * src/runtime/toolcall) into what its views show: the trajectories of every group of
 * rollouts, step by step, and the held-out accuracy series. No DOM, no storage; tested in Node
 * (derive-toolcall.test.ts).
 *
 * What the log holds (see src/runtime/toolcall/index.ts): one interaction record per
 * policy step (session = the rollout, turn = step index + 1), and once the group is scored one
 * tool_step record per step with its group, PRM votes and raw replies, tool results, outcome o,
 * reward r_t and standardized advantage. A rollout still being sampled has interactions only; it
 * is shown as running, its group read from its session id (`g<k>.r<n>`, as the run loop names
 * rollouts) and its tool results from the next step's messages.
 *
 * The policy's output is parsed with the environment's own parser (parseToolCalls), so the
 * calls shown are exactly the ones the environment ran.
 */
import type { ChatMessage } from '../../rl/messages';
import type { EvaluationRecord, InteractionRecord, RunRecord, ToolStepRecord } from '../../rl/records';
import { readFinalAnswer, type FinalAnswer } from '../../sims/toolcall/answer';
import { TOOL_ERROR_PREFIX } from '../../sims/toolcall/calculator';
import { parseToolCalls } from '../../sims/toolcall/calls';
import { readReply } from '../../rl/readable-text';
import { finite, turnKey } from './record-values';

/** The evaluation the tool-call track reports (greedy accuracy on held-out problems). */
export const ACCURACY = 'accuracy';

export type RewardMode = ToolStepRecord['mode'];

/** `g3.r1` -> group `g3`, rollout 1 (the run loop's rolloutId); null for other session ids. */
export function parseRolloutId(session: string): { group: string; rollout: number } | null {
  const m = /^(.+)\.r(\d+)$/.exec(session);
  return m ? { group: m[1], rollout: Number(m[2]) } : null;
}

// ---------------------------------------------------------------------------------------------
// Trajectories

/** One `<tool_call>` block of a step's output and what the environment answered. */
export interface ToolCallView {
  /** Position among the output's blocks, from 0. */
  index: number;
  /** The calculator expression; null when the block could not be read as a call. */
  expression: string | null;
  /** The block as the policy wrote it, tags included. */
  raw: string;
  /** Why the block could not be read (the parser's message to the model); null for a call. */
  parseError: string | null;
  /** The tool message sent back for this block; null when not known yet. */
  result: string | null;
  /** The result is a value (true) or an `Error: ` message (false); null when not known. */
  ok: boolean | null;
}

export interface StepVoteView {
  /** 0-based index among the step's m votes. */
  vote: number;
  /** +1 / -1, or null for a reply without a usable \boxed{}. */
  score: 1 | -1 | null;
  raw: string;
}

export interface ToolStepView {
  session: string;
  /** 0-based step index within the trajectory. */
  stepIndex: number;
  turn: number;
  /** The policy version that wrote the step. */
  version: number;
  /** The policy's output as it reads (readReply); null when the log has no interaction for the step. */
  output: string | null;
  tokens: number;
  /** The output without its `<tool_call>` blocks: the model's prose or final answer. */
  text: string;
  calls: ToolCallView[];
  /** The tool messages sent back after the step, one per block; empty for a final answer. */
  toolResults: string[];
  /** The step made no tool call: it is the trajectory's final answer. */
  final: boolean;
  /** The number read from a final answer (null: not final, or no number in it). */
  answer: FinalAnswer | null;
  votes: StepVoteView[];
  /** Mean of the valid votes; null when there is none (outcome mode, or every vote failed). */
  voteMean: number | null;
  /** r_t; null until the group is scored. */
  reward: number | null;
  /** Standardized among the group's steps with this index; null: no ranking, or not scored yet. */
  advantage: number | null;
  /**
   * Rollouts of the group that reached this step index, this one included: the steps the
   * advantage is standardized among. With 1 there is nothing to compare; the reward is kept as is.
   */
  peers: number;
  /** The group has been scored: reward, votes and advantage are final. */
  scored: boolean;
  /** Train step(s) whose token_update records include this step. */
  trainedAt: number[];
}

export type RolloutEnd = 'answered' | 'step-limit' | 'running';

export interface RolloutView {
  session: string;
  group: string;
  /** The rollout's number within its group (from its session id), or its position. */
  rollout: number;
  steps: ToolStepView[];
  /** o: +1 when the final answer is right, else -1; null until scored. */
  outcome: 1 | -1 | null;
  /** 'answered': ended with a final answer; 'step-limit': scored without one; 'running': not scored yet. */
  end: RolloutEnd;
  /** Tool calls made / those whose result was a value. */
  toolCalls: number;
  toolOk: number;
}

export interface GroupView {
  group: string;
  /** Problem id (from tool_step records); null until the group is scored. */
  problem: string | null;
  /** The user's question, from the first step's messages; null without an interaction. */
  question: string | null;
  /** The system prompt the policy saw; null without an interaction. */
  system: string | null;
  mode: RewardMode | null;
  rollouts: RolloutView[];
  /** Every rollout has its outcome. */
  scored: boolean;
  /** Rollouts with outcome +1. */
  solved: number;
}

function toolStepFallbackResults(step: InteractionRecord, next: InteractionRecord | undefined): string[] {
  if (!next) return [];
  // The next step saw this step's messages, then its answer, then the tool messages.
  const after = next.messages.slice(step.messages.length + 1);
  return after.filter((m) => m.role === 'tool').map((m) => m.content);
}

function stepView(
  session: string,
  turn: number,
  inter: InteractionRecord | undefined,
  next: InteractionRecord | undefined,
  ts: ToolStepRecord | undefined,
  trainedAt: number[],
): ToolStepView {
  const output = inter ? inter.response : null;
  const parsed = output !== null ? parseToolCalls(output) : null;
  const final = ts ? ts.final : parsed ? parsed.blocks === 0 : false;
  const toolResults = ts ? [...ts.toolResults] : inter ? toolStepFallbackResults(inter, next) : [];
  const blocks = parsed ? [...parsed.calls, ...parsed.errors].sort((a, b) => a.index - b.index) : [];
  const calls: ToolCallView[] = blocks.map((b) => {
    const result = toolResults[b.index] ?? null;
    return {
      index: b.index,
      expression: 'expression' in b ? b.expression : null,
      raw: b.raw,
      parseError: 'message' in b ? b.message : null,
      result,
      ok: result === null ? null : !result.startsWith(TOOL_ERROR_PREFIX),
    };
  });
  const votes: StepVoteView[] = ts ? ts.votes.map((score, vote) => ({ vote, score, raw: ts.raw[vote] ?? '' })) : [];
  const valid = votes.map((v) => v.score).filter((s): s is 1 | -1 => s !== null);
  return {
    session,
    stepIndex: turn - 1,
    turn,
    version: inter ? inter.version : (ts?.version ?? 0),
    output: inter ? readReply(inter.response, inter.tokenTexts) : null,
    tokens: inter ? inter.tokenIds.length : 0,
    text: parsed ? parsed.text : '',
    calls,
    toolResults,
    final,
    answer: final && output !== null ? readFinalAnswer(output) : null,
    votes,
    voteMean: valid.length ? valid.reduce((a, b) => a + b, 0) / valid.length : null,
    reward: ts ? finite(ts.reward) : null,
    advantage: ts ? finite(ts.advantage) : null,
    peers: 1,
    scored: !!ts,
    trainedAt,
  };
}

/**
 * Every group of rollouts, in the order its first record appears; rollouts by their number,
 * steps by index. Sessions that are neither in a tool_step record nor named like a rollout
 * (`g<k>.r<n>`) are left out: they are not tool-call trajectories.
 */
export function toolTrajectories(records: readonly RunRecord[]): GroupView[] {
  const inters = new Map<string, InteractionRecord>();
  const toolSteps = new Map<string, ToolStepRecord>();
  const trained = new Map<string, number[]>();
  /** session -> turns seen, in first-seen order. */
  const turnsOf = new Map<string, Set<number>>();
  const groupOf = new Map<string, string>();
  const sessionOrder: string[] = [];
  const noteTurn = (session: string, turn: number) => {
    let s = turnsOf.get(session);
    if (!s) {
      turnsOf.set(session, (s = new Set()));
      sessionOrder.push(session);
    }
    s.add(turn);
  };
  for (const r of records) {
    if (r.kind === 'interaction') {
      inters.set(turnKey(r.session, r.turn), r);
      noteTurn(r.session, r.turn);
      if (!groupOf.has(r.session)) {
        const id = parseRolloutId(r.session);
        if (id) groupOf.set(r.session, id.group);
      }
    } else if (r.kind === 'tool_step') {
      toolSteps.set(turnKey(r.session, r.turn), r);
      noteTurn(r.session, r.turn);
      groupOf.set(r.session, r.group);
    } else if (r.kind === 'token_update') {
      const k = turnKey(r.session, r.turn);
      const list = trained.get(k) ?? [];
      if (!list.includes(r.step)) list.push(r.step);
      trained.set(k, list);
    }
  }
  const groups = new Map<string, GroupView>();
  for (const session of sessionOrder) {
    const group = groupOf.get(session);
    if (group === undefined) continue;
    let g = groups.get(group);
    if (!g) {
      g = { group, problem: null, question: null, system: null, mode: null, rollouts: [], scored: false, solved: 0 };
      groups.set(group, g);
    }
    const turns = [...turnsOf.get(session)!].sort((a, b) => a - b);
    const steps = turns.map((turn) =>
      stepView(
        session,
        turn,
        inters.get(turnKey(session, turn)),
        inters.get(turnKey(session, turn + 1)),
        toolSteps.get(turnKey(session, turn)),
        trained.get(turnKey(session, turn)) ?? [],
      ),
    );
    const scoredSteps = turns.map((t) => toolSteps.get(turnKey(session, t))).filter((x): x is ToolStepRecord => !!x);
    const first = scoredSteps[0];
    const outcome = first ? first.outcome : null;
    if (first) {
      g.problem ??= first.problem;
      g.mode ??= first.mode;
    }
    const firstInter = inters.get(turnKey(session, turns[0]));
    if (firstInter && g.question === null) {
      g.question = firstInter.messages.find((m: ChatMessage) => m.role === 'user')?.content ?? null;
      g.system = firstInter.messages.find((m: ChatMessage) => m.role === 'system')?.content ?? null;
    }
    const last = steps[steps.length - 1];
    const end: RolloutEnd = outcome === null ? 'running' : last?.final ? 'answered' : 'step-limit';
    const calls = steps.flatMap((s) => s.calls);
    g.rollouts.push({
      session,
      group,
      rollout: parseRolloutId(session)?.rollout ?? g.rollouts.length,
      steps,
      outcome,
      end,
      toolCalls: calls.length,
      toolOk: calls.filter((c) => c.ok === true).length,
    });
  }
  for (const g of groups.values()) {
    g.rollouts.sort((a, b) => a.rollout - b.rollout);
    const reached = new Map<number, number>();
    for (const r of g.rollouts) for (const s of r.steps) reached.set(s.stepIndex, (reached.get(s.stepIndex) ?? 0) + 1);
    for (const r of g.rollouts) for (const s of r.steps) s.peers = reached.get(s.stepIndex) ?? 1;
    g.scored = g.rollouts.length > 0 && g.rollouts.every((r) => r.outcome !== null);
    g.solved = g.rollouts.filter((r) => r.outcome === 1).length;
  }
  return [...groups.values()];
}

/** The reward mode of a tool-call run (from its tool_step records), or null when none is scored yet. */
export function rewardModeOf(records: readonly RunRecord[]): RewardMode | null {
  for (const r of records) if (r.kind === 'tool_step') return r.mode;
  return null;
}

// ---------------------------------------------------------------------------------------------
// Accuracy

export interface AccuracyPoint {
  /** Train steps done when the policy was evaluated (the record's step, else counted). */
  step: number;
  version: number;
  ts: number;
  /** Share of held-out problems answered right (greedy). */
  accuracy: number | null;
  /** Share of episodes that ended with a final answer rather than the step limit. */
  answered: number | null;
  /** Share of tool calls that returned a value; null when no call was made. */
  toolSuccess: number | null;
  meanSteps: number | null;
  meanToolCalls: number | null;
  /** Held-out problems evaluated. */
  problems: number;
}

export interface AccuracySeries {
  points: AccuracyPoint[];
  /** The first evaluation's accuracy: the policy before training. */
  baseline: number | null;
}

/** The evaluations named `name` ('accuracy'), in log order, with the first as the baseline. */
export function accuracySeries(records: readonly RunRecord[], name: string = ACCURACY): AccuracySeries {
  const points: AccuracyPoint[] = [];
  let stepsDone = 0;
  for (const r of records) {
    if (r.kind === 'train_step') stepsDone = Math.max(stepsDone, r.step);
    else if (r.kind === 'evaluation' && r.name === name) points.push(accuracyPoint(r, stepsDone));
  }
  return { points, baseline: points.length ? points[0].accuracy : null };
}

function accuracyPoint(r: EvaluationRecord, stepsDone: number): AccuracyPoint {
  const s = r.scores;
  return {
    step: r.step ?? stepsDone,
    version: r.version,
    ts: r.ts,
    accuracy: finite(s.accuracy),
    answered: finite(s.answered),
    toolSuccess: finite(s.toolSuccess),
    meanSteps: finite(s.meanSteps),
    meanToolCalls: finite(s.meanToolCalls),
    problems: r.perProblem.length,
  };
}
