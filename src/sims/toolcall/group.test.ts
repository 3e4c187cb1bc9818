import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../rl/messages';
import type { TextGenerator } from '../../generators/generator';
import { groupAdvantages, runGroup, sampleGroup } from './group';
import { readStepJudgePrompt } from '../../rl/step-judge';
import { scoreTrajectory } from './prm';
import { RulesStepJudge } from './rules-judge';
import { calculatorCall, scriptedPolicy } from '../../../test/support/toolcall/testing';
import { runToolEpisode } from './environment';

const PROBLEM = { question: 'Two boxes of 12 eggs and 5 more eggs. How many eggs?', answer: '2 * 12 + 5 = 29\n#### 29' };

/** A judge whose votes for a step are scripted by the step's output text, handed out in order. */
function judgeByOutput(script: Record<string, string[]>): TextGenerator {
  const used = new Map<string, number>();
  return {
    label: 'scripted judge',
    kind: 'rules',
    async generate(messages: ChatMessage[]) {
      const { output } = readStepJudgePrompt(messages);
      const k = used.get(output) ?? 0;
      used.set(output, k + 1);
      return script[output][k];
    },
  };
}

describe('step-wise rewards and standardization on a scripted group', () => {
  // Three rollouts of the same problem.
  const A = [`A: boxes ${calculatorCall('2 * 12')}`, `A: plus five ${calculatorCall('24 + 5')}`, 'A: The answer is 29.'];
  const B = [`B: boxes ${calculatorCall('2 * 12')}`, `B: plus fifty ${calculatorCall('24 + 50')}`, 'B: The answer is 74.'];
  const C = ['C: <tool_call>{"name": "calc", "arguments": {"expression": "2*12+5"}}</tool_call>', 'C: The answer is 29.'];
  const votes: Record<string, string[]> = {
    [A[0]]: ['\\boxed{1}', '\\boxed{1}'],
    [A[1]]: ['\\boxed{1}', '\\boxed{-1}'],
    [A[2]]: ['\\boxed{1}', '\\boxed{1}'],
    [B[0]]: ['\\boxed{1}', '\\boxed{1}'],
    [B[1]]: ['\\boxed{-1}', '\\boxed{-1}'],
    [B[2]]: ['\\boxed{1}', 'no decision'],
    [C[0]]: ['\\boxed{-1}', '\\boxed{-1}'],
    [C[1]]: ['\\boxed{1}', '\\boxed{0}'],
  };

  async function scoredGroup(mode: 'integrated' | 'outcome') {
    const judge = judgeByOutput(votes);
    const trajectories = await Promise.all([A, B, C].map((script) => runToolEpisode(PROBLEM, scriptedPolicy(script))));
    expect(trajectories.map((t) => t.outcome)).toEqual([1, -1, 1]);
    return Promise.all(trajectories.map((t) => scoreTrajectory(t, judge, { votes: 2, mode })));
  }

  it('integrated: r_t = o + mean(votes), standardized per step index', async () => {
    const scored = await scoredGroup('integrated');
    // A: o=+1, means 1, 0, 1         -> 2, 1, 2
    // B: o=-1, means 1, -1, 1 (one failed vote) -> 0, -2, 0
    // C: o=+1, means -1, 1 (\boxed{0} fails) -> 0, 2
    expect(scored.map((s) => s.rewards)).toEqual([
      [2, 1, 2],
      [0, -2, 0],
      [0, 2],
    ]);
    const adv = groupAdvantages(scored);
    // Step 0: rewards 2, 0, 0; mean 2/3; population std sqrt(8/9) = 2*sqrt(2)/3.
    //   A: (4/3) / (2*sqrt(2)/3) = sqrt(2); B, C: (-2/3) / (2*sqrt(2)/3) = -1/sqrt(2).
    // Step 1: rewards 1, -2, 2; mean 1/3; std sqrt(26)/3.
    //   A: 2/sqrt(26); B: -7/sqrt(26); C: 5/sqrt(26).
    // Step 2: rewards 2, 0 (only A and B reach it); mean 1; std 1 -> +1, -1.
    const eps = 1e-6;
    const expected = [
      [Math.SQRT2, 2 / Math.sqrt(26), 1],
      [-1 / Math.SQRT2, -7 / Math.sqrt(26), -1],
      [-1 / Math.SQRT2, 5 / Math.sqrt(26)],
    ];
    const stds = [(2 * Math.SQRT2) / 3, Math.sqrt(26) / 3, 1];
    adv.forEach((rollout, r) => {
      expect(rollout.map((s) => s.step)).toEqual(expected[r].map((_, t) => t));
      rollout.forEach((s, t) => {
        // The library adds 1e-6 to the std: scale the exact value accordingly.
        expect(s.advantage).toBeCloseTo((expected[r][t] * stds[t]) / (stds[t] + eps), 10);
        expect(s.reward).toBe(scored[r].rewards[t]);
      });
    });
    expect(adv[0][0].advantage).toBeCloseTo(1.41421, 5);
    expect(adv[1][1].advantage).toBeCloseTo(-1.37281, 5);
  });

  it('outcome only: r_t = o, standardized per step index', async () => {
    const scored = await scoredGroup('outcome');
    expect(scored.map((s) => s.rewards)).toEqual([
      [1, 1, 1],
      [-1, -1, -1],
      [1, 1],
    ]);
    const adv = groupAdvantages(scored).map((rollout) => rollout.map((s) => s.advantage!));
    // Steps 0 and 1: rewards 1, -1, 1; mean 1/3; std 2*sqrt(2)/3 -> 1/sqrt(2), -sqrt(2), 1/sqrt(2).
    // Step 2: 1, -1 -> +1, -1.
    expect(adv[0][0]).toBeCloseTo(0.707106, 5);
    expect(adv[1][0]).toBeCloseTo(-1.414212, 5);
    expect(adv[2][1]).toBeCloseTo(0.707106, 5);
    expect(adv[0][2]).toBeCloseTo(0.999999, 5);
    expect(adv[1][2]).toBeCloseTo(-0.999999, 5);
  });
});

describe('groupAdvantages edge cases', () => {
  const steps = (...rewards: number[]) => ({ steps: rewards.map((reward, step) => ({ step, reward, votes: [], texts: [] })) });

  it('drops a step whose rewards are all equal and keeps a lone step raw', () => {
    const adv = groupAdvantages([steps(1, 3, 0.5), steps(1, -1)]);
    expect(adv[0][0].advantage).toBeNull();
    expect(adv[1][0].advantage).toBeNull();
    expect(adv[0][1].advantage).toBeCloseTo(1, 5);
    expect(adv[1][1].advantage).toBeCloseTo(-1, 5);
    expect(adv[0][2]).toEqual({ step: 2, reward: 0.5, advantage: 0.5 });
  });

  it('handles an empty group', () => {
    expect(groupAdvantages([])).toEqual([]);
  });
});

describe('sampleGroup and runGroup', () => {
  it('runs n rollouts (default 8)', async () => {
    const policy = scriptedPolicy(['The answer is 29.']);
    expect(await sampleGroup(PROBLEM, policy)).toHaveLength(8);
    expect(await sampleGroup(PROBLEM, policy, { n: 3 })).toHaveLength(3);
    await expect(sampleGroup(PROBLEM, policy, { n: 0 })).rejects.toThrow(/whole number of rollouts/);
  });

  it('samples, scores with the rules judge and standardizes one problem', async () => {
    // Rollouts alternate between a correct and a wrong final answer after one good call. They run
    // concurrently, so each rollout's second step reads which variant its first step wrote.
    let started = 0;
    const policy = async (messages: ChatMessage[]) => {
      if (messages.length === 2) return { text: calculatorCall(started++ % 2 ? '(2 * 12) + 5' : '2 * 12 + 5') };
      return { text: `The answer is ${messages[2].content.includes('(') ? 30 : 29}.` };
    };
    const result = await runGroup(PROBLEM, policy, new RulesStepJudge(), { n: 4, votes: 1, mode: 'integrated' });
    expect(result.solved).toBe(0.5);
    // Correct rollouts: [1 + 1, 1 + 1] = [2, 2]; wrong ones: [-1 + 1, -1 + 1] = [0, 0].
    expect(result.scored.map((s) => s.rewards).sort()).toEqual([
      [0, 0],
      [0, 0],
      [2, 2],
      [2, 2],
    ]);
    for (const rollout of result.advantages) {
      for (const s of rollout) expect(Math.abs(s.advantage!)).toBeCloseTo(1, 5);
    }
  });
});
