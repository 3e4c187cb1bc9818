/**
 * The one reader of run configs, in the combinators of base/check.ts: what the lab stores, what a
 * run file carries and what `nextstate run --config` reads all pass here. Objects are exact (a
 * misspelt field is refused, not ignored); every problem names its field and what to write.
 * The config types are what these checkers return (Infer), so they are declared here beside
 * them; run-config.ts, where the rest of the code reads them from, re-exports them.
 */
import { checker, discriminated, FieldError, int, mapOf, num, object, oneOf, runChecker, str, type Checker, type Infer, type JsonSchema } from '../base/check';
import { hintSourceOf, METHODS, parsePreset, presetShape, type MethodPreset } from '../rl/presets';
import { MAX_NEW_TOKENS, MAX_VOTES } from '../rl/preset-limits';
import { WRONG_ANSWER_REWARDS } from '../rl/tool-call-reward';
import { MAX_DIMENSIONS } from '../models/config';
import { isRevision } from '../models/hub';
import { BACKEND_NAMES } from '../gpu/backend';
import { WEIGHT_FORMATS } from '../gpu/quant';
import { PROBLEM_LIMITS, PROBLEM_ORDERS } from '../sims/problems/index';
import { createScenario, SCENARIO_IDS, type ScenarioConfig } from '../sims/scenarios/index';
import { modelsChecker, seedsChecker } from '../storage/stored-config';
import { generatorSourceChecker } from '../generators/generator';
import { TRANSFORMERS_DEVICES, TRANSFORMERS_DTYPES } from '../generators/transformers';
import { REWARD_MODES } from '../sims/toolcall/index';

/** A field of a run config failed its check; `field` is its path in the config. */
export class RunConfigError extends Error {
  override name = 'RunConfigError';
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`run config: ${field} ${problem}`);
  }
}

export const TRACKS = ['personal', 'toolcall'] as const;

export type Track = (typeof TRACKS)[number];

/**
 * Bounds on every count, so that a hand-edited or shared config cannot ask for runaway work
 * (concurrentSessions 1e8 printed nothing in 90 s and took 3.2 GB): each far above any run the
 * lab makes, and checked before anything is built from it.
 */
export const CONFIG_LIMITS = {
  /** Sessions or groups in flight at once: each is a conversation the policy generates for. */
  concurrent: 1_024,
  /** What `nextstate serve` runs: steps without end, until the server stops. */
  steps: 1_000_000_000,
  /** Problems trained on, evaluated or held out: as many as a problem file may hold. */
  problems: PROBLEM_LIMITS.problems,
  votes: MAX_VOTES,
  groupSize: 256,
  toolSteps: 64,
  maxNewTokens: MAX_NEW_TOKENS,
  topK: MAX_DIMENSIONS.vocab_size,
} as const;

/** A whole number from `min` to `max`, in the config's words. */
const count = (min: number, max: number) => saying(`must be a whole number from ${min} to ${max.toLocaleString('en-US')}`, int(min, max));

/** `check`, with its problem restated as `problem` (the config's own wording of the rule). */
function saying<T>(problem: string, check: Checker<T>): Checker<T> {
  return checker(check.schema, (value, path) => {
    try {
      return check(value, path);
    } catch (e) {
      if (e instanceof FieldError) throw new FieldError(path, problem);
      throw e;
    }
  });
}

/** `check`, then `test` on what it returned; `problem` when the test fails. */
function where<T>(check: Checker<T>, test: (v: T) => boolean, problem: string, schema: JsonSchema = check.schema): Checker<T> {
  return checker(schema, (value, path) => {
    const v = check(value, path);
    if (!test(v)) throw new FieldError(path, problem);
    return v;
  });
}

const modelName = str(1024, 1);

// parsePreset adds the rules between fields (a method's judges) and names fields in its own error.
const preset: Checker<MethodPreset> = checker(presetShape.schema, (value) => parsePreset(value));

// Each scenario checks its own settings (createScenario); the schema states only the id they all share.
const scenario: Checker<ScenarioConfig> = checker({ type: 'object', properties: { id: { enum: SCENARIO_IDS } }, required: ['id'] }, (value, path) => {
  try {
    createScenario(value as ScenarioConfig);
  } catch (e) {
    throw new FieldError(path, `is invalid: ${(e as Error).message}`);
  }
  return value as ScenarioConfig;
});

/** Where a judge, simulated user or evaluator gets its text (GeneratorSpec); the kind picks the shape. */
export const generatorChecker = discriminated('kind', {
  /** Deterministic rules, labelled as such everywhere (no model). */
  rules: object({ kind: oneOf('rules') }),
  /** The policy's own base model, frozen (adapter off). */
  policy: object({ kind: oneOf('policy') }),
  /** Another model on the engine, frozen: a folder or hub id. */
  engine: object({ kind: oneOf('engine'), model: saying('must be a string', modelName) }),
  /** An OpenAI-compatible endpoint; the key stays in the browser's settings, never here. */
  endpoint: saying('needs baseUrl and model', object({ kind: oneOf('endpoint'), baseUrl: str(2048, 1), model: modelName })),
  /**
   * An ONNX model through transformers.js (browser): a hub id, or (source 'files') the name of a
   * folder the person picks (in the Setup, again before a resume). Device and dtype default to the
   * library's choice (WebGPU where there is an adapter; for a folder, the variant it holds).
   */
  transformers: object(
    { kind: oneOf('transformers'), model: saying('must be a string', modelName) },
    {
      source: saying('must be "hub" or "files"', oneOf('hub', 'files')),
      device: saying(`must be ${TRANSFORMERS_DEVICES.map((d) => JSON.stringify(d)).join(' or ')}`, oneOf(...TRANSFORMERS_DEVICES)),
      dtype: saying(`must be one of ${TRANSFORMERS_DTYPES.join(', ')}`, oneOf(...TRANSFORMERS_DTYPES)),
    },
  ),
});
const generator = generatorChecker;

/** Where a judge, simulated user or evaluator gets its text; its kinds are generatorChecker's. */
export type GeneratorSpec = Infer<typeof generatorChecker>;

/** The policy's checkpoint and how it is loaded (PolicyModelConfig). */
export const policyModelChecker = object(
  { model: saying('must name a model folder or hub id', modelName) },
  {
    /** cpu: the fast CPU backend; cpu-reference: the plain-loop oracle it is checked against. */
    backend: oneOf(...BACKEND_NAMES),
    /**
     * How its weight matrices are stored (gpu/quant.ts); absent: f16 on WebGPU, f32 on the CPU.
     * A run writes the format it loaded, so a resumed or repeated run loads the same.
     */
    weightFormat: saying(`must be one of ${WEIGHT_FORMATS.join(', ')} (or absent: f16 on WebGPU, f32 on the CPU)`, oneOf(...WEIGHT_FORMATS)),
    /**
     * The hub revision (branch, tag or commit) a hub id is loaded at; absent: main. A run writes
     * the commit it loaded, so a resumed or repeated run loads the same files after the branch moved.
     */
    revision: saying(
      'must be a branch, tag or commit of the hub model (e.g. main, v1.0, or 40 hex digits), or absent: main',
      where(str(256, 1), isRevision, 'is not a revision'),
    ),
  },
);

/** The policy's checkpoint and how it is loaded (fields: policyModelChecker). */
export type PolicyModelConfig = Infer<typeof policyModelChecker>;

/** A server's base URL: http(s) only, so a config cannot point the run at another scheme. */
const serverUrl: Checker<string> = checker({ type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://' }, (value, path) => {
  const url = saying("must be the server's http(s) base URL, e.g. http://127.0.0.1:30000/v1", str(2048, 1))(value, path);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new FieldError(path, `is not a URL; write the server's base URL, e.g. http://127.0.0.1:30000/v1`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new FieldError(path, `must be an http or https URL, got ${parsed.protocol}`);
  return url;
});

/**
 * A policy served by another machine that speaks the reference's session protocol
 * (RemotePolicyConfig): its slime or Tinker server, or `nextstate serve`.
 */
export const remotePolicyChecker = object(
  {
    kind: oneOf('server'),
    /** The server's OpenAI base URL, e.g. http://127.0.0.1:30000/v1. */
    url: serverUrl,
    /** The model name the server serves. */
    model: saying('must name the model the server serves', modelName),
  },
  { apiKey: saying('must be a string (or absent: NEXTSTATE_API_KEY_<HOST> from the environment)', str(4096, 1)) },
);
const policyModel = policyModelChecker;
const remotePolicy = remotePolicyChecker;

/**
 * A policy served by another machine that speaks the reference's session protocol (its slime or
 * Tinker server, or `nextstate serve`): the run sends each turn with X-Session-Id, X-Turn-Type and
 * X-Session-Done, and the server judges and trains. `apiKey` is sent as a Bearer key and is never
 * written to a run file (withoutSecrets); absent, Node takes it from NEXTSTATE_API_KEY_<HOST>.
 * The loading settings of a local policy are typed absent, so readers of either kind need no
 * narrowing; the server loads its own.
 */
export type RemotePolicyConfig = Infer<typeof remotePolicyChecker> & { [K in keyof Omit<PolicyModelConfig, 'model'>]?: never };

/** Where a personal-track policy runs: on this machine's engine, or on a server that trains it. */
export type PersonalPolicyConfig = PolicyModelConfig | RemotePolicyConfig;

/** The personal track's policy: on the engine here, or (kind "server") on a server that trains it. */
const personalPolicy: Checker<PersonalPolicyConfig> = checker({ oneOf: [policyModel.schema, remotePolicy.schema] }, (value, path) => {
  const kind = (value as { kind?: unknown } | null)?.kind;
  if (kind === undefined) return policyModel(value, path);
  if (kind !== 'server') throw new FieldError(`${path}.kind`, 'must be "server" (a remote policy) or absent (a model loaded here)');
  return remotePolicy(value, path) as PersonalPolicyConfig;
});

const problemSource = saying('must be builtin, gsm8k-hub or file', oneOf('builtin', 'gsm8k-hub', 'file'));
const problemSplit = saying(
  'must be "held-out" (train on problems the evaluation never scores), "shared" or "tuning" (score the training problems)',
  oneOf('held-out', 'shared', 'tuning'),
);
const problemOrder = saying(`must be "reference" (the reference evaluation's GSM8K order) or "dataset"`, oneOf(...PROBLEM_ORDERS));

const temperature = saying('must be 0 or more', num(0));
const maxNewTokens = count(1, CONFIG_LIMITS.maxNewTokens);
const policySampling = object({
  temperature,
  topP: saying(
    'must be above 0 and at most 1',
    where(num(0, 1), (p) => p > 0, 'must be above 0', { type: 'number', exclusiveMinimum: 0, maximum: 1 }),
  ),
  topK: saying(`must be 0 (no top-k) or a whole number up to ${CONFIG_LIMITS.topK.toLocaleString('en-US')}`, int(0, CONFIG_LIMITS.topK)),
  maxNewTokens,
});

const header = {
  format: saying('must be "nextstate-run-config" (print one with `nextstate run --example storyteller`)', oneOf('nextstate-run-config')),
  formatVersion: checker({ const: 1 }, (value, path): 1 => {
    if (value !== 1) throw new FieldError(path, `is ${JSON.stringify(value)}; this version of the lab reads 1`);
    return 1;
  }),
};

/** What the lab and the run file keep beside the run loop's fields (ConfigExtras); the loop ignores them. */
const extras = {
  /** The JSON Schema an editor checks the config against (`nextstate run --example` writes it); the run ignores it. */
  $schema: str(2048),
  label: str(10_000),
  /** Whether the policy came from picked files (resuming such a run asks for them again), or runs on a server. */
  lab: object({ policySource: oneOf('hub', 'files', 'server') }),
  /** Role ("policy", "judge", ...) -> the model it loaded, repeated in the run file's header. */
  modelRefs: modelsChecker,
  /** Name ("run", ...) -> seed, repeated in the run file's header. */
  seeds: seedsChecker,
  /** Role ("judge", "user", "evaluator") -> what played it: library and version, device, model, dtype. */
  roleSources: mapOf(str(64, 1), generatorSourceChecker, 16),
};
export const configExtrasChecker = object({}, extras);

/** What the lab and the run file keep beside the run loop's fields; the loop ignores them. */
export type ConfigExtras = Infer<typeof configExtrasChecker>;

/**
 * The personal-agent track (RunConfig): simulated (or real) users in conversation, the binary
 * judge and the hint judge. A config without `track` is one of these (every config written
 * before the tool-call track existed).
 */
export const personalConfigChecker = object(
  {
    ...header,
    scenario,
    method: oneOf(...METHODS),
    preset,
    models: object({ policy: personalPolicy, user: generator, judge: generator, evaluator: generator }),
    seed: saying('must be an integer', int(Number.MIN_SAFE_INTEGER)),
    /**
     * `order` (GSM8K only): the reference evaluation's shuffled order (default) or the dataset's.
     * `split`: 'held-out' (default) trains on problems the evaluation never scores (runtime/problems.ts);
     * 'shared' trains on the evaluated problems themselves; 'tuning' scores the training problems
     * (for choosing settings without looking at the evaluation set). `count`: how many problems train.
     */
    problems: object({ source: problemSource, count: count(1, CONFIG_LIMITS.problems) }, { path: str(4096), order: problemOrder, split: problemSplit }),
    schedule: object({
      concurrentSessions: count(1, CONFIG_LIMITS.concurrent),
      /** Training steps before the run finishes. */
      steps: count(1, CONFIG_LIMITS.steps),
      /** Evaluate before training and after every K steps; 0 = never. */
      evalEvery: count(0, CONFIG_LIMITS.steps),
      evalProblems: count(1, CONFIG_LIMITS.problems),
      evalVotes: count(1, CONFIG_LIMITS.votes),
    }),
    sampling: object({ policy: policySampling, user: object({ temperature, maxNewTokens }) }),
  },
  {
    ...extras,
    /** Absent or 'personal'. */
    track: oneOf('personal'),
  },
);
const personal = personalConfigChecker;

/** The personal-agent track (personalConfigChecker); a config without `track` is one of these. */
export type RunConfig = Infer<typeof personalConfigChecker>;

/** The roles a generator plays beside the policy: the run config's models other than the policy. */
export type GeneratorRole = Exclude<keyof RunConfig['models'], 'policy'>;

/** The tool-call track's own settings (ToolCallOptions). */
export const toolCallOptionsChecker = object(
  {
    /** integrated: r_t = o + mean(PRM votes of step t); outcome: r_t = o. */
    rewardMode: saying('must be "integrated" (r = o + mean of PRM votes) or "outcome" (r = o)', oneOf(...REWARD_MODES)),
    /** n, rollouts per problem; advantages are standardized within a problem's group. */
    groupSize: count(1, CONFIG_LIMITS.groupSize),
    /** An episode without a final answer after this many policy steps has outcome -1. */
    maxSteps: count(1, CONFIG_LIMITS.toolSteps),
    /**
     * Evaluation problems: the first this many problems of the source after the `problems.count`
     * training problems (so never trained on); accuracy is measured on them, greedy.
     */
    evalHeldOut: count(0, CONFIG_LIMITS.problems),
  },
  {
    /**
     * A wrong final answer's reward: 'tool-calls' (the reference's tool-call reward, shaped by the
     * rounds of tool calls; every new config has it) or 'flat' (-1; also when absent, as in runs
     * made before the setting existed). src/rl/tool-call-reward.ts.
     */
    wrongAnswer: saying('must be "tool-calls" (the reference\'s shaping by tool-call rounds) or "flat" (-1)', oneOf(...WRONG_ANSWER_REWARDS)),
  },
);

/** The tool-call track's own settings. */
export type ToolCallOptions = Infer<typeof toolCallOptionsChecker>;

/**
 * The general-agent track (ToolCallRunConfig, docs/method.md#general-agents-tool-calls): GSM8K
 * problems solved with a calculator tool, the PRM judging every step with m =
 * preset.judge.binaryVotes votes, step rewards, group sampling and advantages standardized per
 * step index; accuracy on held-out problems.
 */
export const toolCallConfigChecker = object(
  {
    ...header,
    track: oneOf('toolcall'),
    /** Always 'binary': the PRM's votes are evaluative; its m is preset.judge.binaryVotes. */
    method: saying(`must be "binary": the tool-call track's PRM votes are evaluative (m = preset.judge.binaryVotes)`, oneOf('binary')),
    preset,
    models: object({
      policy: policyModel,
      /** The step judge (PRM); rules: the offline RulesStepJudge. */
      judge: generator,
    }),
    seed: saying('must be an integer', int(Number.MIN_SAFE_INTEGER)),
    /** Training problems: the first `count` of the source; the held-out ones follow them. */
    problems: object({ source: problemSource, count: count(1, CONFIG_LIMITS.problems) }, { path: str(4096) }),
    toolcall: toolCallOptionsChecker,
    schedule: object({
      /** Problems whose group of rollouts is in flight at once. */
      concurrentGroups: count(1, CONFIG_LIMITS.concurrent),
      steps: count(1, CONFIG_LIMITS.steps),
      /** Evaluate before training and after every K steps; 0 = never. */
      evalEvery: count(0, CONFIG_LIMITS.steps),
    }),
    sampling: object({
      /** Per policy step (one generation); evaluation is greedy. */
      policy: policySampling,
    }),
  },
  extras,
);
const toolCall = toolCallConfigChecker;

/** The general-agent track (toolCallConfigChecker): GSM8K problems solved with a calculator tool. */
export type ToolCallRunConfig = Infer<typeof toolCallConfigChecker>;

/** A run config of either track. */
export type AnyRunConfig = RunConfig | ToolCallRunConfig;

const toError = (e: FieldError) => new RunConfigError(e.path || '(root)', e.problem);

function rootObject(json: unknown): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new RunConfigError('(root)', 'must be a JSON object');
  return json as Record<string, unknown>;
}

/**
 * Checks a personal-track config, naming the first bad field; the preset and scenario use
 * their own checks. A tool-call config is refused here: read either track with
 * parseAnyRunConfig.
 *
 * @throws RunConfigError naming the field, or PresetError for the preset
 */
export function parseRunConfig(json: unknown): RunConfig {
  const track = rootObject(json).track;
  if (track === 'toolcall') throw new RunConfigError('track', 'is "toolcall": this reader takes personal-agent configs; use parseAnyRunConfig');
  if (track !== undefined && track !== 'personal') throw new RunConfigError('track', `must be one of ${TRACKS.join(', ')} (absent means personal)`);
  const c = runChecker(personal, json, toError);
  if (c.preset.method !== c.method) throw new RunConfigError('method', `(${c.method}) differs from preset.method (${c.preset.method})`);
  if (hintSourceOf(c.preset) === 'other-child' && c.scenario.id !== 'storyteller')
    throw new RunConfigError(
      'preset.advantage.hintSource',
      `is "other-child", which rewrites each hint for another storyteller child, but the scenario is "${c.scenario.id}"; use scenario "storyteller" or hintSource "judge" or "shuffled"`,
    );
  return c;
}

/**
 * Checks a tool-call config, naming the first bad field.
 *
 * @throws RunConfigError naming the field, or PresetError for the preset
 */
export function parseToolCallRunConfig(json: unknown): ToolCallRunConfig {
  if (rootObject(json).track !== 'toolcall') throw new RunConfigError('track', 'must be "toolcall" (print one with `nextstate run --example toolcall`)');
  const c = runChecker(toolCall, json, toError);
  if (c.preset.method !== 'binary') throw new RunConfigError('preset.method', `(${c.preset.method}) must be "binary" on the tool-call track`);
  if (c.schedule.evalEvery > 0 && c.toolcall.evalHeldOut === 0) {
    throw new RunConfigError('toolcall.evalHeldOut', 'is 0 but schedule.evalEvery asks for evaluations; hold out some problems or set evalEvery to 0');
  }
  return c;
}

/** Checks a config of either track (the `track` field picks the reader). */
export function parseAnyRunConfig(json: unknown): AnyRunConfig {
  return rootObject(json).track === 'toolcall' ? parseToolCallRunConfig(json) : parseRunConfig(json);
}
