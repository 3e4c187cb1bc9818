import { describe, expect, it } from 'vitest';
import type { ResumePoint, RunInfo, StorableConfig } from '../../storage/index';
import { exampleConfig } from '../../runtime/run-config';
import { claimRunSlot, runInputs } from './launch';
import { configLocation } from './model-location';
import { defaultSetup, toRunConfig, withScenario } from './setup';

function fakeStore(point: Partial<ResumePoint> = {}) {
  const calls: string[] = [];
  let created: StorableConfig | null = null;
  return {
    calls,
    created: () => created,
    createRun: async (config: StorableConfig, label: string) => {
      created = config;
      calls.push(`create ${label}`);
      return 'new-run';
    },
    claimRun: async (id: string) => {
      calls.push(`claim ${id}`);
      return () => calls.push(`release ${id}`);
    },
    resumePoint: async (id: string) => {
      calls.push(`point ${id}`);
      return { lastStep: 2, nextStep: 3, version: 2, adapter: null, throughSeq: 0, buffered: [], ...point } as ResumePoint;
    },
    setStatus: async (id: string, status: string) => void calls.push(`status ${id} ${status}`),
  };
}

describe('launching a run', () => {
  it('loads the scenario and problems of a config, and one empty problem where there are none', async () => {
    const story = await runInputs(exampleConfig('storyteller'));
    expect(story.scenario.id).toBe('storyteller');
    expect(story.problems.train.length).toBe(12);
    expect(story.problems.evaluation.length).toBe(12);
    expect(story.problems.train.some((p) => story.problems.evaluation.some((e) => e.question === p.question))).toBe(false);
    const talk = toRunConfig(withScenario(defaultSetup({ webgpu: false }), 'talk'));
    const none = await runInputs({ ...talk, problems: { ...talk.problems, count: 0 } });
    expect(none.problems.train).toEqual([{ id: 'talk', question: '', answer: '' }]);
  });

  it('refuses a problem file in the lab, saying what to use', async () => {
    const c = exampleConfig('student');
    await expect(runInputs({ ...c, problems: { source: 'file', path: 'p.jsonl', count: 3 } })).rejects.toThrow(/use builtin or gsm8k-hub/);
  });

  it('creates a new run naming the loaded policy files, then claims it', async () => {
    const store = fakeStore();
    const config = toRunConfig(defaultSetup({ webgpu: false }), 'stories260K');
    const slot = await claimRunSlot(store, config, { files: { 'model.safetensors': 'ab'.repeat(32) }, commit: null }, null);
    expect(slot.runId).toBe('new-run');
    expect(slot.resume).toBeUndefined();
    expect(store.created()?.modelRefs?.policy).toEqual({ id: 'stories260K', files: { 'model.safetensors': 'ab'.repeat(32) }, weightFormat: 'f16' });
    expect((store.created() as typeof config).models.policy.revision).toBeUndefined();
    slot.release();
    expect(store.calls).toEqual([`create ${config.label}`, 'claim new-run', 'release new-run']);
  });

  it('records the hub commit the policy loaded, in models.policy and modelRefs.policy as the command line does', async () => {
    const store = fakeStore();
    const setup = defaultSetup({ webgpu: false });
    const config = toRunConfig({ ...setup, policy: { ...setup.policy, source: 'hub', hubId: 'karpathy/stories260K' } });
    const commit = '0123456789abcdef0123456789abcdef01234567';
    await claimRunSlot(store, config, { files: { 'model.safetensors': 'ab'.repeat(32) }, commit }, null);
    const created = store.created() as typeof config;
    expect(created.models.policy).toEqual({ ...config.models.policy, revision: commit });
    expect(created.modelRefs.policy).toEqual({
      id: 'karpathy/stories260K',
      revision: commit,
      files: { 'model.safetensors': 'ab'.repeat(32) },
      weightFormat: 'f16',
    });
    // What a resume of this run loads: the commit, not main.
    expect(configLocation(created.models.policy)).toEqual({ kind: 'hub', id: 'karpathy/stories260K', revision: commit });
  });

  it('resumes at the last saved step: adapter restored before the run is claimed and marked running', async () => {
    const adapter = { version: 2, ts: 1, files: {} };
    const store = fakeStore({ adapter: adapter as ResumePoint['adapter'] });
    const restored: number[] = [];
    const info = { id: 'old', label: 'old run' } as RunInfo;
    const slot = await claimRunSlot(
      store,
      exampleConfig('storyteller'),
      { files: {}, commit: null },
      {
        info,
        records: [],
        restore: async (_a, version) => void (restored.push(version), store.calls.push('restore')),
      },
    );
    expect(slot.runId).toBe('old');
    expect(slot.resume).toMatchObject({ step: 2, version: 2, sessionsStarted: 0, samples: [] });
    expect(restored).toEqual([2]);
    expect(store.calls).toEqual(['point old', 'restore', 'claim old', 'status old running']);
  });
});
