import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RunRecord, ToolStepRecord } from '../../rl/records';
import { accuracySeries, parseRolloutId, rewardModeOf, toolTrajectories, type GroupView } from './derive-toolcall';
import { handOutcomeRun, handToolRun, QUESTION, SYSTEM } from '../../../test/support/views/testing-toolcall';

const readJsonl = (name: string): RunRecord[] =>
  readFileSync(new URL(`../../../test/fixtures/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RunRecord);

function groupOf(groups: GroupView[], id: string): GroupView {
  const g = groups.find((x) => x.group === id);
  if (!g) throw new Error(`no group ${id}`);
  return g;
}

describe('parseRolloutId', () => {
  it('reads the run loop’s rollout ids and nothing else', () => {
    expect(parseRolloutId('g3.r1')).toEqual({ group: 'g3', rollout: 1 });
    expect(parseRolloutId('a.b.r12')).toEqual({ group: 'a.b', rollout: 12 });
    expect(parseRolloutId('s0')).toBeNull();
    expect(parseRolloutId('g1.r')).toBeNull();
    expect(parseRolloutId('.r1')).toBeNull();
  });
});

describe('toolTrajectories (hand-written run)', () => {
  const groups = toolTrajectories(handToolRun());

  it('groups rollouts by group, in log order, with their problem, question and mode', () => {
    expect(groups.map((g) => g.group)).toEqual(['g0', 'g1', 'g2']);
    const g0 = groupOf(groups, 'g0');
    expect(g0.problem).toBe('builtin#0');
    expect(g0.question).toBe(QUESTION);
    expect(g0.system).toBe(SYSTEM);
    expect(g0.mode).toBe('integrated');
    expect(g0.rollouts.map((r) => r.session)).toEqual(['g0.r0', 'g0.r1', 'g0.r2']);
    expect(g0.rollouts.map((r) => r.rollout)).toEqual([0, 1, 2]);
    expect(g0.rollouts.map((r) => r.steps.length)).toEqual([3, 2, 3]);
    expect(g0.rollouts.map((r) => r.outcome)).toEqual([1, -1, -1]);
    expect(g0.rollouts.map((r) => r.end)).toEqual(['answered', 'answered', 'step-limit']);
    expect(g0.scored).toBe(true);
    expect(g0.solved).toBe(1);
  });

  it('parses each step’s calls with the environment’s parser and pairs them with their results', () => {
    const [r0, r1, r2] = groupOf(groups, 'g0').rollouts;
    const s = r0.steps[0];
    expect(s.stepIndex).toBe(0);
    expect(s.turn).toBe(1);
    expect(s.version).toBe(0);
    expect(s.output).toBe('First the eggs in 7 boxes. <tool_call>{"name":"calculator","arguments":{"expression":"12 * 7"}}</tool_call>');
    expect(s.text).toBe('First the eggs in 7 boxes.');
    expect(s.tokens).toBe(9); // the builder writes one token per word
    expect(s.final).toBe(false);
    expect(s.calls).toEqual([
      {
        index: 0,
        expression: '12 * 7',
        raw: '<tool_call>{"name":"calculator","arguments":{"expression":"12 * 7"}}</tool_call>',
        parseError: null,
        result: '84',
        ok: true,
      },
    ]);
    expect(r0.steps[1].calls.map((c) => [c.expression, c.result, c.ok])).toEqual([['84 - 5', '79', true]]);
    // The final answer: no call, its number read from "The answer is 79.".
    expect(r0.steps[2].final).toBe(true);
    expect(r0.steps[2].calls).toEqual([]);
    expect(r0.steps[2].toolResults).toEqual([]);
    expect(r0.steps[2].answer).toEqual({ value: 79, source: 'answer-phrase' });
    expect(r0.steps[1].answer).toBeNull();

    // A malformed block: no expression, the parser's message, and the error the tool sent back.
    const bad = r1.steps[0].calls[0];
    expect(bad.expression).toBeNull();
    expect(bad.parseError).toMatch(/^Tool call 1: .* is not valid JSON/);
    expect(bad.result).toBe(`Error: ${bad.parseError}`);
    expect(bad.ok).toBe(false);
    expect(r1.steps[1].answer).toEqual({ value: 80, source: 'answer-phrase' });

    // A readable call whose expression fails, then one good and one unreadable block.
    expect(r2.steps[0].calls[0].expression).toBe('12 * eggs');
    expect(r2.steps[0].calls[0].parseError).toBeNull();
    expect(r2.steps[0].calls[0].ok).toBe(false);
    expect(r2.steps[0].calls[0].result).toMatch(/^Error: /);
    expect(r2.steps[1].calls.map((c) => [c.index, c.expression, c.ok])).toEqual([
      [0, '12 * 7', true],
      [1, null, false],
    ]);
    expect(r2.steps[1].calls[1].parseError).toContain('There is no tool named "abacus"');
    expect(r2.steps[2].final).toBe(false);
    expect([r0, r1, r2].map((r) => [r.toolCalls, r.toolOk])).toEqual([
      [2, 2],
      [1, 0],
      [4, 2],
    ]);
  });

  it('gives each step its votes, r_t = o + mean(valid votes) and its standardized advantage', () => {
    const [r0, r1, r2] = groupOf(groups, 'g0').rollouts;
    // Step 1 of r0: votes +1, +1 and a failed one; mean of the valid votes = 1.
    expect(r0.steps[1].votes).toEqual([
      { vote: 0, score: 1, raw: 'The step moves the solution forward.\n\n\\boxed{1}' },
      { vote: 1, score: 1, raw: 'The step moves the solution forward.\n\n\\boxed{1}' },
      { vote: 2, score: null, raw: 'The step is hard to judge; no verdict.' },
    ]);
    expect(r0.steps[1].voteMean).toBe(1);
    // r_t by hand: r0 = 1 + 1 at every step; r1 = -1 - 1, then -1 + (1 - 1 - 1)/3;
    // r2 = -1 - 1, then -1 + (1 - 1)/2, then -1 + 1.
    expect(r0.steps.map((s) => s.reward)).toEqual([2, 2, 2]);
    expect(r1.steps.map((s) => s.voteMean)).toEqual([-1, -1 / 3]);
    expect(r1.steps.map((s) => s.reward)).toEqual([-2, -4 / 3]);
    expect(r2.steps.map((s) => s.voteMean)).toEqual([-1, 0, 1]);
    expect(r2.steps.map((s) => s.reward)).toEqual([-2, -1, 0]);
    // Step index 0: rewards 2, -2, -2; mean -2/3; population std sqrt(32/9) = 4*sqrt(2)/3;
    // A = (8/3) / (4*sqrt(2)/3) = sqrt(2) and (-4/3) / (4*sqrt(2)/3) = -1/sqrt(2).
    expect(r0.steps[0].advantage).toBeCloseTo(Math.SQRT2, 5);
    expect(r1.steps[0].advantage).toBeCloseTo(-Math.SQRT1_2, 5);
    expect(r2.steps[0].advantage).toBeCloseTo(-Math.SQRT1_2, 5);
    // Step index 1: rewards 2, -4/3, -1; mean -1/9; deviations 19/9, -11/9, -8/9;
    // variance (361 + 121 + 64) / 243 = 546/243, std 1.498971: A = 1.408373, -0.815374, -0.592999.
    const std1 = Math.sqrt(546 / 243);
    expect(r0.steps[1].advantage).toBeCloseTo(19 / 9 / std1, 5);
    expect(r0.steps[1].advantage).toBeCloseTo(1.408373, 5);
    expect(r1.steps[1].advantage).toBeCloseTo(-0.815374, 5);
    expect(r2.steps[1].advantage).toBeCloseTo(-0.592999, 5);
    // Step index 2: r0 and r2 only; rewards 2 and 0: mean 1, std 1, A = +1 and -1.
    expect(r0.steps[2].advantage).toBeCloseTo(1, 5);
    expect(r2.steps[2].advantage).toBeCloseTo(-1, 5);
    expect(r0.steps.every((s) => s.scored)).toBe(true);
    expect([r0, r1, r2].map((r) => r.steps.map((s) => s.peers))).toEqual([
      [3, 3, 2],
      [3, 3],
      [3, 3, 2],
    ]);
  });

  it('marks the steps a train step used', () => {
    const [r0, r1] = groupOf(groups, 'g0').rollouts;
    expect(r0.steps.map((s) => s.trainedAt)).toEqual([[1], [1], [1]]);
    expect(r1.steps[0].trainedAt).toEqual([]);
  });

  it('leaves the advantage null when a step index carries no ranking', () => {
    const g1 = groupOf(groups, 'g1');
    expect(g1.question).toBe('What is 6 times 7?');
    expect(g1.rollouts.map((r) => r.steps.map((s) => [s.reward, s.advantage, s.version]))).toEqual([[[-2, null, 1]], [[-2, null, 1]]]);
    expect(g1.solved).toBe(0);
  });

  it('shows a group still being sampled, its tool results read from the next step’s messages', () => {
    const g2 = groupOf(groups, 'g2');
    expect(g2.scored).toBe(false);
    expect(g2.problem).toBeNull();
    expect(g2.mode).toBeNull();
    expect(g2.question).toBe('What is 6 times 7?');
    const [r0, r1] = g2.rollouts;
    expect(r0.end).toBe('running');
    expect(r0.outcome).toBeNull();
    expect(r0.steps[0].toolResults).toEqual(['42']);
    expect(r0.steps[0].calls.map((c) => [c.expression, c.result, c.ok])).toEqual([['6 * 7', '42', true]]);
    expect(r0.steps[0].scored).toBe(false);
    expect(r0.steps[0].reward).toBeNull();
    expect(r0.steps[0].advantage).toBeNull();
    expect(r0.steps[0].votes).toEqual([]);
    expect(r0.steps[0].voteMean).toBeNull();
    expect(r0.steps[1].final).toBe(true);
    expect(r0.steps[1].answer?.value).toBe(42);
    // The last step has no next step yet: its results are unknown.
    expect(r1.steps[0].final).toBe(true);
    expect(r1.steps[0].answer).toEqual({ value: 42, source: 'last-number' });
  });

  it('keeps a scored step whose interaction is missing, and skips sessions that are not rollouts', () => {
    const orphan: ToolStepRecord = {
      kind: 'tool_step',
      version: 3,
      ts: 1,
      session: 'x',
      turn: 2,
      group: 'gx',
      problem: 'p',
      stepIndex: 1,
      final: false,
      toolResults: ['5'],
      outcome: -1,
      mode: 'outcome',
      votes: [],
      raw: [],
      reward: -1,
      advantage: null,
    };
    const personal: RunRecord = {
      kind: 'interaction',
      version: 0,
      ts: 1,
      session: 's0',
      turn: 1,
      turnType: 'main',
      messages: [],
      response: 'hi',
      tokenIds: [1],
      logprobs: [-1],
      startedAt: 0,
      finishedAt: 1,
    };
    const [g] = toolTrajectories([personal, orphan]);
    expect(toolTrajectories([personal])).toEqual([]);
    expect(g.group).toBe('gx');
    expect(g.question).toBeNull();
    expect(g.rollouts[0].rollout).toBe(0);
    const s = g.rollouts[0].steps[0];
    expect([s.stepIndex, s.output, s.version, s.calls, s.toolResults, s.final, s.reward]).toEqual([1, null, 3, [], ['5'], false, -1]);
    expect(g.rollouts[0].end).toBe('step-limit');
    expect(s.peers).toBe(1);
  });

  it('is empty without records', () => {
    expect(toolTrajectories([])).toEqual([]);
  });
});

describe('outcome-only reward', () => {
  it('has no votes, r_t = o, and advantages ±1 for one right and one wrong rollout', () => {
    const records = handOutcomeRun();
    expect(rewardModeOf(records)).toBe('outcome');
    const [g] = toolTrajectories(records);
    expect(g.mode).toBe('outcome');
    const steps = g.rollouts.map((r) => r.steps[0]);
    expect(steps.map((s) => s.votes)).toEqual([[], []]);
    expect(steps.map((s) => s.voteMean)).toEqual([null, null]);
    expect(steps.map((s) => s.reward)).toEqual([1, -1]);
    // mean 0, std 1: A = ±1 / (1 + 1e-6).
    expect(steps[0].advantage).toBeCloseTo(1, 5);
    expect(steps[1].advantage).toBeCloseTo(-1, 5);
    expect(steps[0].answer).toEqual({ value: 42, source: 'boxed' });
    expect(steps[1].answer).toBeNull();
  });
});

describe('accuracySeries', () => {
  it('reads the accuracy evaluations, with the first as the baseline', () => {
    const s = accuracySeries(handToolRun());
    expect(s.baseline).toBe(0.25);
    expect(s.points.map((p) => [p.step, p.version, p.accuracy, p.answered, p.toolSuccess, p.meanSteps, p.meanToolCalls, p.problems])).toEqual([
      [0, 0, 0.25, 0.5, null, 2.5, 0, 4],
      [1, 1, 0.5, 0.75, 0.8, 2, 1.25, 4],
    ]);
  });

  it('counts train steps for a record without a step', () => {
    const s = accuracySeries(handOutcomeRun());
    expect(s.points.map((p) => [p.step, p.accuracy, p.toolSuccess, p.problems])).toEqual([
      [0, 0.25, null, 4],
      [1, 0.25, 1, 4],
      [2, 0.3, 0.5, 10],
    ]);
    expect(s.baseline).toBe(0.25);
  });

  it('is empty without evaluations, and ignores non-finite scores', () => {
    expect(accuracySeries([])).toEqual({ points: [], baseline: null });
    const s = accuracySeries([{ kind: 'evaluation', version: 0, ts: 1, step: 0, name: 'accuracy', scores: { accuracy: Number.NaN }, perProblem: [] }]);
    expect(s.points[0].accuracy).toBeNull();
    expect(s.points[0].answered).toBeNull();
    expect(s.baseline).toBeNull();
    expect(rewardModeOf([])).toBeNull();
  });
});

describe('the recorded tool-call runs (tiny random model, rules judge)', () => {
  for (const [file, mode, reward, votes] of [
    ['recorded-toolcall.jsonl', 'integrated', -2, 3],
    ['recorded-toolcall-outcome.jsonl', 'outcome', -1, 0],
  ] as const) {
    it(`${mode}: five groups of two one-step rollouts, all wrong, no ranking; accuracy 0 at steps 0, 1, 2`, () => {
      const records = readJsonl(file);
      expect(rewardModeOf(records)).toBe(mode);
      const groups = toolTrajectories(records);
      expect(groups.map((g) => g.group)).toEqual(['g0', 'g1', 'g2', 'g3', 'g4']);
      expect(groups.map((g) => g.problem)).toEqual(['builtin#0', 'builtin#1', 'builtin#2', 'builtin#3', 'builtin#0']);
      for (const g of groups) {
        expect(g.scored).toBe(true);
        expect(g.question).toMatch(/\?/);
        expect(g.rollouts.map((r) => r.session)).toEqual([`${g.group}.r0`, `${g.group}.r1`]);
        for (const r of g.rollouts) {
          expect(r.outcome).toBe(-1);
          expect(r.end).toBe('answered');
          expect(r.steps).toHaveLength(1);
          const [s] = r.steps;
          expect(s.final).toBe(true);
          expect(s.output).not.toBeNull();
          expect(s.tokens).toBe(12);
          expect([s.reward, s.advantage, s.votes.length]).toEqual([reward, null, votes]);
        }
      }
      // g0-g2 generated before train step 1, g3-g4 by version 1.
      expect(groups.map((g) => g.rollouts[0].steps[0].version)).toEqual([0, 0, 0, 1, 1]);
      expect(groups[0].rollouts[0].steps[0].trainedAt).toEqual([1]);
      const acc = accuracySeries(records);
      expect(acc.points.map((p) => [p.step, p.accuracy, p.answered, p.toolSuccess, p.problems])).toEqual([
        [0, 0, 1, null, 3],
        [1, 0, 1, null, 3],
        [2, 0, 1, null, 3],
      ]);
      expect(acc.baseline).toBe(0);
    });
  }
});
