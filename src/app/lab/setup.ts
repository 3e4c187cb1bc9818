/**
 * The setup form's model: what the person chose, as plain JSON that can be remembered in the
 * settings table, and how it becomes a RunConfig. Pure, so defaults and the mapping to a run
 * config are tested in Node; the Svelte form only edits a LabSetup.
 */
import { METHOD_TITLES, type MethodName, type MethodPreset } from '../../rl/presets';
import { bundledName } from '../../models/bundled';
import {
  createScenario,
  DEFAULT_FAVOURITE,
  DEFAULT_PET_NAME,
  DEFAULT_STORY_SUBJECT,
  type HomeworkMode,
  type ScenarioConfig,
  type ScenarioId,
} from '../../sims/scenarios/index';
import type { ModelRef } from '../../storage/index';
import { DEFAULT_LAB_WEIGHTS, labPolicy } from './policy-weights';
import { roleFolderProblem, type RoleFiles } from './role-files';
import {
  armPreset,
  CHAT_MODEL,
  exampleConfig,
  parseRunConfig,
  ROLLOUT_TEMPERATURE,
  type ConfigExtras,
  type RemotePolicyConfig,
  type RunConfig,
  type Track,
} from '../../runtime/run-config';
import { defaultToolCallSetup, TOOL_CALL_MODEL, toolCallLabel, toolCallLabPreset, toToolCallRunConfig, type LabToolCallRunConfig } from './toolcall-setup';
import type { LabSetup, Role, RoleChoice } from './setup-shape';

// The form's shape is declared apart (setup-shape.ts), so the modules this one uses can name it too.
export type { Backend, CustomPersona, LabSetup, Role, RoleChoice } from './setup-shape';

export const SCENARIO_CHOICES: { id: ScenarioId; title: string; summary: string }[] = (['storyteller', 'student', 'teacher', 'custom', 'talk'] as const).map(
  (id) => {
    const s = createScenario(id === 'custom' ? { id, persona: 'x', preference: 'x' } : { id });
    return { id, title: s.title, summary: s.summary };
  },
);

export const METHOD_CHOICES: { id: MethodName; title: string; summary: string }[] = [
  { id: 'binary', title: METHOD_TITLES.binary, summary: 'The judge scores each answer +1, -1 or 0 from the next state.' },
  { id: 'opd', title: METHOD_TITLES.opd, summary: 'Hindsight hints from the next state; per-token teacher minus student log-probs.' },
  { id: 'combined', title: METHOD_TITLES.combined, summary: 'Both signals added per token (the paper\u2019s best).' },
];

const votes = (n: number, what: string) => `${n} ${what} vote${n === 1 ? '' : 's'}`;

/**
 * How many judge votes a method takes, from the preset it would run with: the form's own (the
 * advanced panel may have changed it) for the chosen method, that method's preset for the others.
 */
export function methodVotes(setup: LabSetup, method: MethodName): string {
  const { judge } = method === setup.method ? setup.preset : presetFor(method, setup.scenario);
  if (method === 'binary') return `m = ${votes(judge.binaryVotes, 'binary')}`;
  if (method === 'opd') return `m = ${votes(judge.hintVotes, 'hint')}`;
  return `m = ${votes(judge.binaryVotes, 'binary')} and ${votes(judge.hintVotes, 'hint')}`;
}

/** The method's laptop preset for the scenario, with that method's own learning rate (as the CLI's arms). */
export function presetFor(method: MethodName, scenario: ScenarioId): MethodPreset {
  return armPreset(method, scenario);
}

type ScenarioParts = Pick<LabSetup, 'problems' | 'schedule' | 'sampling'> & { hubId: string; roles: Record<Role, RoleChoice> };

/** A chat model on 12 GSM8K-style problems, 8 steps: the homework scenarios (student, teacher, custom). */
function homeworkParts(roles: Record<Role, RoleChoice>, evalVotes: number): ScenarioParts {
  return {
    hubId: CHAT_MODEL,
    roles,
    problems: { source: 'builtin', count: 12, order: 'reference' },
    schedule: { concurrentSessions: 4, steps: 8, evalEvery: 4, evalProblems: 12, evalVotes },
    sampling: { policy: { temperature: ROLLOUT_TEMPERATURE, topP: 1, topK: 0, maxNewTokens: 256 }, user: { temperature: 0.7, maxNewTokens: 256 } },
  };
}

/** What a scenario brings with it when picked: model, problems, schedule, sampling. */
function scenarioParts(scenario: ScenarioId): ScenarioParts {
  const rules: RoleChoice = { kind: 'rules' };
  switch (scenario) {
    case 'storyteller': {
      // The storyteller example as `nextstate run --example storyteller` runs it.
      const example = exampleConfig('storyteller');
      return {
        hubId: example.models.policy.model,
        roles: { user: rules, judge: rules, evaluator: rules },
        // Story prompts are built into the scenario.
        problems: { source: 'builtin', count: example.problems.count, order: 'reference' },
        schedule: example.schedule,
        sampling: example.sampling,
      };
    }
    case 'talk':
      return {
        hubId: CHAT_MODEL,
        // The person is the user and there is no score to evaluate; only the judge is chosen.
        roles: { user: rules, judge: rules, evaluator: rules },
        problems: { source: 'builtin', count: 1, order: 'reference' },
        schedule: { concurrentSessions: 1, steps: 1000, evalEvery: 0, evalProblems: 1, evalVotes: 1 },
        sampling: { policy: { temperature: 0.7, topP: 1, topK: 0, maxNewTokens: 128 }, user: { temperature: 0.7, maxNewTokens: 256 } },
      };
    case 'custom':
      // Rules know only the built-in users: a described persona needs a model to play it.
      return homeworkParts({ user: { kind: 'policy' }, judge: rules, evaluator: { kind: 'policy' } }, 1);
    default:
      return homeworkParts({ user: rules, judge: rules, evaluator: rules }, 3);
  }
}

/** Where `nextstate serve` listens unless told otherwise. */
export const DEFAULT_POLICY_SERVER = 'http://127.0.0.1:30000/v1';

/** The policy server a setup names, the default one where it names none. */
export function policyServer(setup: Pick<LabSetup, 'policy'>): { url: string; model: string } {
  return setup.policy.server ?? { url: DEFAULT_POLICY_SERVER, model: '' };
}

/** Whether the setup's policy runs on a server, which judges and trains it (nothing trains here). */
export function onServer(setup: Pick<LabSetup, 'policy'>): boolean {
  return setup.policy.source === 'server';
}

/** The first setup a person sees: a storyteller on a tiny story model with rules, which runs anywhere. */
export function defaultSetup(options: { webgpu?: boolean } = {}): LabSetup {
  const parts = scenarioParts('storyteller');
  return {
    version: 1,
    label: '',
    track: 'personal',
    scenario: 'storyteller',
    storySubject: DEFAULT_STORY_SUBJECT,
    storyName: DEFAULT_PET_NAME,
    storyFavourite: DEFAULT_FAVOURITE,
    custom: {
      persona: 'A busy parent who wants short, practical answers without jargon.',
      preference: 'Short (under 80 words), practical, no jargon, ends with one concrete next step.',
      doneMarker: 'TASK_DONE',
      maxTurns: 6,
    },
    homework: 'chat',
    method: 'combined',
    preset: presetFor('combined', 'storyteller'),
    policy: { source: 'hub', hubId: parts.hubId, localName: '', backend: options.webgpu === false ? 'cpu' : 'webgpu', weights: DEFAULT_LAB_WEIGHTS },
    roles: parts.roles,
    seed: 1,
    problems: parts.problems,
    schedule: parts.schedule,
    sampling: parts.sampling,
    toolcall: defaultToolCallSetup(),
  };
}

/**
 * The form once its run has started, showing the next run: the label named the one run, so it
 * empties; a talk run has no last step and ends when its tab closes, so the form goes back to the
 * default scenario's settings rather than offering a thousand-step talk again.
 */
export function nextRunSetup(setup: LabSetup): LabSetup {
  const next = setup.label ? { ...setup, label: '' } : setup;
  return next.scenario === 'talk' ? withScenario(next, defaultSetup().scenario) : next;
}

/** A run that ends when its tab closes (talking to the policy), rather than being interrupted. */
export function endsWithTab(config: unknown): boolean {
  return (config as { scenario?: { id?: unknown } } | null)?.scenario?.id === 'talk';
}

/**
 * Switching track: the tool-call track brings its preset and a chat model that calls tools; back
 * on the personal track the scenario's preset and model return. Seed, backend, label, the judge
 * and each track's own fields stay.
 */
export function withTrack(setup: LabSetup, track: Track): LabSetup {
  if (track === setup.track) return setup;
  if (track === 'toolcall') return { ...setup, track, preset: toolCallLabPreset(), policy: { ...setup.policy, hubId: TOOL_CALL_MODEL } };
  return { ...setup, track, preset: presetFor(setup.method, setup.scenario), policy: { ...setup.policy, hubId: scenarioParts(setup.scenario).hubId } };
}

/** The preset the advanced panel resets to: the track's, or the method's for the scenario. */
export function presetOf(setup: LabSetup): MethodPreset {
  return setup.track === 'toolcall' ? toolCallLabPreset() : presetFor(setup.method, setup.scenario);
}

/**
 * Picking another scenario brings its defaults; the method, backend, seed and label stay. Talk
 * yourself keeps the policy the form names: any model can be talked to (a story model continues
 * the person's story beginning), and a switch to a hub download would fail offline.
 */
export function withScenario(setup: LabSetup, scenario: ScenarioId): LabSetup {
  if (scenario === setup.scenario) return setup;
  const parts = scenarioParts(scenario);
  const workspace = setup.homework === 'workspace' && (scenario === 'student' || scenario === 'teacher');
  return {
    ...setup,
    scenario,
    preset: presetFor(setup.method, scenario),
    policy: { ...setup.policy, hubId: workspace ? TOOL_CALL_MODEL : scenario === 'talk' ? setup.policy.hubId : parts.hubId },
    roles: { ...parts.roles, judge: setup.roles.judge.kind === 'rules' ? parts.roles.judge : setup.roles.judge },
    problems: parts.problems,
    schedule: parts.schedule,
    sampling: parts.sampling,
  };
}

/**
 * The homework in the chat or in workspace files. The workspace offers its tools through the
 * policy's chat template, which the homework scenarios' default model lacks: picking it brings a
 * model whose template has them (the tool-call track's), and going back returns the default,
 * unless the person named another model.
 */
export function withHomework(setup: LabSetup, homework: HomeworkMode): LabSetup {
  if (homework === setup.homework) return setup;
  const [from, to] = homework === 'workspace' ? [CHAT_MODEL, TOOL_CALL_MODEL] : [TOOL_CALL_MODEL, CHAT_MODEL];
  return { ...setup, homework, policy: setup.policy.hubId === from ? { ...setup.policy, hubId: to } : setup.policy };
}

/** Another method resets the preset to that method's paper preset (laptop batch and rank). */
export function withMethod(setup: LabSetup, method: MethodName): LabSetup {
  return { ...setup, method, preset: presetFor(method, setup.scenario) };
}

export function scenarioConfig(setup: LabSetup): ScenarioConfig {
  switch (setup.scenario) {
    case 'storyteller':
      return {
        id: 'storyteller',
        subject: setup.storySubject.trim() || DEFAULT_STORY_SUBJECT,
        name: setup.storyName.trim() || DEFAULT_PET_NAME,
        favourite: setup.storyFavourite.trim() || DEFAULT_FAVOURITE,
      };
    case 'custom':
      return {
        id: 'custom',
        persona: setup.custom.persona,
        preference: setup.custom.preference,
        doneMarker: setup.custom.doneMarker,
        maxTurns: setup.custom.maxTurns,
        problemSource: 'gsm8k',
      };
    case 'student':
    case 'teacher':
      return setup.homework === 'workspace' ? { id: setup.scenario, homework: 'workspace' } : { id: setup.scenario };
    default:
      return { id: setup.scenario };
  }
}

/** Which roles the person chooses a model for in this scenario. */
export function rolesFor(scenario: ScenarioId): Role[] {
  return scenario === 'talk' ? ['judge'] : ['user', 'judge', 'evaluator'];
}

/** The roles of a setup: the step judge alone on the tool-call track; no judge for a policy on a server, which judges. */
export function setupRoles(setup: LabSetup): Role[] {
  if (setup.track === 'toolcall') return ['judge'];
  const roles = rolesFor(setup.scenario);
  return onServer(setup) ? roles.filter((r) => r !== 'judge') : roles;
}

/** Problems in the form that block a start, in words; empty when the setup can run. */
export function setupProblems(setup: LabSetup, options: { pickedFiles?: number; roleFiles?: RoleFiles } = {}): string[] {
  const out: string[] = [];
  if (setup.policy.source === 'hub' && !setup.policy.hubId.trim())
    out.push('Name the policy model: a hub id such as HuggingFaceTB/SmolLM2-135M-Instruct, or a URL.');
  if (setup.policy.source === 'files' && !options.pickedFiles)
    out.push('Pick the policy model\u2019s folder (config.json, model.safetensors, tokenizer.json, tokenizer_config.json).');
  if (onServer(setup)) {
    if (setup.track === 'toolcall')
      out.push('The tool-call track trains its policy here: choose a hub model or a folder, or go back to a scenario for a policy on a server.');
    const server = policyServer(setup);
    if (!/^https?:\/\/\S+$/.test(server.url.trim()) || !server.model.trim())
      out.push('Give the policy server a base URL (http:// or https://, ending in /v1) and the model name it serves (its GET /v1/models).');
    for (const role of setupRoles(setup))
      if (setup.roles[role].kind === 'policy')
        out.push(`The ${role} cannot be a frozen copy of a policy that runs on a server: choose rules, another model or an endpoint.`);
  }
  if (setup.track !== 'toolcall' && setup.scenario === 'custom' && setup.roles.user.kind === 'rules')
    out.push('A custom persona needs a model to play it: choose the policy model, another model or an endpoint for the user.');
  for (const role of setupRoles(setup)) {
    const r = setup.roles[role];
    if (r.kind === 'transformers' && r.source === 'files') {
      const problem = roleFolderProblem(role, options.roleFiles?.[role]);
      if (problem) out.push(problem);
    } else if ((r.kind === 'engine' || r.kind === 'transformers') && !r.model.trim()) out.push(`Name the ${role}\u2019s model.`);
    if (r.kind === 'endpoint' && (!/^https?:\/\/\S+$/.test(r.baseUrl.trim()) || !r.model.trim()))
      out.push(`Give the ${role}\u2019s endpoint a base URL (http:// or https://) and a model name.`);
  }
  // The config's own check catches what the form's words above do not; after them it would
  // only say one of them again in the validator's terms.
  if (out.length) return out;
  try {
    toAnyRunConfig(setup, 'check');
  } catch (e) {
    out.push((e as Error).message);
  }
  return out;
}

/** The folder name of picked files ("stories260K/config.json" -> "stories260K"). */
export function pickedFolderName(files: readonly { name: string; webkitRelativePath?: string }[]): string {
  const path = files.find((f) => f.webkitRelativePath)?.webkitRelativePath ?? '';
  return path.includes('/') ? path.split('/')[0] : 'picked files';
}

/** The policy's name in the run config: the hub id or URL, or the name given to the picked files. */
export function policyModelName(setup: LabSetup, files: readonly { name: string; webkitRelativePath?: string }[] = []): string {
  if (setup.policy.source === 'hub') return setup.policy.hubId.trim();
  if (setup.policy.source === 'server') return policyServer(setup).model.trim();
  return setup.policy.localName.trim() || (files.length ? pickedFolderName(files) : 'picked files');
}

/** A run config as the lab starts it: with where the policy came from, its model and its seed. */
export type LabRunConfig = RunConfig & Required<Pick<ConfigExtras, 'lab' | 'modelRefs' | 'seeds'>>;

/**
 * The run config of a setup. `policyModel` is the hub id or URL, or the picked folder's name.
 *
 * @throws RunConfigError / PresetError / ScenarioConfigError naming the first bad field
 */
export function toRunConfig(setup: LabSetup, policyModel = policyModelName(setup)): LabRunConfig {
  const talk = setup.scenario === 'talk';
  const { policy, ref } = onServer(setup) ? serverPolicy(setup) : labPolicy(setup, policyModel || 'policy');
  const config: RunConfig = {
    format: 'nextstate-run-config',
    formatVersion: 1,
    label: setup.label.trim() || defaultLabel(setup, policyModel),
    scenario: scenarioConfig(setup),
    method: setup.method,
    preset: setup.preset,
    models: {
      policy,
      // Talk yourself: the person is the user and nothing is evaluated; rules stand in, unused.
      user: talk ? { kind: 'rules' } : setup.roles.user,
      judge: setup.roles.judge,
      evaluator: talk ? { kind: 'rules' } : setup.roles.evaluator,
    },
    seed: setup.seed,
    problems: { ...setup.problems },
    schedule: talk ? { ...setup.schedule, concurrentSessions: 1, evalEvery: 0 } : { ...setup.schedule },
    sampling: { policy: { ...setup.sampling.policy }, user: { ...setup.sampling.user } },
  };
  const checked = parseRunConfig(config);
  return {
    ...checked,
    lab: { policySource: setup.policy.source },
    modelRefs: { policy: ref },
    seeds: { run: setup.seed },
  };
}

/**
 * A policy on a server: what the run sends its turns to, and what the run file's header names.
 * The key is not here: it stays in settings (apiKeySetting), never in a config or an export.
 */
function serverPolicy(setup: LabSetup): { policy: RemotePolicyConfig; ref: ModelRef } {
  const server = policyServer(setup);
  const url = server.url.trim().replace(/\/+$/, '');
  const model = server.model.trim() || 'policy';
  return { policy: { kind: 'server', url, model }, ref: { id: `${model} @ ${url}` } };
}

/** The run config of a setup on either track (what Start launches). */
export function toAnyRunConfig(setup: LabSetup, policyModel = policyModelName(setup)): LabRunConfig | LabToolCallRunConfig {
  return setup.track === 'toolcall' ? toToolCallRunConfig(setup, policyModel) : toRunConfig(setup, policyModel);
}

/** The label Start gives a run when the form names none, on either track. */
export function runLabel(setup: LabSetup, files: readonly { name: string; webkitRelativePath?: string }[] = []): string {
  const model = policyModelName(setup, files);
  return setup.track === 'toolcall' ? toolCallLabel(setup, model) : defaultLabel(setup, model);
}

function defaultLabel(setup: LabSetup, policyModel: string): string {
  const method = METHOD_CHOICES.find((m) => m.id === setup.method)?.title ?? setup.method;
  const model = bundledName(policyModel) ?? (policyModel.split('/').pop() || policyModel);
  return `${setup.scenario} \u00b7 ${method} \u00b7 ${model}`;
}

/**
 * A remembered setup, checked: anything from another app version or hand-edited falls back to
 * the defaults field by field rather than breaking the form.
 */
export function restoreSetup(saved: unknown, options: { webgpu?: boolean } = {}): LabSetup {
  const base = defaultSetup(options);
  if (typeof saved !== 'object' || saved === null || (saved as LabSetup).version !== 1) return base;
  const s = saved as Partial<LabSetup>;
  const merged: LabSetup = {
    ...base,
    ...s,
    version: 1,
    custom: { ...base.custom, ...s.custom },
    policy: { ...base.policy, ...s.policy, ...(s.policy?.server && { server: { ...policyServer(base), ...s.policy.server } }) },
    roles: { ...base.roles, ...s.roles },
    problems: { ...base.problems, ...s.problems },
    schedule: { ...base.schedule, ...s.schedule },
    sampling: { policy: { ...base.sampling.policy, ...s.sampling?.policy }, user: { ...base.sampling.user, ...s.sampling?.user } },
    toolcall: {
      ...base.toolcall,
      ...s.toolcall,
      problems: { ...base.toolcall.problems, ...s.toolcall?.problems },
      schedule: { ...base.toolcall.schedule, ...s.toolcall?.schedule },
      sampling: { ...base.toolcall.sampling, ...s.toolcall?.sampling },
    },
  } as LabSetup;
  try {
    toAnyRunConfig(merged);
    return merged;
  } catch {
    return base;
  }
}
