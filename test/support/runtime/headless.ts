/**
 * Headless runs for the run-loop tests: every record a loop appends is kept as an imported run
 * file would give it back (through JSON, then the validator), so a test also proves the loop
 * writes only what an import accepts.
 */
import type { Backend } from '../../../src/gpu/backend';
import { CpuBackend } from '../../../src/gpu/cpu/backend';
import type { RunRecord } from '../../../src/rl/records';
import { validateRecord } from '../../../src/rl/validate';
import { createScenario } from '../../../src/sims/scenarios/index';
import type { RecordSink, RunLoopOptions } from '../../../src/runtime/loop-types';
import { loadProblems } from '../../../src/runtime/problems';
import type { TextGenerator } from '../../../src/generators/generator';
import { exampleConfig, parseRunConfig, type RunConfig } from '../../../src/runtime/run-config';
import { RunLoop, type RunServices } from '../../../src/runtime/runloop';
import { createNodeServices, readTextFile } from '../../../src/runtime/services-node';

/** A sink that pushes each appended record onto `records`, round-tripped through JSON and validated. */
export function validatingSink(records: RunRecord[]): RecordSink {
  return {
    append: async (rs) => {
      for (const r of rs) records.push(validateRecord(JSON.parse(JSON.stringify(r)), `record ${records.length}`));
    },
  };
}

/**
 * Runs `config` to the end on the CPU engine (the reference unless `backend` is given) with the
 * Node services, `roles` replacing any of them; the records land in `records` as they are
 * written, for tests that watch the run.
 */
export async function runHeadless(
  config: RunConfig,
  roles: Partial<RunServices> = {},
  records: RunRecord[] = [],
  options: RunLoopOptions = {},
  backend: Backend = new CpuBackend(),
) {
  const services = await createNodeServices(parseRunConfig(config), backend);
  const problems = await loadProblems(config, createScenario(config.scenario), readTextFile);
  const loop = new RunLoop(config, { ...services, ...roles }, problems, validatingSink(records), options);
  const result = await loop.run();
  return { result, records };
}

/** The records of one kind, typed as that kind. */
export const of = <K extends RunRecord['kind']>(records: RunRecord[], kind: K) => records.filter((r) => r.kind === kind) as Extract<RunRecord, { kind: K }>[];

/**
 * The run-loop tests' short plain-sentences student on the tiny fixture at `dir`: a custom
 * persona whose two-turn conversations end while the run goes on, `concurrentSessions` at once,
 * for `steps` steps, no evaluation between.
 */
export function plainSentencesConfig(dir: string, o: { concurrentSessions: number; steps: number; batchSize: number; maxNewTokens: number }): RunConfig {
  const example = exampleConfig('student', dir);
  const config: RunConfig = {
    ...example,
    scenario: { id: 'custom', persona: 'A student who wants plain sentences.', preference: 'Plain sentences.', maxTurns: 2 },
    problems: { source: 'builtin', count: 12 },
    schedule: { concurrentSessions: o.concurrentSessions, steps: o.steps, evalEvery: 0, evalProblems: 1, evalVotes: 1 },
  };
  config.preset.batch.size = o.batchSize;
  config.sampling.policy.maxNewTokens = o.maxNewTokens;
  return config;
}

/** A simulated user that always asks for plain sentences. */
export const plainSentencesUser: TextGenerator = { kind: 'rules', label: 'scripted user', generate: async () => 'Please redo it in plain sentences.' };
