/**
 * A run's whole configuration as plain JSON: what the lab stores in a run, what a run file
 * carries (without secrets), and what `nextstate run --config` reads.
 */
import {
  DEFAULT_REVERSE_KL,
  makePreset,
  parsePreset,
  presetSwitchedTo,
  toolCallPreset,
  type MethodName,
  type MethodPreset,
  type PresetOverrides,
} from '../rl/presets';
import { armSetup, type TrainedArm } from './arms';
import { DEMO_STORY_MODEL } from '../gpu/bundled';
import type { ProblemOrder } from '../sims/problems/index';
import {
  DEFAULT_FAVOURITE,
  DEFAULT_PET_NAME,
  DEFAULT_STORY_SUBJECT,
  STORY_MAX_NEW_TOKENS,
  type ScenarioConfig,
  type ScenarioId,
} from '../sims/scenarios/index';
import { CALCULATOR_TOOL, DEFAULT_GROUP_SIZE, DEFAULT_MAX_STEPS, type RewardMode } from '../sims/toolcall/index';
import type { ModelRef } from '../storage/stored-config';
import type { GeneratorSource } from '../generators/generator';
import type { WeightFormat } from '../gpu/quant';
import type { TransformersDevice, TransformersDtype } from '../generators/transformers';
import type { WrongAnswerReward } from '../rl/tool-call-reward';
import type { TRACKS } from './run-config-check';

export { parseAnyRunConfig, parseRunConfig, parseToolCallRunConfig, RunConfigError, TRACKS } from './run-config-check';

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
  /**
   * An ONNX model through transformers.js (browser): a hub id, or (source 'files') the name of a
   * folder the person picks (in the Setup, again before a resume). Device and dtype default to the
   * library's choice (WebGPU where there is an adapter; for a folder, the variant it holds).
   */
  | { kind: 'transformers'; model: string; source?: 'hub' | 'files'; device?: TransformersDevice; dtype?: TransformersDtype };

/** The policy's checkpoint and how it is loaded. */
export interface PolicyModelConfig {
  model: string;
  /** cpu: the fast CPU backend; cpu-reference: the plain-loop oracle it is checked against. */
  backend?: 'cpu' | 'cpu-reference' | 'webgpu';
  /**
   * How its weight matrices are stored (gpu/quant.ts); absent: f16 on WebGPU, f32 on the CPU.
   * A run writes the format it loaded, so a resumed or repeated run loads the same.
   */
  weightFormat?: WeightFormat;
  /**
   * The hub revision (branch, tag or commit) a hub id is loaded at; absent: main. A run writes
   * the commit it loaded, so a resumed or repeated run loads the same files after the branch moved.
   */
  revision?: string;
}

/**
 * A policy served by another machine that speaks the reference's session protocol (its slime or
 * Tinker server, or `nextstate serve`): the run sends each turn with X-Session-Id, X-Turn-Type and
 * X-Session-Done, and the server judges and trains. `apiKey` is sent as a Bearer key and is never
 * written to a run file (withoutSecrets); absent, Node takes it from NEXTSTATE_API_KEY_<HOST>.
 */
export interface RemotePolicyConfig {
  kind: 'server';
  /** The server's OpenAI base URL, e.g. http://127.0.0.1:30000/v1. */
  url: string;
  /** The model name the server serves. */
  model: string;
  apiKey?: string;
  /** Loading settings of a local policy; the server loads its own (absent, so readers of either kind need no narrowing). */
  backend?: never;
  weightFormat?: never;
  revision?: never;
}

/** Where a personal-track policy runs: on this machine's engine, or on a server that trains it. */
export type PersonalPolicyConfig = PolicyModelConfig | RemotePolicyConfig;

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

/** What the lab and the run file keep beside the run loop's fields; the loop ignores them. */
export interface ConfigExtras {
  /** Whether the policy came from picked files (resuming such a run asks for them again), or runs on a server. */
  lab?: { policySource: 'hub' | 'files' | 'server' };
  /** Role ("policy", "judge", ...) -> the model it loaded, repeated in the run file's header. */
  modelRefs?: Record<string, ModelRef>;
  /** Name ("run", ...) -> seed, repeated in the run file's header. */
  seeds?: Record<string, number>;
  /** Role ("judge", "user", "evaluator") -> what played it: library and version, device, model, dtype. */
  roleSources?: Record<string, GeneratorSource>;
}

/**
 * The personal-agent track: simulated (or real) users in conversation, the binary judge and
 * the hint judge. A config without `track` is one of these (every config written before the
 * tool-call track existed).
 */
export interface RunConfig extends ConfigExtras {
  format: 'nextstate-run-config';
  formatVersion: 1;
  label?: string;
  /** Absent or 'personal'. */
  track?: 'personal';
  scenario: ScenarioConfig;
  method: MethodName;
  preset: MethodPreset;
  models: {
    policy: PersonalPolicyConfig;
    user: GeneratorSpec;
    judge: GeneratorSpec;
    evaluator: GeneratorSpec;
  };
  seed: number;
  /**
   * `order` (GSM8K only): the reference evaluation's shuffled order (default) or the dataset's.
   * `split`: 'held-out' (default) trains on problems the evaluation never scores (runtime/problems.ts);
   * 'shared' trains on the evaluated problems themselves; 'tuning' scores the training problems
   * (for choosing settings without looking at the evaluation set). `count`: how many problems train.
   */
  problems: { source: 'builtin' | 'gsm8k-hub' | 'file'; path?: string; count: number; order?: ProblemOrder; split?: 'held-out' | 'shared' | 'tuning' };
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
  /**
   * A wrong final answer's reward: 'tool-calls' (the reference's tool-call reward, shaped by the
   * rounds of tool calls; every new config has it) or 'flat' (-1; also when absent, as in runs
   * made before the setting existed). src/rl/tool-call-reward.ts.
   */
  wrongAnswer?: WrongAnswerReward;
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
 * The general-agent track (docs/method.md#general-agents-tool-calls): GSM8K problems solved
 * with a calculator tool, the PRM judging every step with m = preset.judge.binaryVotes votes,
 * step rewards, group sampling and advantages standardized per step index; accuracy on
 * held-out problems.
 */
export interface ToolCallRunConfig extends ConfigExtras {
  format: 'nextstate-run-config';
  formatVersion: 1;
  label?: string;
  track: 'toolcall';
  /** Always 'binary': the PRM's votes are evaluative; its m is preset.judge.binaryVotes. */
  method: 'binary';
  preset: MethodPreset;
  models: {
    policy: PolicyModelConfig;
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
export const STORY_LR: Record<MethodName, number> = { binary: 5e-4, opd: 4e-3, combined: 4e-3 };

/**
 * The storyteller's OPD term: reverse KL over the hinted teacher's 16 likeliest tokens and one
 * bin for the rest (the reference's --distill-topk loss form). Over ten seeds it wrote the pet's
 * name in 60 of 120 evaluation stories against sampled-token OPD's 25, and tied it on the score
 * (docs/reproduction.md, "A loss that reaches the name").
 */
export const STORY_OPD_TERM = { opdTerm: 'reverse-kl', reverseKl: DEFAULT_REVERSE_KL } as const;

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
    ...(story && method !== 'binary' ? { advantage: { ...STORY_OPD_TERM, reverseKl: { ...STORY_OPD_TERM.reverseKl } } } : {}),
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
