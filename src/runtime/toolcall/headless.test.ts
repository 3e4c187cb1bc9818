/**
 * The tool-call track headless in Node on the CPU engine: the tiny random Qwen3 fixture (real
 * Qwen3 chat template, so the calculator renders in `<tools>`) with the rules step judge, for two
 * training steps. A random model almost never writes a valid tool call, so this checks the
 * bookkeeping: trajectories, step rewards, advantages standardized per step index within each
 * group, samples with the steps' token counts, versions, train steps, evaluations. (A trajectory
 * of several steps on this template is src/runtime/toolcall/qwen3-trajectory.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { tinyModel } from '../../../test/fixtures/tiny-model';
import { validatingSink } from '../../../test/support/runtime/headless';
import { CpuBackend } from '../../gpu/cpu/backend';
import { standardizeByStep } from '../../rl/advantages';
import type { EvaluationRecord, InteractionRecord, RunRecord, SampleRecord, ToolStepRecord, TrainStepRecord } from '../../rl/records';
import { BUILT_IN_PROBLEMS } from '../../sims/problems/index';
import { episodeMessages, TOOL_SYSTEM_PROMPT } from '../../sims/toolcall/index';
import { exampleConfig, parseAnyRunConfig, type ToolCallRunConfig } from '../run-config';
import { readTextFile } from '../services-node';
import { TOOL_TRACK_TOOLS } from '../run-config';
import { ToolCallRunLoop } from './loop';
import { loadToolCallProblems } from './problems';
import { createToolCallNodeServices } from './services-node';

const MAX_NEW_TOKENS = 12;

describe('tool-call track end to end on the tiny fixture (2 steps)', () => {
  it('records trajectories, step rewards, standardized advantages, per-step samples and versions that fit together', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const example = exampleConfig('toolcall', dir);
    example.problems = { source: 'builtin', count: 4 };
    example.toolcall = { rewardMode: 'integrated', groupSize: 2, maxSteps: 2, evalHeldOut: 2 };
    example.schedule = { concurrentGroups: 2, steps: 2, evalEvery: 2 };
    example.preset.batch.size = 2;
    example.preset.judge.binaryVotes = 2;
    example.sampling.policy.maxNewTokens = MAX_NEW_TOKENS;
    const config = parseAnyRunConfig(JSON.parse(JSON.stringify(example))) as ToolCallRunConfig;

    const services = await createToolCallNodeServices(config, new CpuBackend());
    const problems = await loadToolCallProblems(config, readTextFile);
    expect(problems.train.map((p) => p.id)).toEqual(BUILT_IN_PROBLEMS.slice(0, 4).map((p) => p.id));
    expect(problems.heldOut.map((p) => p.id)).toEqual(BUILT_IN_PROBLEMS.slice(4, 6).map((p) => p.id));
    // The policy's prompts list the calculator through the Qwen3 chat template.
    const prompt = services.policyModel.promptText(episodeMessages(problems.train[0].question), { tools: TOOL_TRACK_TOOLS });
    expect(prompt).toContain('<tools>\n{"type": "function", "function": {"name": "calculator"');

    const records: RunRecord[] = [];
    const loop = new ToolCallRunLoop(config, services, problems, validatingSink(records));
    expect(await loop.run()).toEqual({ status: 'finished', step: 2, version: 2 });

    const of = <K extends RunRecord['kind']>(kind: K) => records.filter((r) => r.kind === kind) as Extract<RunRecord, { kind: K }>[];
    const interactions = of('interaction') as InteractionRecord[];
    const toolSteps = of('tool_step') as ToolStepRecord[];
    const samples = of('sample') as SampleRecord[];
    const trainSteps = of('train_step') as TrainStepRecord[];
    const key = (r: { session: string; turn: number }) => `${r.session}#${r.turn}`;
    const interactionOf = new Map(interactions.map((i) => [key(i), i]));

    // Trajectories: each rollout's policy calls are turns 1, 2, ... of its session; the first
    // sees the system prompt and the question, each later one extends the previous with the
    // answer and its tool results.
    const sessions = new Map<string, InteractionRecord[]>();
    for (const i of interactions) sessions.set(i.session, [...(sessions.get(i.session) ?? []), i]);
    for (const [session, turns] of sessions) {
      expect(session).toMatch(/^g\d+\.r[01]$/);
      expect(turns.map((t) => t.turn)).toEqual(turns.map((_, k) => k + 1));
      expect(turns.length).toBeLessThanOrEqual(config.toolcall.maxSteps);
      expect(turns[0].messages[0]).toEqual({ role: 'system', content: TOOL_SYSTEM_PROMPT });
      expect(turns[0].messages).toHaveLength(2);
      for (let t = 1; t < turns.length; t++) {
        expect(turns[t].messages.slice(0, turns[t - 1].messages.length + 1)).toEqual([
          ...turns[t - 1].messages,
          { role: 'assistant', content: turns[t - 1].response },
        ]);
        expect(turns[t].messages.slice(turns[t - 1].messages.length + 1).every((m) => m.role === 'tool')).toBe(true);
      }
      for (const t of turns) {
        expect(t.tokenIds.length).toBeGreaterThan(0);
        expect(t.tokenIds.length).toBeLessThanOrEqual(MAX_NEW_TOKENS);
      }
    }

    // Step records: one per step of every scored trajectory, matching its interaction.
    expect(toolSteps.length).toBeGreaterThan(0);
    const bySession = new Map<string, ToolStepRecord[]>();
    for (const s of toolSteps) bySession.set(s.session, [...(bySession.get(s.session) ?? []), s]);
    for (const [session, steps] of bySession) {
      expect(steps.map((s) => s.stepIndex)).toEqual(steps.map((_, t) => t));
      expect(steps.length).toBe(sessions.get(session)!.length);
      expect(new Set(steps.map((s) => s.outcome)).size).toBe(1);
      // Only the last step can be a final answer; without one the step limit ended the episode.
      steps.forEach((s, t) => expect(s.final).toBe(t === steps.length - 1 ? s.final : false));
      if (!steps.at(-1)!.final) expect(steps.length).toBe(config.toolcall.maxSteps);
      if (steps.at(-1)!.final) expect(steps.at(-1)!.toolResults).toEqual([]);
      for (const s of steps) {
        const interaction = interactionOf.get(key(s))!;
        expect(s.version).toBe(interaction.version);
        // r_t = o + mean(valid votes), m = 2 votes per step.
        expect(s.votes).toHaveLength(2);
        const valid = s.votes.filter((v): v is 1 | -1 => v !== null);
        expect(s.reward).toBeCloseTo(s.outcome + (valid.length ? valid.reduce((a, b) => a + b, 0) / valid.length : 0), 12);
      }
    }
    // Advantages: standardized among each group's steps that share a step index.
    const groups = new Map<string, ToolStepRecord[]>();
    for (const s of toolSteps) groups.set(s.group, [...(groups.get(s.group) ?? []), s]);
    for (const [group, steps] of groups) {
      expect(new Set(steps.map((s) => s.session.split('.')[1])).size).toBe(config.toolcall.groupSize);
      expect(new Set(steps.map((s) => s.problem))).toEqual(new Set([problems.train[Number(group.slice(1)) % 4].id]));
      const expected = standardizeByStep(steps.map((s) => ({ step: s.stepIndex, reward: s.reward })));
      steps.forEach((s, k) => (expected[k] === null ? expect(s.advantage).toBeNull() : expect(s.advantage).toBeCloseTo(expected[k]!, 9)));
    }

    // Samples: one per trajectory, and each trajectory here is one step (the random model writes no
    // tool call), so one per step, the step's advantage (0 without a ranking) on each of its tokens.
    const stepOf = new Map(toolSteps.map((s) => [key(s), s]));
    expect(samples.map(key).sort()).toEqual(toolSteps.map(key).sort());
    for (const sample of samples) {
      const step = stepOf.get(key(sample))!;
      expect(sample.perToken).toHaveLength(interactionOf.get(key(sample))!.tokenIds.length);
      expect(sample.perToken.every((a) => a === (step.advantage ?? 0))).toBe(true);
      expect(sample.version).toBe(step.version);
      expect(sample.reward).toBe(step.reward);
    }

    // Two steps of 2 samples; the trainer saw exactly their tokens; a version boundary after each.
    expect(trainSteps.map((s) => [s.step, s.samples, s.version])).toEqual([
      [1, 2, 0],
      [2, 2, 1],
    ]);
    trainSteps.forEach((s, b) => {
      // Samples are logged in the order they entered the buffer, so batch b is samples 2b and 2b + 1.
      const batch = samples.slice(2 * b, 2 * b + 2);
      expect(s.stats.tokens).toBe(batch.reduce((n, x) => n + x.perToken.length, 0));
      expect(s.skipped).toBeNull();
      expect(batch.every((x) => x.version <= s.version)).toBe(true);
    });
    expect(of('version_boundary').map((b) => [b.from, b.to])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    const secondStep = records.indexOf(trainSteps[1]);
    expect(records.slice(0, secondStep).some((r) => r.kind === 'interaction' && r.version === 2)).toBe(false);

    // Greedy accuracy on the held-out problems before training and after the last step.
    const evals = of('evaluation') as EvaluationRecord[];
    expect(evals.map((e) => [e.name, e.step])).toEqual([
      ['accuracy', 0],
      ['accuracy', 2],
    ]);
    expect(evals[0].version).toBe(0);
    for (const e of evals) {
      expect(e.perProblem.map((p) => p.id)).toEqual(problems.heldOut.map((p) => p.id));
      expect(e.scores.accuracy).toBe(e.perProblem.filter((p) => p.score === 1).length / 2);
      expect(e.scores.meanSteps).toBeGreaterThanOrEqual(1);
      expect(e.scores.meanSteps).toBeLessThanOrEqual(config.toolcall.maxSteps);
    }
  }, 300_000);
});
