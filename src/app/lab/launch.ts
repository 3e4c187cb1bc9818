/**
 * The steps of starting a run that do not touch the page's state: the scenario and problems a
 * config asks for, and the run's row in storage (a new one, or the resumed one claimed again).
 */
import { createScenario, type Scenario } from '../../sims/scenarios/index';
import type { RunRecord } from '../../rl/records';
import type { RunInfo, RunStore, StoredAdapter } from '../../storage/index';
import { loadProblems, type ProblemSets } from '../../runtime/problems';
import type { AnyRunConfig, RunConfig, ToolCallRunConfig } from '../../runtime/run-config';
import { loadToolCallProblems, type ToolCallProblems } from '../../runtime/toolcall/index';
import type { RunLoopOptions } from '../../runtime/runloop';
import { withPolicyCommit } from '../../runtime/policy-commit';
import type { PolicyInfo } from '../../workers/browser/policy-host';
import { withPolicyFiles } from './model-files';
import { loopResume, resumePlan } from './resume';

/** The lab reads problems from the built-in set or the hub; a file source is the CLI's. */
const noProblemFiles = () => Promise.reject(new Error('problem files are not supported in the lab yet; use builtin or gsm8k-hub'));

/** The scenario and problems of a config; talking yourself has no problems, so one empty one stands in. */
export async function runInputs(config: RunConfig, fetchFn?: typeof fetch): Promise<{ scenario: Scenario; problems: ProblemSets }> {
  const scenario = createScenario(config.scenario);
  const problems = await loadProblems(config, scenario, noProblemFiles, fetchFn);
  if (problems.train.length === 0) problems.train.push({ id: 'talk', question: '', answer: '' });
  return { scenario, problems };
}

/** A tool-call run's training problems and the held-out ones after them. */
export function toolCallInputs(config: ToolCallRunConfig, fetchFn?: typeof fetch): Promise<ToolCallProblems> {
  return loadToolCallProblems(config, noProblemFiles, fetchFn);
}

export interface RunSlot {
  runId: string;
  /** Releases the run's lock when the loop ends. */
  release: () => void;
  resume: RunLoopOptions['resume'];
}

/**
 * A new run's row (its config naming the policy's loaded files and the hub commit they were read
 * at), or the resumed run at its last saved step: `restore` loads that step's adapter into the
 * policy before the run is claimed.
 */
export async function claimRunSlot(
  store: Pick<RunStore, 'createRun' | 'claimRun' | 'resumePoint' | 'setStatus'>,
  config: AnyRunConfig,
  loaded: Pick<PolicyInfo, 'files' | 'commit'>,
  resuming: { info: RunInfo; records: readonly RunRecord[]; restore: (adapter: StoredAdapter, version: number) => Promise<void> } | null,
): Promise<RunSlot> {
  if (!resuming) {
    const runId = await store.createRun(withPolicyCommit(withPolicyFiles(config, loaded.files), loaded.commit), config.label ?? 'run');
    return { runId, release: await store.claimRun(runId), resume: undefined };
  }
  const runId = resuming.info.id;
  const point = await store.resumePoint(runId);
  if (point.adapter) await resuming.restore(point.adapter, point.version);
  const plan = resumePlan(point, resuming.records);
  const release = await store.claimRun(runId);
  await store.setStatus(runId, 'running');
  return { runId, release, resume: loopResume(plan) };
}
