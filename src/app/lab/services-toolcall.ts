/**
 * The tool-call track's services in the page: the step judge (PRM) from its spec, rules meaning
 * the offline RulesStepJudge. A model judge is built as the personal track builds its judge
 * (buildServices: a frozen policy or engine model in its own policy worker, transformers.js in a
 * generator worker, an endpoint with its key from settings); the track has no user or evaluator
 * to build, so those stay rules there and are not used.
 */
import type { TextGenerator } from '../../generators/generator';
import { RulesStepJudge } from '../../sims/toolcall/index';
import type { RunConfig, ToolCallRunConfig } from '../../runtime/run-config';
import { buildServices, type BuiltServices, type ServiceDeps } from './services';

export interface BuiltToolCallServices {
  judge: TextGenerator;
  /** For the page: what played the judge, and what stands where the personal track has a user and evaluator. */
  labels: BuiltServices['labels'];
  /** What played the judge (library and version, device, model), for the run file. */
  sources: BuiltServices['sources'];
  dispose: () => void;
}

/** The labels of the roles the tool-call track does not have. */
const NO_USER = 'none (the calculator answers the tool calls)';
const HELD_OUT = 'greedy accuracy on the held-out problems';

export async function buildToolCallServices(config: ToolCallRunConfig, deps: ServiceDeps): Promise<BuiltToolCallServices> {
  const spec = config.models.judge;
  if (spec.kind === 'rules') {
    const judge = new RulesStepJudge();
    return { judge, labels: { judge: judge.label, user: NO_USER, evaluator: HELD_OUT }, sources: { judge: { kind: 'rules' } }, dispose: () => {} };
  }
  const built = await buildServices(judgeOnly(config), deps);
  return {
    judge: built.services.judge,
    labels: { judge: built.labels.judge, user: NO_USER, evaluator: HELD_OUT },
    sources: { judge: built.sources.judge },
    dispose: built.dispose,
  };
}

/** A personal config that asks buildServices for this run's judge and nothing else (rules elsewhere). */
function judgeOnly(config: ToolCallRunConfig): RunConfig {
  return {
    format: 'nextstate-run-config',
    formatVersion: 1,
    scenario: { id: 'student' },
    method: 'binary',
    preset: config.preset,
    models: { policy: config.models.policy, user: { kind: 'rules' }, judge: config.models.judge, evaluator: { kind: 'rules' } },
    seed: config.seed,
    problems: { source: 'builtin', count: 1 },
    schedule: { concurrentSessions: 1, steps: config.schedule.steps, evalEvery: 0, evalProblems: 1, evalVotes: 1 },
    sampling: { policy: { ...config.sampling.policy }, user: { temperature: 0.7, maxNewTokens: 1 } },
  };
}
