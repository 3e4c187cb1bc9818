/**
 * The one reader of run configs, in the combinators of rl/check.ts: what the lab stores, what a
 * run file carries and what `nextstate run --config` reads all pass here. Objects are exact (a
 * misspelt field is refused, not ignored); every problem names its field and what to write.
 */
import { checker, discriminated, FieldError, int, mapOf, num, object, oneOf, runChecker, str, type Checker, type JsonSchema } from '../rl/check';
import { hintSourceOf, MAX_NEW_TOKENS, MAX_VOTES, METHODS, parsePreset, presetShape, type MethodPreset } from '../rl/presets';
import { WRONG_ANSWER_REWARDS } from '../rl/tool-call-reward';
import { MAX_DIMENSIONS } from '../gpu/config';
import { isRevision } from '../gpu/hub';
import { WEIGHT_FORMATS } from '../gpu/quant';
import { PROBLEM_LIMITS, PROBLEM_ORDERS } from '../sims/problems/index';
import { createScenario, SCENARIO_IDS, type ScenarioConfig } from '../sims/scenarios/index';
import { modelsChecker, seedsChecker } from '../storage/stored-config';
import type { AnyRunConfig, GeneratorSpec, PersonalPolicyConfig, RunConfig, ToolCallRunConfig } from './run-config';

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
const scenario: Checker<ScenarioConfig> = checker(
  { type: 'object', properties: { id: { enum: SCENARIO_IDS } }, required: ['id'] },
  (value, path) => {
    try {
      createScenario(value as ScenarioConfig);
    } catch (e) {
      throw new FieldError(path, `is invalid: ${(e as Error).message}`);
    }
    return value as ScenarioConfig;
  },
);

const generatorShapes: Record<GeneratorSpec['kind'], Checker<GeneratorSpec>> = {
  rules: object({ kind: oneOf('rules') }),
  policy: object({ kind: oneOf('policy') }),
  engine: object({ kind: oneOf('engine'), model: saying('must be a string', modelName) }),
  endpoint: saying('needs baseUrl and model', object({ kind: oneOf('endpoint'), baseUrl: str(2048, 1), model: modelName })),
  transformers: object(
    { kind: oneOf('transformers'), model: saying('must be a string', modelName) },
    {
      source: saying('must be "hub" or "files"', oneOf('hub', 'files')),
      device: saying('must be "webgpu" or "wasm"', oneOf('webgpu', 'wasm')),
      dtype: saying('must be one of fp32, fp16, q8, int8, uint8, q4, bnb4, q4f16', oneOf('fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'bnb4', 'q4f16')),
    },
  ),
};

/** Where a judge, user or evaluator gets its text; the kind picks the shape. */
const generator: Checker<GeneratorSpec> = discriminated('kind', generatorShapes);

const policyModel = object(
  { model: saying('must name a model folder or hub id', modelName) },
  {
    backend: oneOf('cpu', 'cpu-reference', 'webgpu'),
    weightFormat: saying(`must be one of ${WEIGHT_FORMATS.join(', ')} (or absent: f16 on WebGPU, f32 on the CPU)`, oneOf(...WEIGHT_FORMATS)),
    revision: saying(
      'must be a branch, tag or commit of the hub model (e.g. main, v1.0, or 40 hex digits), or absent: main',
      where(str(256, 1), isRevision, 'is not a revision'),
    ),
  },
);

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

const remotePolicy = object(
  { kind: oneOf('server'), url: serverUrl, model: saying('must name the model the server serves', modelName) },
  { apiKey: saying('must be a string (or absent: NEXTSTATE_API_KEY_<HOST> from the environment)', str(4096, 1)) },
);

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

/** What the lab and the run file add beside the run loop's fields (kept as they are). */
const extras = {
  label: str(10_000),
  /** Whether the policy came from picked files: resuming such a run asks for them again. */
  lab: object({ policySource: oneOf('hub', 'files', 'server') }),
  modelRefs: modelsChecker,
  seeds: seedsChecker,
  roleSources: mapOf(
    str(64, 1),
    object({ kind: oneOf('engine', 'transformers', 'endpoint', 'rules') }, { library: str(256), device: str(64), model: str(1024), dtype: str(64) }),
    16,
  ),
};

const personal: Checker<RunConfig> = object(
  {
    ...header,
    scenario,
    method: oneOf(...METHODS),
    preset,
    models: object({ policy: personalPolicy, user: generator, judge: generator, evaluator: generator }),
    seed: saying('must be an integer', int(Number.MIN_SAFE_INTEGER)),
    problems: object({ source: problemSource, count: count(1, CONFIG_LIMITS.problems) }, { path: str(4096), order: problemOrder, split: problemSplit }),
    schedule: object({
      concurrentSessions: count(1, CONFIG_LIMITS.concurrent),
      steps: count(1, CONFIG_LIMITS.steps),
      evalEvery: count(0, CONFIG_LIMITS.steps),
      evalProblems: count(1, CONFIG_LIMITS.problems),
      evalVotes: count(1, CONFIG_LIMITS.votes),
    }),
    sampling: object({ policy: policySampling, user: object({ temperature, maxNewTokens }) }),
  },
  { ...extras, track: oneOf('personal') },
);

const toolCall: Checker<ToolCallRunConfig> = object(
  {
    ...header,
    track: oneOf('toolcall'),
    method: saying(`must be "binary": the tool-call track's PRM votes are evaluative (m = preset.judge.binaryVotes)`, oneOf('binary')),
    preset,
    models: object({ policy: policyModel, judge: generator }),
    seed: saying('must be an integer', int(Number.MIN_SAFE_INTEGER)),
    problems: object({ source: problemSource, count: count(1, CONFIG_LIMITS.problems) }, { path: str(4096) }),
    toolcall: object(
      {
        rewardMode: saying('must be "integrated" (r = o + mean of PRM votes) or "outcome" (r = o)', oneOf('integrated', 'outcome')),
        groupSize: count(1, CONFIG_LIMITS.groupSize),
        maxSteps: count(1, CONFIG_LIMITS.toolSteps),
        evalHeldOut: count(0, CONFIG_LIMITS.problems),
      },
      { wrongAnswer: saying('must be "tool-calls" (the reference\'s shaping by tool-call rounds) or "flat" (-1)', oneOf(...WRONG_ANSWER_REWARDS)) },
    ),
    schedule: object({ concurrentGroups: count(1, CONFIG_LIMITS.concurrent), steps: count(1, CONFIG_LIMITS.steps), evalEvery: count(0, CONFIG_LIMITS.steps) }),
    sampling: object({ policy: policySampling }),
  },
  extras,
);

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
