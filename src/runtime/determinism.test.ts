/**
 * A run with simulated users is a function of its config and seed (version-schedule.ts): the same
 * records and the same adapter whatever the disk, the trainer and the batching did meanwhile.
 */
import { describe, expect, it } from 'vitest';
import { FastCpuBackend } from '../gpu/cpu-fast/backend';
import { nodeThreads } from '../gpu/cpu-fast/threads-node';
import type { RunRecord } from '../rl/records';
import { createScenario } from '../sims/scenarios/index';
import { configForArm, exampleConfig, parseRunConfig, type RunConfig } from './run-config';
import { loadProblems } from './problems';
import type { PolicyService } from './policy-service';
import { RunLoop } from './runloop';
import { createNodeServices, readTextFile } from './services-node';
import { validatingSink } from '../../test/support/runtime/headless';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How a run's timing is disturbed: each write, each step and some generation calls wait this long first. */
interface Perturbation {
  writeMs: (i: number) => number;
  trainMs: number;
  generateMs: (i: number) => number;
}

async function run(config: RunConfig, p: Perturbation) {
  const services = await createNodeServices(parseRunConfig(config), await FastCpuBackend.create(nodeThreads()));
  const problems = await loadProblems(config, createScenario(config.scenario), readTextFile);
  const policy = services.policy;
  let writes = 0;
  let calls = 0;
  const slowPolicy: PolicyService = {
    label: policy.label,
    servingVersion: () => policy.servingVersion(),
    keepVersionsFrom: (v) => policy.keepVersionsFrom!(v),
    generate: async (requests, signal, hooks) => {
      await sleep(p.generateMs(calls++));
      return policy.generate(requests, signal, hooks);
    },
    score: (items, teacher) => policy.score(items, teacher),
    scoreTopK: (items, source, k) => policy.scoreTopK!(items, source, k),
    train: async (items, onMicroBatch) => {
      await sleep(p.trainMs);
      return policy.train(items, onMicroBatch);
    },
    exportAdapter: () => policy.exportAdapter(),
    restore: (files, version) => policy.restore(files, version),
  };
  const records: RunRecord[] = [];
  const sink = validatingSink(records);
  const slowSink = {
    append: async (rs: RunRecord[]) => {
      await sleep(p.writeMs(writes++));
      await sink.append(rs);
    },
  };
  const loop = new RunLoop(config, { ...services, policy: slowPolicy }, problems, slowSink);
  const result = await loop.run();
  const adapter = await policy.exportAdapter();
  return { result, records, adapter: adapter['adapter_model.safetensors'] };
}

/** Wall-clock fields are the only ones allowed to differ. */
const WALL_CLOCK = new Set(['ts', 'startedAt', 'finishedAt', 'stepMs']);

/** The records as a sorted list of their JSON without wall-clock fields: the order of concurrent sessions' records may differ. */
function canonical(records: RunRecord[]): string[] {
  return records.map((r) => JSON.stringify(r, (key, value: unknown) => (WALL_CLOCK.has(key) ? undefined : value))).sort();
}

describe('a run with simulated users is a function of its config and seed', () => {
  it('two runs at once, one with slow writes, a slow trainer and staggered generation, write the same records and the same adapter', async () => {
    const example = configForArm(exampleConfig('storyteller'), 'combined');
    const config: RunConfig = { ...example, seed: 5, schedule: { ...example.schedule, steps: 3, evalEvery: 3, evalProblems: 4 } };
    const [calm, busy] = await Promise.all([
      run(config, { writeMs: () => 0, trainMs: 0, generateMs: () => 0 }),
      run(config, { writeMs: (i) => (i * 37) % 23, trainMs: 400, generateMs: (i) => (i % 3 === 0 ? 30 : 0) }),
    ]);
    expect(calm.result).toMatchObject({ status: 'finished', step: 3, version: 3 });
    expect(busy.result).toEqual(calm.result);
    // Sessions answered by more than one version, and steps that trained on them: the schedule was exercised.
    const versions = new Set(calm.records.flatMap((r) => (r.kind === 'interaction' ? [r.version] : [])));
    expect(versions.size).toBeGreaterThan(1);
    expect(canonical(busy.records)).toEqual(canonical(calm.records));
    expect(Buffer.from(busy.adapter).equals(Buffer.from(calm.adapter))).toBe(true);
  }, 600_000);
});
