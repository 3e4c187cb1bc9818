/**
 * The live runtime in real Chromium: the policy in a web worker on WebGPU (SwiftShader), the
 * run loop on the page with rules judge/user/evaluator. The policy is stories260K rather than
 * the Qwen3-tokenizer fixture: on SwiftShader (~0.3 GFLOP/s) the fixture's 151,936-row LM head
 * makes a two-step run take many minutes, while a 512-token vocabulary exercises the same code.
 */
import { afterAll, describe, expect, inject, it } from 'vitest';
import { makePreset } from '../../rl/presets';
import type { InteractionRecord, RunRecord, TrainStepRecord } from '../../rl/records';
import { storyOpenings } from '../../sims/problems/index';
import { sharedProblems } from '../../runtime/problems';
import { createRules } from '../../sims/rules/index';
import { createScenario } from '../../sims/scenarios/index';
import type { RunConfig } from '../../runtime/run-config';
import { RunLoop } from '../../runtime/runloop';
import { PolicyClient } from './policy-client';
import type { PolicyEvent } from './policy-host';
import type { PolicyService } from '../../runtime/policy-service';

const modelUrl = `${location.origin}/@fs${inject('stories260KDir')}`;

function config(steps: number): RunConfig {
  return {
    format: 'nextstate-run-config',
    formatVersion: 1,
    scenario: { id: 'storyteller', subject: 'dog' },
    method: 'combined',
    preset: makePreset('combined', { batch: { size: 4 }, finetune: { lora: { rank: 2 } }, optimizer: { lr: 1e-3 }, judge: { maxNewTokens: 64 } }),
    models: { policy: { model: modelUrl, backend: 'webgpu' }, user: { kind: 'rules' }, judge: { kind: 'rules' }, evaluator: { kind: 'rules' } },
    seed: 3,
    problems: { source: 'builtin', count: 12 },
    schedule: { concurrentSessions: 4, steps, evalEvery: 0, evalProblems: 2, evalVotes: 1 },
    sampling: { policy: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 12 }, user: { temperature: 0.7, maxNewTokens: 64 } },
  };
}

const events: PolicyEvent[] = [];
const policy = PolicyClient.create((e) => events.push(e));
/** A fresh model at version 0, as the lab loads one for each run: a run's versions start there. */
const loadFresh = () =>
  policy.load({
    location: { kind: 'hub', id: modelUrl },
    backend: 'webgpu',
    preset: config(1).preset,
    seed: 3,
    temperature: config(1).sampling.policy.temperature,
  });
afterAll(() => policy.terminate());

/**
 * The same worker without pinned versions: a loop over it runs free, as serve and talk-yourself
 * do, each session answered by whatever version serves when it asks.
 */
const freePolicy: PolicyService = Object.assign(Object.create(policy) as PolicyClient, { keepVersionsFrom: undefined });

function services(over: PolicyService = policy) {
  const rules = createRules(createScenario({ id: 'storyteller', subject: 'dog' }));
  return { policy: over, user: rules.user, judge: rules.judge, hintJudge: rules.hintJudge, evaluator: rules.evaluator };
}

/** Steps and version boundaries of a two-step run: each step trains on the version before it. */
function expectTwoSteps(records: RunRecord[]): void {
  const steps = records.filter((r): r is TrainStepRecord => r.kind === 'train_step');
  expect(steps.map((s) => [s.step, s.version])).toEqual([
    [1, 0],
    [2, 1],
  ]);
  expect(records.filter((r) => r.kind === 'version_boundary').map((r) => r.kind === 'version_boundary' && [r.from, r.to])).toEqual([
    [0, 1],
    [1, 2],
  ]);
}

/** Every vote and sample carries the version of the interaction it is about. */
function expectConsistentVersions(records: RunRecord[]): InteractionRecord[] {
  const interactions = records.filter((r): r is InteractionRecord => r.kind === 'interaction');
  const versionOf = new Map(interactions.map((i) => [`${i.session}#${i.turn}`, i.version]));
  for (const r of records) {
    if (r.kind === 'judge_vote' || r.kind === 'judge_result' || r.kind === 'sample') {
      expect(r.version).toBe(versionOf.get(`${r.session}#${r.turn}`));
    }
  }
  return interactions;
}

function collect() {
  const records: RunRecord[] = [];
  return { records, sink: { append: async (r: RunRecord[]) => void records.push(...r) } };
}

describe('the live runtime in a browser', () => {
  it('serves generations while a training step runs, with consistent version tags (free-running)', async () => {
    await loadFresh();
    const { records, sink } = collect();
    const loop = new RunLoop(config(2), services(freePolicy), sharedProblems(storyOpenings('dog')), sink);
    expect(loop.fixed).toBe(false);
    const result = await loop.run();
    expect(result).toMatchObject({ status: 'finished', step: 2, version: 2 });
    expectTwoSteps(records);
    const interactions = expectConsistentVersions(records);

    // The worker has one thread: a generation whose span overlaps a step's span was served
    // between the step's GPU waits, with the version from before the step.
    const steps = records.filter((r): r is TrainStepRecord => r.kind === 'train_step');
    const overlapping = steps.flatMap((s) => {
      const start = s.ts - s.stats.stepMs!;
      return interactions.filter((i) => i.startedAt < s.ts && i.finishedAt > start && i.version === s.version);
    });
    if (!overlapping.length)
      console.log(
        JSON.stringify({
          steps: steps.map((s) => [s.ts - s.stats.stepMs!, s.ts, s.version]),
          gens: interactions.map((i) => [i.startedAt, i.finishedAt, i.version]),
        }),
      );
    expect(overlapping.length).toBeGreaterThan(0);

    // Versions never go backwards within a session.
    const bySession = new Map<string, number[]>();
    for (const i of interactions) bySession.set(i.session, [...(bySession.get(i.session) ?? []), i.version]);
    for (const v of bySession.values()) expect(v).toEqual([...v].sort((a, b) => a - b));
  });

  it('pins each session to the version its schedule gives it (fixed schedule, through the worker)', async () => {
    await loadFresh();
    const { records, sink } = collect();
    const loop = new RunLoop(config(2), services(), sharedProblems(storyOpenings('dog')), sink);
    expect(loop.fixed).toBe(true);
    const result = await loop.run();
    expect(result).toMatchObject({ status: 'finished', step: 2, version: 2 });
    expectTwoSteps(records);
    const interactions = expectConsistentVersions(records);
    // All of a session is answered by one version. The last step's version answers none: the
    // sessions that run after the last batch is filled were admitted before it was trained.
    const bySession = new Map<string, Set<number>>();
    for (const i of interactions) bySession.set(i.session, (bySession.get(i.session) ?? new Set()).add(i.version));
    for (const v of bySession.values()) expect(v.size).toBe(1);
    expect(interactions.some((i) => i.version === 0)).toBe(true);
    expect(interactions.every((i) => i.version === 0 || i.version === 1)).toBe(true);
  });

  it('scores top-k next-token sets through the worker (top-k hint selection), with the same log-probs as score', async () => {
    await loadFresh();
    const items = [{ messages: [{ role: 'user' as const, content: 'Once upon a time' }], tokenIds: [100, 200, 300] }];
    const [plain] = await policy.score(items, 'initial');
    const [top] = await policy.scoreTopK(items, 'initial', 4);
    expect(top.logprobs).toEqual(plain);
    expect(top.topIds).toHaveLength(3);
    for (const ids of top.topIds) {
      expect(ids).toHaveLength(4);
      expect(new Set(ids).size).toBe(4);
      for (const id of ids) expect(id >= 0 && id < 512).toBe(true);
    }
  });

  it('pauses, resumes and stops without orphan requests', async () => {
    await loadFresh();
    const { records, sink } = collect();
    const loop = new RunLoop(config(50), services(), sharedProblems(storyOpenings('dog')), sink);
    const running = loop.run();
    while (!records.some((r) => r.kind === 'interaction')) await new Promise((r) => setTimeout(r, 20));
    loop.pause();
    // Work in flight completes after a pause; then nothing new may start.
    while (loop.snapshot().generating > 0 || loop.snapshot().generationQueue > 0) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 100));
    const atPause = records.filter((r) => r.kind === 'interaction').length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(records.filter((r) => r.kind === 'interaction').length).toBe(atPause);
    expect(loop.snapshot().status).toBe('paused');
    loop.resume();
    while (records.filter((r) => r.kind === 'interaction').length <= atPause) await new Promise((r) => setTimeout(r, 20));
    loop.stop();
    const result = await running;
    expect(result.status).toBe('stopped');
    const snap = loop.snapshot();
    expect(snap.generationQueue).toBe(0);
    expect(snap.judgeInFlight).toBe(0);
    const settled = records.length;
    await new Promise((r) => setTimeout(r, 500));
    expect(records.length).toBe(settled);
  });

  it('recovers from a lost GPU device and the run goes on', async () => {
    await loadFresh();
    const { sink } = collect();
    let lostOnce = false;
    const loop = new RunLoop(config(2), services(), sharedProblems(storyOpenings('dog')), sink, {
      onRecord: (r) => {
        if (r.kind === 'train_step' && !lostOnce) {
          lostOnce = true;
          void policy.simulateDeviceLoss();
        }
      },
    });
    const result = await loop.run();
    expect(lostOnce).toBe(true);
    expect(result).toMatchObject({ status: 'finished', step: 2 });
    expect(events.some((e) => e.type === 'device-lost')).toBe(true);
    expect(events.some((e) => e.type === 'recovered')).toBe(true);
  });
});
