/**
 * A whole run in the lab with the judge and the simulated user on transformers.js, each in its own
 * worker, from picked folders of ONNX files (the tiny random Qwen3 fixture: real tokenizer and
 * chat template, random weights), and the policy (stories260K) on the engine. Random weights judge
 * in garbage: every such vote is a failed vote, the run goes on session after session until it is
 * stopped, the feed says "failed", and the run file names the library, device and model of each role.
 */
import { describe, expect, inject, it } from 'vitest';
import { flushSync } from 'svelte';
import { exportRun } from '../../storage/index';
import type { InteractionRecord, JudgeVoteRecord, RunRecord } from '../../rl/records';
import type { RunConfig } from '../../runtime/run-config';
import { RunLoop } from '../../runtime/runloop';
import { createRules } from '../../sims/rules/index';
import { createScenario } from '../../sims/scenarios/index';
import { storyOpenings } from '../../sims/problems/index';
import { sharedProblems } from '../../runtime/problems';
import { WorkerGenerator } from '../../workers/browser/generator-client';
import { PolicyClient } from '../../workers/browser/policy-client';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { gunzip } from '../../../test/support/storage/fixtures';
import { render } from '../../../test/support/views/testing';
import { makePreset } from '../../rl/presets';
import RunView from './RunView.svelte';

const controller = labControllers('transformers-run');
const onnxDir = inject('tinyOnnxDir');
const stories = `${location.origin}/@fs${inject('stories260KDir')}`;

/** The fixture's folder as the person would pick it (File objects, no network). */
async function pickedFolder(): Promise<File[]> {
  const names = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'];
  return Promise.all(
    names.map(async (path) => {
      const blob = await (await fetch(`/@fs${onnxDir}/${path}`)).blob();
      return new File([blob], path.split('/').pop()!);
    }),
  );
}

describe('a run with transformers.js roles', () => {
  it('judges with failed votes from random weights, goes on session after session, and records what played each role', async () => {
    const lab = await controller();
    const folder = await pickedFolder();
    lab.setup.policy = { source: 'hub', hubId: stories, localName: '', backend: 'cpu', weights: 'f32' };
    lab.setup.method = 'combined';
    lab.setup.preset = makePreset('combined', { batch: { size: 2 }, finetune: { lora: { rank: 2 } }, judge: { maxNewTokens: 8 } });
    lab.setup.roles = {
      user: { kind: 'transformers', model: 'tiny-user', source: 'files', device: 'wasm' },
      judge: { kind: 'transformers', model: 'tiny-judge', source: 'files', device: 'wasm' },
      evaluator: { kind: 'rules' },
    };
    lab.roleFiles = { user: folder, judge: folder };
    lab.setup.problems = { source: 'builtin', count: 2, order: 'reference' };
    lab.setup.schedule = { concurrentSessions: 2, steps: 2, evalEvery: 0, evalProblems: 1, evalVotes: 1 };
    lab.setup.sampling = { policy: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 8 }, user: { temperature: 0.7, maxNewTokens: 8 } };
    lab.setup.seed = 5;

    await lab.start();
    expect(lab.error).toBeNull();
    const runId = lab.liveRunId!;
    expect(runId).toBeTruthy();
    // Every vote fails, so no turn gives a training signal and the batch never fills: the run
    // goes on session after session until it is stopped.
    const count = (kind: RunRecord['kind']) => lab.records.filter((r) => r.kind === kind).length;
    await expect.poll(() => count('session_end') >= 3 && count('judge_vote') >= 8, { timeout: 240_000, interval: 500 }).toBe(true);
    lab.stop();
    await expect.poll(() => lab.phase, { timeout: 60_000, interval: 200 }).toBe('idle');
    expect(lab.error).toBeNull();
    expect(lab.roleLabels).toMatchObject({
      judge: expect.stringMatching(/^transformers\.js: tiny-judge \(wasm, fp32\)$/),
      user: expect.stringMatching(/tiny-user/),
    });

    const records: RunRecord[] = (await lab.store.records(runId)).map((r) => r.record);
    const votes = records.filter((r): r is JudgeVoteRecord => r.kind === 'judge_vote');
    expect(votes.length).toBeGreaterThan(0);
    // Random weights never write a \boxed{} verdict: failed votes, kept with their raw text.
    expect(votes.filter((v) => v.judge === 'binary').every((v) => v.score === null)).toBe(true);
    expect(votes.every((v) => typeof v.raw === 'string')).toBe(true);
    expect(records.filter((r) => r.kind === 'judge_result').every((r) => r.kind === 'judge_result' && !r.accepted)).toBe(true);
    expect(records.filter((r) => r.kind === 'interaction').length).toBeGreaterThan(6);
    expect(records.some((r) => r.kind === 'runtime_event' && r.event === 'error')).toBe(false);
    expect((await lab.store.getRun(runId))?.status).toBe('stopped');

    // The feed shows the failures.
    await lab.open(runId);
    using view = render(RunView, { lab });
    await new Promise((r) => setTimeout(r, 0));
    flushSync();
    expect(view.target.textContent).toMatch(/vote 1 → failed/);

    // The run file says what played each role.
    const [header] = (await gunzip(await exportRun(lab.store, runId))).split('\n');
    const sources = JSON.parse(header).run.config.roleSources;
    for (const [role, model] of [
      ['judge', 'tiny-judge'],
      ['user', 'tiny-user'],
    ]) {
      expect(sources[role]).toMatchObject({ kind: 'transformers', device: 'wasm', model, dtype: 'fp32' });
      expect(sources[role].library).toMatch(/^@huggingface\/transformers \d/);
    }
    expect(sources.evaluator).toMatchObject({ kind: 'rules' });
  });
});

describe('a run with transformers.js roles, twice with one seed', () => {
  it('repeats its judge votes and user replies given the seed, and another seed changes them', async () => {
    const slash = onnxDir.lastIndexOf('/');
    const judge = await WorkerGenerator.load({
      kind: 'transformers',
      model: onnxDir.slice(slash + 1),
      localModelPath: `/@fs${onnxDir.slice(0, slash)}/`,
      allowRemoteModels: false,
      device: 'wasm',
      dtype: 'fp32',
    });
    const policy = PolicyClient.create(() => {});
    try {
      const preset = makePreset('combined', { batch: { size: 2 }, finetune: { lora: { rank: 2 } }, judge: { maxNewTokens: 6 } });
      await policy.load({ location: { kind: 'hub', id: stories }, backend: 'cpu', preset, seed: 3, temperature: 1 });
      const scenario = { id: 'storyteller', subject: 'dog' } as const;
      const rules = createRules(createScenario(scenario));
      const run = async (seed: number) => {
        const config: RunConfig = {
          format: 'nextstate-run-config',
          formatVersion: 1,
          scenario,
          method: 'combined',
          preset,
          models: {
            policy: { model: stories, backend: 'cpu' },
            user: { kind: 'transformers', model: 'tiny' },
            judge: { kind: 'transformers', model: 'tiny' },
            evaluator: { kind: 'rules' },
          },
          seed,
          problems: { source: 'builtin', count: 4 },
          // One session at a time: which problem a session gets does not depend on timing.
          schedule: { concurrentSessions: 1, steps: 2, evalEvery: 0, evalProblems: 1, evalVotes: 1 },
          sampling: { policy: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 6 }, user: { temperature: 0.7, maxNewTokens: 6 } },
        };
        const records: RunRecord[] = [];
        const loop = new RunLoop(config, { policy, user: judge, judge, hintJudge: judge, evaluator: rules.evaluator }, sharedProblems(storyOpenings('dog')), {
          append: async (r) => void records.push(...r),
        });
        const done = loop.run();
        await expect.poll(() => records.filter((r) => r.kind === 'judge_vote').length, { timeout: 120_000, interval: 200 }).toBeGreaterThanOrEqual(6);
        loop.stop();
        await done;
        const votes = records.filter((r): r is JudgeVoteRecord => r.kind === 'judge_vote').slice(0, 6);
        const replies = records.filter((r): r is InteractionRecord => r.kind === 'interaction').slice(0, 3);
        return { votes: votes.map((v) => [v.session, v.turn, v.judge, v.vote, v.raw]), replies: replies.map((r) => [r.messages.at(-1)?.content, r.response]) };
      };
      const first = await run(11);
      const again = await run(11);
      expect(again).toEqual(first);
      const other = await run(12);
      expect(other.votes.map((v) => v[4])).not.toEqual(first.votes.map((v) => v[4]));
    } finally {
      judge.terminate();
      policy.terminate();
    }
  });
});
