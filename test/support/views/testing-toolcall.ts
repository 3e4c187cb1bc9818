/**
 * Test data of the tool-call views (derive-toolcall.test.ts and the browser tests).
 *
 * test/fixtures/recorded-toolcall.jsonl (integrated reward) and
 * test/fixtures/recorded-toolcall-outcome.jsonl (outcome-only reward) are real run logs, made
 * once with the headless pipeline on the tiny random Qwen3 fixture model and the rules judge:
 *   npx nextstate run --example toolcall > /tmp/t.json
 *   node --import tsx -e "import('./test/fixtures/tiny-model.ts')
 *     .then(async m => console.log((await m.tinyModel({family:'qwen3'})).dir))"   # -> MODEL
 *   (edit /tmp/t.json: models.policy.model MODEL, problems {source: builtin, count: 4},
 *    toolcall {rewardMode: integrated | outcome, groupSize 2, maxSteps 2, evalHeldOut 3},
 *    schedule {concurrentGroups 1, steps 2, evalEvery 1}, preset.batch.size 4,
 *    sampling.policy.maxNewTokens 12, preset.judge.maxNewTokens 64)
 *   npx nextstate run --config /tmp/t.json --out /tmp/t.nsrun
 *   npx nextstate export /tmp/t.nsrun --records test/fixtures/recorded-toolcall.jsonl
 * 45 records each: 5 groups (g0-g4) of 2 one-step rollouts, 10 interactions and tool_step
 * records, 10 samples, 2 train steps with token_update records, accuracy evaluations at steps
 * 0, 1 and 2. A random tiny model never writes a valid `<tool_call>`: every rollout is a single
 * final answer without a number, outcome -1, every reward equal (-2 integrated: three -1 votes;
 * -1 outcome-only), so every advantage is null and every accuracy 0.
 *
 * Hence the hand-written logs below, built with the environment's own parser and calculator and
 * the method library's standardizeByStep so that they are what a run would write: valid,
 * malformed and failing calls, several steps, failed votes, a step limit, a group without
 * ranking, a group still running. Their numbers are computed by hand in derive-toolcall.test.ts.
 */
import { standardizeByStep } from '../../../src/rl/advantages';
import type { ChatMessage } from '../../../src/rl/messages';
import type { EvaluationRecord, InteractionRecord, RunRecord, ToolStepRecord } from '../../../src/rl/records';
import { parseToolCalls } from '../../../src/sims/toolcall/calls';
import { runToolCalls } from '../../../src/sims/toolcall/environment';
import recordedIntegrated from '../../fixtures/recorded-toolcall.jsonl?raw';
import recordedOutcome from '../../fixtures/recorded-toolcall-outcome.jsonl?raw';
import { HOSTILE, parseJsonl } from './testing';

/** A fresh copy of the recorded integrated-reward run. */
export function recordedToolRun(): RunRecord[] {
  return parseJsonl(recordedIntegrated);
}

/** A fresh copy of the recorded outcome-only run. */
export function recordedOutcomeRun(): RunRecord[] {
  return parseJsonl(recordedOutcome);
}

export const SYSTEM = 'You are a careful math assistant. Call the calculator for arithmetic.';
export const QUESTION = 'A box holds 12 eggs. How many eggs are in 7 boxes if 5 eggs break?';

/** `<tool_call>` JSON for the calculator. */
export function call(expression: string, name = 'calculator'): string {
  return `<tool_call>${JSON.stringify({ name, arguments: { expression } })}</tool_call>`;
}

export interface RolloutSpec {
  /** The policy's output per step. */
  outputs: string[];
  /** The PRM's votes per step (empty arrays in outcome mode). */
  votes: (1 | -1 | null)[][];
  outcome: 1 | -1;
  /** Judge replies per step; made up from the votes when left out. */
  raw?: string[][];
}

export interface GroupSpec {
  index: number;
  problem: string;
  question?: string;
  system?: string;
  mode: 'integrated' | 'outcome';
  version: number;
  t0: number;
  rollouts: RolloutSpec[];
  /** Log only the interactions (the group is still being sampled). */
  unscored?: boolean;
  /** Group id in tool_step records (default `g<index>`). */
  groupId?: string;
}

function voteText(v: 1 | -1 | null): string {
  return v === null ? 'The step is hard to judge; no verdict.' : `The step ${v > 0 ? 'moves the solution forward' : 'does not help'}.\n\n\\boxed{${v}}`;
}

/**
 * One group as the run loop logs it: each rollout's interactions (messages grown by the
 * assistant output and the tool messages the environment would send), then, unless unscored,
 * a tool_step per step with r_t = o + mean(valid votes) (o alone in outcome mode) and the
 * advantage standardized among the group's steps of the same index.
 */
export function toolGroup(spec: GroupSpec): RunRecord[] {
  const group = spec.groupId ?? `g${spec.index}`;
  const interactions: InteractionRecord[] = [];
  const steps: Omit<ToolStepRecord, 'advantage'>[] = [];
  let ts = spec.t0;
  spec.rollouts.forEach((r, k) => {
    const session = `g${spec.index}.r${k}`;
    const messages: ChatMessage[] = [
      { role: 'system', content: spec.system ?? SYSTEM },
      { role: 'user', content: spec.question ?? QUESTION },
    ];
    r.outputs.forEach((output, t) => {
      const parsed = parseToolCalls(output);
      const final = parsed.blocks === 0;
      const results = final ? [] : runToolCalls(parsed).map((x) => x.outcome.content);
      const words = output.split(/\s+/).filter(Boolean).length || 1;
      ts += 10;
      interactions.push({
        kind: 'interaction',
        version: spec.version,
        ts,
        session,
        turn: t + 1,
        turnType: 'main',
        messages: messages.map((m) => ({ ...m })),
        response: output,
        tokenIds: Array.from({ length: words }, (_, i) => 100 + i),
        logprobs: Array.from({ length: words }, () => -1),
        startedAt: ts - 5,
        finishedAt: ts,
      });
      messages.push({ role: 'assistant', content: output }, ...results.map((content) => ({ role: 'tool' as const, content })));
      const votes = spec.mode === 'outcome' ? [] : (r.votes[t] ?? []);
      const valid = votes.filter((v): v is 1 | -1 => v !== null);
      const mean = valid.length ? valid.reduce((a, b) => a + b, 0) / valid.length : 0;
      steps.push({
        kind: 'tool_step',
        version: spec.version,
        ts: 0,
        session,
        turn: t + 1,
        group,
        problem: spec.problem,
        stepIndex: t,
        final,
        toolResults: results,
        outcome: r.outcome,
        mode: spec.mode,
        votes: [...votes],
        raw: r.raw?.[t] ?? votes.map(voteText),
        reward: spec.mode === 'outcome' ? r.outcome : r.outcome + mean,
      });
    });
  });
  if (spec.unscored) return interactions;
  const advantages = standardizeByStep(steps.map((s) => ({ step: s.stepIndex, reward: s.reward })));
  ts += 10;
  const scored: ToolStepRecord[] = steps.map((s, i) => ({ ...s, ts, advantage: advantages[i] }));
  return [...interactions, ...scored];
}

function accuracy(step: number | undefined, version: number, ts: number, scores: Record<string, number>, n = 4): EvaluationRecord {
  return {
    kind: 'evaluation',
    version,
    ts,
    ...(step === undefined ? {} : { step }),
    name: 'accuracy',
    scores,
    perProblem: Array.from({ length: n }, (_, i) => ({ id: `held#${i}`, score: i < scores.accuracy * n ? 1 : 0, detail: `answer ${i}` })),
  };
}

const trainStep = (step: number, ts: number): RunRecord => ({
  kind: 'train_step',
  version: step - 1,
  ts,
  step,
  samples: 4,
  skipped: null,
  stats: { loss: 0.1, policyLoss: 0.1, kl: 0, clipFracLow: 0, clipFracHigh: 0, entropy: 2, meanAbsAdv: 0.9, gradNorm: 1, tokens: 20, stepMs: 100, logpGap: 0 },
});

const tokenUpdate = (session: string, turn: number, step: number, ts: number): RunRecord => ({
  kind: 'token_update',
  version: step - 1,
  ts,
  session,
  turn,
  step,
  before: [-1],
  after: [-0.9],
});

/**
 * An integrated-reward run:
 * - accuracy at step 0 (0.25, answered 0.5, no tool call so no toolSuccess) and an unrelated
 *   evaluation;
 * - g0, three rollouts of up to three steps: r0 calls 12 * 7, then 84 - 5, then answers 79
 *   (o = +1, one failed vote at step 1); r1 writes a malformed call, then a wrong answer;
 *   r2's expression fails, then it makes a good and an unreadable call, then one more call
 *   and hits the step limit;
 * - train step 1 trained g0.r0's three steps;
 * - accuracy at step 1 (0.5, answered 0.75, toolSuccess 0.8);
 * - g1, two rollouts with the same reward at their only step: no ranking (advantage null);
 * - g2 still being sampled: interactions only, r0 with a call and the step after it.
 */
export function handToolRun(): RunRecord[] {
  return [
    accuracy(0, 0, 1000, { accuracy: 0.25, answered: 0.5, meanSteps: 2.5, meanToolCalls: 0 }),
    { kind: 'evaluation', version: 0, ts: 1001, step: 0, name: 'other', scores: { accuracy: 9 }, perProblem: [] },
    ...toolGroup({
      index: 0,
      problem: 'builtin#0',
      mode: 'integrated',
      version: 0,
      t0: 2000,
      rollouts: [
        {
          outputs: [`First the eggs in 7 boxes. ${call('12 * 7')}`, `Now the broken ones. ${call('84 - 5')}`, 'The answer is 79.'],
          votes: [
            [1, 1, 1],
            [1, 1, null],
            [1, 1, 1],
          ],
          outcome: 1,
        },
        {
          outputs: ['<tool_call>{"name": "calculator", "arguments": </tool_call>', 'The answer is 80.'],
          votes: [
            [-1, -1, -1],
            [1, -1, -1],
          ],
          outcome: -1,
        },
        {
          outputs: [call('12 * eggs'), `${call('12 * 7')}${call('5', 'abacus')}`, call('84 - 5')],
          votes: [
            [-1, -1, -1],
            [1, null, -1],
            [1, 1, 1],
          ],
          outcome: -1,
        },
      ],
    }),
    trainStep(1, 3000),
    tokenUpdate('g0.r0', 1, 1, 3000),
    tokenUpdate('g0.r0', 2, 1, 3000),
    tokenUpdate('g0.r0', 3, 1, 3000),
    { kind: 'version_boundary', version: 1, ts: 3000, step: 1, from: 0, to: 1 },
    accuracy(1, 1, 3100, { accuracy: 0.5, answered: 0.75, meanSteps: 2, meanToolCalls: 1.25, toolSuccess: 0.8 }),
    ...toolGroup({
      index: 1,
      problem: 'builtin#1',
      question: 'What is 6 times 7?',
      mode: 'integrated',
      version: 1,
      t0: 4000,
      rollouts: [
        { outputs: ['It is 41.'], votes: [[-1, -1, -1]], outcome: -1 },
        { outputs: ['Maybe 40.'], votes: [[-1, -1, -1]], outcome: -1 },
      ],
    }),
    ...toolGroup({
      index: 2,
      problem: 'builtin#2',
      question: 'What is 6 times 7?',
      mode: 'integrated',
      version: 1,
      t0: 5000,
      unscored: true,
      rollouts: [
        { outputs: [call('6 * 7'), 'The answer is 42.'], votes: [], outcome: 1 },
        { outputs: ['42'], votes: [], outcome: 1 },
      ],
    }),
  ];
}

/**
 * An outcome-only run: accuracy 0.25 at steps 0 and 1 (the second record has no step: it is
 * counted from the train steps), 0.3 at step 2 (toolSuccess 0.5); one group g0 of two one-step
 * rollouts, one right (\boxed{42}) and one wrong, no PRM votes.
 */
export function handOutcomeRun(): RunRecord[] {
  return [
    accuracy(0, 0, 1000, { accuracy: 0.25, answered: 0.5, meanSteps: 2, meanToolCalls: 0 }),
    ...toolGroup({
      index: 0,
      problem: 'builtin#1',
      question: 'What is 6 times 7?',
      mode: 'outcome',
      version: 0,
      t0: 2000,
      rollouts: [
        { outputs: ['6 times 7 is \\boxed{42}'], votes: [[]], outcome: 1 },
        { outputs: ['I do not know.'], votes: [[]], outcome: -1 },
      ],
    }),
    trainStep(1, 3000),
    accuracy(undefined, 1, 3100, { accuracy: 0.25, answered: 0.5, meanSteps: 2, meanToolCalls: 0.5, toolSuccess: 1 }),
    trainStep(2, 4000),
    accuracy(2, 2, 4100, { accuracy: 0.3, answered: 0.6, meanSteps: 2, meanToolCalls: 1, toolSuccess: 0.5 }, 10),
  ];
}

/** A scored group whose every text is HOSTILE: question, system prompt, outputs, calls, results, judge replies, ids. */
export function hostileToolRun(): RunRecord[] {
  return [
    ...toolGroup({
      index: 0,
      groupId: `g${HOSTILE}`,
      problem: `p${HOSTILE}`,
      question: `question ${HOSTILE}`,
      system: `system ${HOSTILE}`,
      mode: 'integrated',
      version: 0,
      t0: 1000,
      rollouts: [
        {
          outputs: [`${HOSTILE} ${call(HOSTILE)}`, `${HOSTILE} <tool_call>${HOSTILE}</tool_call>`, `answer ${HOSTILE} 3`],
          votes: [
            [1, null],
            [-1, 1],
            [1, 1],
          ],
          raw: [
            [`${HOSTILE} \\boxed{1}`, HOSTILE],
            [`${HOSTILE} \\boxed{-1}`, `\\boxed{1} ${HOSTILE}`],
            ['\\boxed{1}', '\\boxed{1}'],
          ],
          outcome: 1,
        },
      ],
    }),
    accuracy(0, 0, 900, { accuracy: 0, answered: 0, meanSteps: 3, meanToolCalls: 2 }),
  ];
}
