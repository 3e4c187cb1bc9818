/**
 * A run's whole configuration as plain JSON: what the lab stores in a run, what a run file
 * carries (without secrets), and what `nextstate run --config` reads.
 */
import {
  DEFAULT_KL_SET,
  makePreset,
  parsePreset,
  presetSwitchedTo,
  toolCallPreset,
  type MethodName,
  type MethodPreset,
  type PresetOverrides,
} from '../rl/presets';
import { armSetup, type TrainedArm } from './arms';
import { DEMO_STORY_MODEL } from '../models/bundled';
import { DEFAULT_FAVOURITE, DEFAULT_PET_NAME, DEFAULT_STORY_SUBJECT, STORY_MAX_NEW_TOKENS, type ScenarioId } from '../sims/scenarios/index';
import { CALCULATOR_TOOL, DEFAULT_GROUP_SIZE, DEFAULT_MAX_STEPS } from '../sims/toolcall/index';
import type { AnyRunConfig, PersonalPolicyConfig, RemotePolicyConfig, RunConfig, ToolCallRunConfig, Track } from './run-config-check';

export { parseAnyRunConfig, parseRunConfig, parseToolCallRunConfig, RunConfigError, TRACKS } from './run-config-check';
// The config types are the checkers' (run-config-check.ts); this is where the rest of the code reads them.
export type {
  AnyRunConfig,
  ConfigExtras,
  GeneratorRole,
  GeneratorSpec,
  PersonalPolicyConfig,
  PolicyModelConfig,
  RemotePolicyConfig,
  RunConfig,
  ToolCallOptions,
  ToolCallRunConfig,
  Track,
} from './run-config-check';

export function isRemotePolicy(policy: PersonalPolicyConfig): policy is RemotePolicyConfig {
  return (policy as { kind?: unknown }).kind === 'server';
}

/** The config as a run file or an export may hold it: a remote policy's key dropped. */
export function withoutSecrets<C extends AnyRunConfig>(config: C): C {
  const policy = config.models.policy as PersonalPolicyConfig;
  if (!isRemotePolicy(policy) || policy.apiKey === undefined) return config;
  const { apiKey: _key, ...kept } = policy;
  return { ...config, models: { ...config.models, policy: kept } };
}

/**
 * The published JSON Schema of a run config (docs/schema/, made by scripts/json-schema.ts), as
 * `nextstate run --example` refers to it: relative, since the lab has no address of its own to
 * serve it from, so it resolves for a config saved at the repository's root.
 */
export const RUN_CONFIG_SCHEMA_REF = './docs/schema/run-config.schema.json';

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
 * The storyteller's learning rate per method on the demo model: each method's best of a sweep on
 * the training openings at the same budget (docs/reproduction/lr-sweep.md, made by
 * `nextstate reproduce --lr`).
 */
export const STORY_LR: Record<MethodName, number> = { binary: 2.5e-4, opd: 8e-3, combined: 4e-3 };

/**
 * The storyteller's OPD term: forward KL from the hinted teacher's 16 likeliest tokens and one
 * bin for the rest, whose pull on a token is the teacher's probability of it, so a name the
 * student has never written is pulled as surely as the teacher writes it. Over ten seeds on the
 * six children nothing was tuned on it wrote the pet's name in 241 of 720 evaluation stories
 * against the reverse KL's 139, and raised the score by +0.053 [+0.025, +0.083]; on the default
 * child the two were not told apart (docs/reproduction.md, "The forward KL").
 */
export const STORY_OPD_TERM = { opdTerm: 'forward-kl', forwardKl: DEFAULT_KL_SET } as const;

/**
 * Preset overrides that suit a laptop browser: the paper's method shapes (votes, weights, clip,
 * KL 0, Adam betas, decay) with smaller batches and LoRA ranks than a cluster run, a learning
 * rate per method where one was measured (STORY_LR), and the storyteller's OPD term
 * (STORY_OPD_TERM).
 */
export function laptopOverrides(scenario: ScenarioId, method: MethodName = 'combined'): PresetOverrides {
  const story = scenario === 'storyteller';
  const talk = scenario === 'talk';
  return {
    // Talk yourself keeps a gentler rate for whatever model a person picks.
    optimizer: { lr: story ? STORY_LR[method] : talk ? 5e-4 : 1e-4 },
    ...(story && method !== 'binary' ? { advantage: { ...STORY_OPD_TERM, forwardKl: { ...STORY_OPD_TERM.forwardKl } } } : {}),
    batch: { size: talk ? 4 : story ? 8 : 16 },
    finetune: { lora: { rank: story || talk ? 8 : 16 } },
    judge: { maxNewTokens: 512 },
  };
}

/**
 * The preset of a trained arm for `scenario`: the arm's method with the laptop overrides and the
 * arm's hint source. Given `from` (another arm's preset), its training settings carry over
 * (presetSwitchedTo) and the arm keeps its own learning rate, unless `from`'s was set by hand.
 *
 * @throws PresetError when the arm cannot use `from`'s settings (shuffled or another child's hints with top-k selection)
 */
export function armPreset(arm: TrainedArm, scenario: ScenarioId, from?: MethodPreset): MethodPreset {
  const { method, hintSource } = armSetup(arm);
  const laptop = laptopOverrides(scenario, method);
  const overrides: PresetOverrides = { ...laptop, ...(hintSource !== 'judge' ? { advantage: { ...laptop.advantage, hintSource } } : {}) };
  if (!from) return makePreset(method, overrides);
  const switched = presetSwitchedTo(method, from, overrides);
  const byHand = from.optimizer.lr !== laptopOverrides(scenario, from.method).optimizer?.lr;
  const lr = byHand ? from.optimizer.lr : overrides.optimizer!.lr!;
  // Checked again: `from`'s carried settings must suit this arm.
  return parsePreset({ ...switched, optimizer: { ...switched.optimizer, lr } });
}

/** The config of `arm`: its method and preset (armPreset), keeping the config's own training settings. */
export function configForArm(config: RunConfig, arm: TrainedArm): RunConfig {
  const preset = armPreset(arm, config.scenario.id, config.preset);
  return { ...config, method: preset.method, preset, label: `${config.scenario.id} (${arm}, seed ${config.seed})` };
}

/**
 * The policy's sampling temperature in the student and teacher scenarios: the reference's
 * --rollout-temperature (openclaw-rl, openclaw-opd and openclaw-combine scripts), which its
 * trainer also divides the logits by (EnginePolicyService does the same with the run's).
 */
export const ROLLOUT_TEMPERATURE = 0.6;
/**
 * The storyteller's sampling temperature: 1, not the reference's 0.6. Its demo model was
 * fine-tuned and checked on stories sampled at 1 (src/demo/make.ts), and its measured runs
 * (docs/reproduction) were made at 1.
 */
export const STORY_TEMPERATURE = 1;

/**
 * Complete example configs with rules roles: the storyteller on the bundled demo model (offline),
 * the others on hub models. `method` picks the personal examples' method, its preset included.
 */
export function exampleConfig(name: 'toolcall', policyModel?: string): ToolCallRunConfig;
export function exampleConfig(name: PersonalExampleName, policyModel?: string, arm?: TrainedArm): RunConfig;
export function exampleConfig(name: ExampleName, policyModel?: string, arm?: TrainedArm): AnyRunConfig;
export function exampleConfig(name: ExampleName, policyModel?: string, arm: TrainedArm = 'combined'): AnyRunConfig {
  if (name === 'toolcall') return toolCallExample(policyModel);
  const story = name === 'storyteller';
  const { method } = armSetup(arm);
  return {
    format: 'nextstate-run-config',
    formatVersion: 1,
    label: `${name} (${arm}, rules)`,
    scenario: story ? { id: 'storyteller', subject: DEFAULT_STORY_SUBJECT, name: DEFAULT_PET_NAME, favourite: DEFAULT_FAVOURITE } : { id: name },
    method,
    preset: armPreset(arm, name),
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
      policy: { temperature: story ? STORY_TEMPERATURE : ROLLOUT_TEMPERATURE, topP: 1, topK: 0, maxNewTokens: story ? STORY_MAX_NEW_TOKENS : 384 },
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
    toolcall: { rewardMode: 'integrated', wrongAnswer: 'tool-calls', groupSize: DEFAULT_GROUP_SIZE, maxSteps: DEFAULT_MAX_STEPS, evalHeldOut: 50 },
    schedule: { concurrentGroups: 2, steps: 16, evalEvery: 4 },
    sampling: { policy: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 256 } },
  };
}
