/**
 * A run's whole configuration as plain JSON: what the lab stores in a run, what a run file
 * carries (without secrets), and what `nextstate run --config` reads.
 */
import { makePreset, parsePreset, type MethodName, type MethodPreset } from '../../rl/presets';
import { createScenario, type ScenarioConfig } from '../../sims/scenarios/index';

/** Where a judge, simulated user or evaluator gets its text. */
export type GeneratorSpec =
  /** Deterministic rules, labelled as such everywhere (no model). */
  | { kind: 'rules' }
  /** The policy's own base model, frozen (adapter off). */
  | { kind: 'policy' }
  /** Another model on the engine, frozen: a folder or hub id. */
  | { kind: 'engine'; model: string }
  /** An OpenAI-compatible endpoint; the key stays in the browser's settings, never here. */
  | { kind: 'endpoint'; baseUrl: string; model: string }
  /** An ONNX model through transformers.js (browser). */
  | { kind: 'transformers'; model: string };

export interface RunConfig {
  format: 'nextstate-run-config';
  formatVersion: 1;
  label?: string;
  scenario: ScenarioConfig;
  method: MethodName;
  preset: MethodPreset;
  models: {
    policy: { model: string; backend?: 'cpu' | 'webgpu' };
    user: GeneratorSpec;
    judge: GeneratorSpec;
    evaluator: GeneratorSpec;
  };
  seed: number;
  problems: { source: 'builtin' | 'gsm8k-hub' | 'file'; path?: string; count: number };
  schedule: {
    concurrentSessions: number;
    /** Training steps before the run finishes. */
    steps: number;
    /** Evaluate before training and after every K steps; 0 = never. */
    evalEvery: number;
    evalProblems: number;
    evalVotes: number;
  };
  sampling: {
    policy: { temperature: number; topP: number; topK: number; maxNewTokens: number };
    user: { temperature: number; maxNewTokens: number };
  };
}

export class RunConfigError extends Error {
  override name = 'RunConfigError';
}

export const EXAMPLES = ['storyteller', 'student', 'teacher'] as const;
export type ExampleName = (typeof EXAMPLES)[number];

/** Complete example configs: hub models and rules roles, so they run anywhere with a network. */
export function exampleConfig(name: ExampleName, policyModel?: string): RunConfig {
  const story = name === 'storyteller';
  return {
    format: 'nextstate-run-config',
    formatVersion: 1,
    label: `${name} (combined, rules)`,
    scenario: story ? { id: 'storyteller', subject: 'dog' } : { id: name },
    method: 'combined',
    preset: makePreset('combined', {
      optimizer: { lr: story ? 5e-4 : 1e-4 },
      batch: { size: story ? 8 : 16 },
      finetune: { lora: { rank: story ? 8 : 16 } },
      judge: { maxNewTokens: 512 },
    }),
    models: {
      policy: { model: policyModel ?? (story ? 'raincandy-u/TinyStories-656K' : 'HuggingFaceTB/SmolLM2-135M-Instruct'), backend: 'cpu' },
      user: { kind: 'rules' },
      judge: { kind: 'rules' },
      evaluator: { kind: 'rules' },
    },
    seed: 1,
    problems: story ? { source: 'builtin', count: 12 } : { source: 'gsm8k-hub', count: 36 },
    schedule: { concurrentSessions: 4, steps: 8, evalEvery: 4, evalProblems: story ? 12 : 36, evalVotes: 3 },
    sampling: {
      policy: { temperature: 1, topP: 1, topK: 0, maxNewTokens: story ? 48 : 384 },
      user: { temperature: 0.7, maxNewTokens: 256 },
    },
  };
}

const GENERATOR_KINDS = ['rules', 'policy', 'engine', 'endpoint', 'transformers'];

/** Checks a parsed config, naming the first bad field; the preset and scenario use their own checks. */
export function parseRunConfig(json: unknown): RunConfig {
  const fail = (field: string, why: string): never => {
    throw new RunConfigError(`run config: ${field} ${why}`);
  };
  if (typeof json !== 'object' || json === null) fail('(root)', 'must be a JSON object');
  const c = json as RunConfig;
  if (c.format !== 'nextstate-run-config') fail('format', 'must be "nextstate-run-config" (print one with `nextstate run --example storyteller`)');
  if (c.formatVersion !== 1) fail('formatVersion', `is ${JSON.stringify(c.formatVersion)}; this version of the lab reads 1`);
  try {
    createScenario(c.scenario);
  } catch (e) {
    fail('scenario', `is invalid: ${(e as Error).message}`);
  }
  const preset = parsePreset(c.preset);
  if (preset.method !== c.method) fail('method', `(${c.method}) differs from preset.method (${preset.method})`);
  if (typeof c.models?.policy?.model !== 'string' || !c.models.policy.model) fail('models.policy.model', 'must name a model folder or hub id');
  for (const role of ['user', 'judge', 'evaluator'] as const) {
    const spec = c.models[role] as GeneratorSpec | undefined;
    if (!spec || !GENERATOR_KINDS.includes(spec.kind)) fail(`models.${role}.kind`, `must be one of ${GENERATOR_KINDS.join(', ')}`);
    if ((spec!.kind === 'engine' || spec!.kind === 'transformers') && typeof spec!.model !== 'string') fail(`models.${role}.model`, 'must be a string');
    if (spec!.kind === 'endpoint' && (typeof spec!.baseUrl !== 'string' || typeof spec!.model !== 'string')) fail(`models.${role}`, 'needs baseUrl and model');
  }
  if (!Number.isInteger(c.seed)) fail('seed', 'must be an integer');
  if (!['builtin', 'gsm8k-hub', 'file'].includes(c.problems?.source)) fail('problems.source', 'must be builtin, gsm8k-hub or file');
  if (!Number.isInteger(c.problems.count) || c.problems.count < 1) fail('problems.count', 'must be a positive integer');
  const s = c.schedule;
  for (const k of ['concurrentSessions', 'steps', 'evalProblems', 'evalVotes'] as const) {
    if (!Number.isInteger(s?.[k]) || s[k] < 1) fail(`schedule.${k}`, 'must be a positive integer');
  }
  if (!Number.isInteger(s.evalEvery) || s.evalEvery < 0) fail('schedule.evalEvery', 'must be 0 or a positive integer');
  const p = c.sampling?.policy;
  if (!p || !(p.temperature >= 0) || !(p.topP > 0 && p.topP <= 1) || !(p.maxNewTokens >= 1)) fail('sampling.policy', 'needs temperature >= 0, 0 < topP <= 1, maxNewTokens >= 1');
  return { ...c, preset };
}
