/**
 * A run's whole configuration as plain JSON: what the lab stores in a run, what a run file
 * carries (without secrets), and what `nextstate run --config` reads.
 */
import { makePreset, parsePreset, toolCallPreset, type MethodName, type MethodPreset, type PresetOverrides } from '../../rl/presets';
import { DEMO_STORY_MODEL } from '../../gpu/bundled';
import { PROBLEM_ORDERS, type ProblemOrder } from '../../sims/problems/index';
import { createScenario, DEFAULT_FAVOURITE, DEFAULT_PET_NAME, DEFAULT_STORY_SUBJECT, type ScenarioConfig, type ScenarioId } from '../../sims/scenarios/index';
import { CALCULATOR_TOOL, DEFAULT_GROUP_SIZE, DEFAULT_MAX_STEPS, type RewardMode } from '../../sims/toolcall/index';

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

/**
 * The personal-agent track: simulated (or real) users in conversation, the binary judge and
 * the hint judge. A config without `track` is one of these (every config written before the
 * tool-call track existed).
 */
export interface RunConfig {
  format: 'nextstate-run-config';
  formatVersion: 1;
  label?: string;
  /** Absent or 'personal'. */
  track?: 'personal';
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
  /** `order` (GSM8K only): the reference evaluation's shuffled order (default) or the dataset's. */
  problems: { source: 'builtin' | 'gsm8k-hub' | 'file'; path?: string; count: number; order?: ProblemOrder };
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

/** The tool-call track's own settings. */
export interface ToolCallOptions {
  /** integrated: r_t = o + mean(PRM votes of step t); outcome: r_t = o. */
  rewardMode: RewardMode;
  /** n, rollouts per problem; advantages are standardized within a problem's group. */
  groupSize: number;
  /** An episode without a final answer after this many policy steps has outcome -1. */
  maxSteps: number;
  /**
   * Evaluation problems: the first this many problems of the source after the `problems.count`
   * training problems (so never trained on); accuracy is measured on them, greedy.
   */
  evalHeldOut: number;
}

/**
 * The general-agent track (DESIGN.md section 1): GSM8K problems solved with a calculator tool,
 * the PRM judging every step with m = preset.judge.binaryVotes votes, step rewards, group
 * sampling and advantages standardized per step index; accuracy on held-out problems.
 */
export interface ToolCallRunConfig {
  format: 'nextstate-run-config';
  formatVersion: 1;
  label?: string;
  track: 'toolcall';
  /** Always 'binary': the PRM's votes are evaluative; its m is preset.judge.binaryVotes. */
  method: 'binary';
  preset: MethodPreset;
  models: {
    policy: { model: string; backend?: 'cpu' | 'webgpu' };
    /** The step judge (PRM); rules: the offline RulesStepJudge. */
    judge: GeneratorSpec;
  };
  seed: number;
  /** Training problems: the first `count` of the source; the held-out ones follow them. */
  problems: { source: 'builtin' | 'gsm8k-hub' | 'file'; path?: string; count: number };
  toolcall: ToolCallOptions;
  schedule: {
    /** Problems whose group of rollouts is in flight at once. */
    concurrentGroups: number;
    steps: number;
    /** Evaluate before training and after every K steps; 0 = never. */
    evalEvery: number;
  };
  sampling: {
    /** Per policy step (one generation); evaluation is greedy. */
    policy: { temperature: number; topP: number; topK: number; maxNewTokens: number };
  };
}

/** A run config of either track. */
export type AnyRunConfig = RunConfig | ToolCallRunConfig;

export const TRACKS = ['personal', 'toolcall'] as const;
export type Track = (typeof TRACKS)[number];

export function trackOf(config: AnyRunConfig): Track {
  return config.track === 'toolcall' ? 'toolcall' : 'personal';
}

export function isToolCallConfig(config: AnyRunConfig): config is ToolCallRunConfig {
  return config.track === 'toolcall';
}

/** The tools every policy prompt of the tool-call track lists. */
export const TOOL_TRACK_TOOLS: readonly object[] = [CALCULATOR_TOOL];

/** The tools a run's policy prompts were rendered with: the track's for a tool-call run, else none. */
export function promptTools(config: AnyRunConfig): readonly object[] | undefined {
  return isToolCallConfig(config) ? TOOL_TRACK_TOOLS : undefined;
}

export class RunConfigError extends Error {
  override name = 'RunConfigError';
}

export const EXAMPLES = ['storyteller', 'student', 'teacher', 'toolcall'] as const;
export type ExampleName = (typeof EXAMPLES)[number];
export type PersonalExampleName = Exclude<ExampleName, 'toolcall'>;

/**
 * The storyteller's policy: the demo model that ships with the app (no download, takes a hint);
 * the hub's TinyStories models are one choice away.
 */
export const STORY_MODEL = DEMO_STORY_MODEL;
export const STORY_HUB_MODEL = 'raincandy-u/TinyStories-656K';
/** A small hub chat model that fits a laptop browser. */
export const CHAT_MODEL = 'HuggingFaceTB/SmolLM2-135M-Instruct';

/**
 * Preset overrides that suit a laptop browser: the paper's method shapes (votes, weights, clip,
 * KL 0, Adam betas, decay) with smaller batches and LoRA ranks than a cluster run.
 */
export function laptopOverrides(scenario: ScenarioId): PresetOverrides {
  const story = scenario === 'storyteller';
  const talk = scenario === 'talk';
  return {
    optimizer: { lr: story || talk ? 5e-4 : 1e-4 },
    batch: { size: talk ? 4 : story ? 8 : 16 },
    finetune: { lora: { rank: story || talk ? 8 : 16 } },
    judge: { maxNewTokens: 512 },
  };
}

/**
 * Complete example configs with rules roles: the storyteller on the bundled demo model (offline),
 * the others on hub models. `method` picks the personal examples' method, its preset included.
 */
export function exampleConfig(name: 'toolcall', policyModel?: string): ToolCallRunConfig;
export function exampleConfig(name: PersonalExampleName, policyModel?: string, method?: MethodName): RunConfig;
export function exampleConfig(name: ExampleName, policyModel?: string, method?: MethodName): AnyRunConfig;
export function exampleConfig(name: ExampleName, policyModel?: string, method: MethodName = 'combined'): AnyRunConfig {
  if (name === 'toolcall') return toolCallExample(policyModel);
  const story = name === 'storyteller';
  return {
    format: 'nextstate-run-config',
    formatVersion: 1,
    label: `${name} (${method}, rules)`,
    scenario: story ? { id: 'storyteller', subject: DEFAULT_STORY_SUBJECT, name: DEFAULT_PET_NAME, favourite: DEFAULT_FAVOURITE } : { id: name },
    method,
    preset: makePreset(method, laptopOverrides(name)),
    models: {
      policy: { model: policyModel ?? (story ? STORY_MODEL : CHAT_MODEL), backend: 'cpu' },
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

/**
 * The tool-call example: Qwen3-0.6B (it renders the calculator in its chat template and answers
 * with `<tool_call>` JSON), the rules step judge, GSM8K test problems from the hub (training on
 * the first 200, accuracy on the next 50), 8 rollouts per problem, at most 8 steps each.
 */
function toolCallExample(policyModel?: string): ToolCallRunConfig {
  return {
    format: 'nextstate-run-config',
    formatVersion: 1,
    label: 'toolcall (GSM8K + calculator, integrated PRM reward, rules judge)',
    track: 'toolcall',
    method: 'binary',
    preset: toolCallPreset({
      batch: { size: 32 },
      finetune: { lora: { rank: 16 } },
      judge: { maxNewTokens: 512 },
    }),
    models: {
      policy: { model: policyModel ?? 'Qwen/Qwen3-0.6B', backend: 'cpu' },
      judge: { kind: 'rules' },
    },
    seed: 1,
    problems: { source: 'gsm8k-hub', count: 200 },
    toolcall: { rewardMode: 'integrated', groupSize: DEFAULT_GROUP_SIZE, maxSteps: DEFAULT_MAX_STEPS, evalHeldOut: 50 },
    schedule: { concurrentGroups: 2, steps: 16, evalEvery: 4 },
    sampling: { policy: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 256 } },
  };
}

const GENERATOR_KINDS = ['rules', 'policy', 'engine', 'endpoint', 'transformers'];
const PROBLEM_SOURCES = ['builtin', 'gsm8k-hub', 'file'];
/** Bounds that keep a hand-edited config from asking for runaway work. */
const MAX_GROUP_SIZE = 256;
const MAX_TOOL_STEPS = 64;

type Fail = (field: string, why: string) => never;

const failer: Fail = (field, why) => {
  throw new RunConfigError(`run config: ${field} ${why}`);
};

function checkGenerator(role: string, spec: GeneratorSpec | undefined, fail: Fail): void {
  if (!spec || !GENERATOR_KINDS.includes(spec.kind)) fail(`models.${role}.kind`, `must be one of ${GENERATOR_KINDS.join(', ')}`);
  if ((spec!.kind === 'engine' || spec!.kind === 'transformers') && typeof spec!.model !== 'string') fail(`models.${role}.model`, 'must be a string');
  if (spec!.kind === 'endpoint' && (typeof spec!.baseUrl !== 'string' || typeof spec!.model !== 'string')) fail(`models.${role}`, 'needs baseUrl and model');
}

function checkFormat(c: AnyRunConfig, fail: Fail): void {
  if (c.format !== 'nextstate-run-config') fail('format', 'must be "nextstate-run-config" (print one with `nextstate run --example storyteller`)');
  if (c.formatVersion !== 1) fail('formatVersion', `is ${JSON.stringify(c.formatVersion)}; this version of the lab reads 1`);
}

/** The fields both tracks have besides the format, checked the same way; returns the checked preset. */
function checkShared(c: AnyRunConfig, fail: Fail): MethodPreset {
  const preset = parsePreset(c.preset);
  if (preset.method !== c.method) fail('method', `(${c.method}) differs from preset.method (${preset.method})`);
  if (typeof c.models?.policy?.model !== 'string' || !c.models.policy.model) fail('models.policy.model', 'must name a model folder or hub id');
  if (!Number.isInteger(c.seed)) fail('seed', 'must be an integer');
  if (!PROBLEM_SOURCES.includes(c.problems?.source)) fail('problems.source', 'must be builtin, gsm8k-hub or file');
  if (!Number.isInteger(c.problems.count) || c.problems.count < 1) fail('problems.count', 'must be a positive integer');
  const p = c.sampling?.policy;
  if (!p || !(p.temperature >= 0) || !(p.topP > 0 && p.topP <= 1) || !(p.maxNewTokens >= 1)) fail('sampling.policy', 'needs temperature >= 0, 0 < topP <= 1, maxNewTokens >= 1');
  return preset;
}

/**
 * Checks a parsed personal-track config, naming the first bad field; the preset and scenario
 * use their own checks. A tool-call config is refused here: read either track with
 * parseAnyRunConfig.
 */
export function parseRunConfig(json: unknown): RunConfig {
  const fail = failer;
  if (typeof json !== 'object' || json === null) fail('(root)', 'must be a JSON object');
  const c = json as RunConfig;
  const track = (c as { track?: unknown }).track;
  if (track === 'toolcall') fail('track', 'is "toolcall": this reader takes personal-agent configs; use parseAnyRunConfig');
  if (track !== undefined && track !== 'personal') fail('track', `must be one of ${TRACKS.join(', ')} (absent means personal)`);
  checkFormat(c, fail);
  try {
    createScenario(c.scenario);
  } catch (e) {
    fail('scenario', `is invalid: ${(e as Error).message}`);
  }
  const preset = checkShared(c, fail);
  for (const role of ['user', 'judge', 'evaluator'] as const) checkGenerator(role, c.models[role] as GeneratorSpec | undefined, fail);
  const order = c.problems.order;
  if (order !== undefined && !PROBLEM_ORDERS.includes(order)) {
    fail('problems.order', `must be "reference" (the reference evaluation's GSM8K order) or "dataset", not ${JSON.stringify(order)}`);
  }
  const s = c.schedule;
  for (const k of ['concurrentSessions', 'steps', 'evalProblems', 'evalVotes'] as const) {
    if (!Number.isInteger(s?.[k]) || s[k] < 1) fail(`schedule.${k}`, 'must be a positive integer');
  }
  if (!Number.isInteger(s.evalEvery) || s.evalEvery < 0) fail('schedule.evalEvery', 'must be 0 or a positive integer');
  return { ...c, preset };
}

/** Checks a parsed tool-call config, naming the first bad field. */
export function parseToolCallRunConfig(json: unknown): ToolCallRunConfig {
  const fail = failer;
  if (typeof json !== 'object' || json === null) fail('(root)', 'must be a JSON object');
  const c = json as ToolCallRunConfig;
  if (c.track !== 'toolcall') fail('track', 'must be "toolcall" (print one with `nextstate run --example toolcall`)');
  checkFormat(c, fail);
  if (c.method !== 'binary') fail('method', `is ${JSON.stringify(c.method)}; the tool-call track's PRM votes are evaluative, so use "binary" (m = preset.judge.binaryVotes)`);
  const preset = checkShared(c, fail);
  checkGenerator('judge', c.models.judge, fail);
  const t = c.toolcall;
  if (typeof t !== 'object' || t === null) fail('toolcall', 'must be an object with rewardMode, groupSize, maxSteps and evalHeldOut');
  if (t.rewardMode !== 'integrated' && t.rewardMode !== 'outcome') fail('toolcall.rewardMode', 'must be "integrated" (r = o + mean of PRM votes) or "outcome" (r = o)');
  if (!Number.isInteger(t.groupSize) || t.groupSize < 1 || t.groupSize > MAX_GROUP_SIZE) fail('toolcall.groupSize', `must be a whole number from 1 to ${MAX_GROUP_SIZE}`);
  if (!Number.isInteger(t.maxSteps) || t.maxSteps < 1 || t.maxSteps > MAX_TOOL_STEPS) fail('toolcall.maxSteps', `must be a whole number from 1 to ${MAX_TOOL_STEPS}`);
  if (!Number.isInteger(t.evalHeldOut) || t.evalHeldOut < 0) fail('toolcall.evalHeldOut', 'must be 0 or a positive integer');
  const s = c.schedule;
  for (const k of ['concurrentGroups', 'steps'] as const) {
    if (!Number.isInteger(s?.[k]) || s[k] < 1) fail(`schedule.${k}`, 'must be a positive integer');
  }
  if (!Number.isInteger(s.evalEvery) || s.evalEvery < 0) fail('schedule.evalEvery', 'must be 0 or a positive integer');
  if (s.evalEvery > 0 && t.evalHeldOut === 0) fail('toolcall.evalHeldOut', 'is 0 but schedule.evalEvery asks for evaluations; hold out some problems or set evalEvery to 0');
  return { ...c, preset };
}

/** Checks a config of either track (the `track` field picks the reader). */
export function parseAnyRunConfig(json: unknown): AnyRunConfig {
  const track = typeof json === 'object' && json !== null ? (json as { track?: unknown }).track : undefined;
  return track === 'toolcall' ? parseToolCallRunConfig(json) : parseRunConfig(json);
}
