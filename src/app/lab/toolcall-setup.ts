/**
 * The Setup's tool-call track (GSM8K with the calculator, the PRM step judge): its own fields of
 * the form, their defaults (`nextstate run --example toolcall`), and how a setup on this track
 * becomes a ToolCallRunConfig. The shared parts of the form (policy model and backend, seed,
 * label, the step judge's role choice, the advanced preset) stay in LabSetup.
 * Pure, so the mapping is tested in Node.
 */
import { bundledName } from '../../models/bundled';
import type { MethodPreset } from '../../rl/presets';
import type { RewardMode } from '../../sims/toolcall/index';
import { exampleConfig, parseToolCallRunConfig, type ConfigExtras, type ToolCallRunConfig } from '../../runtime/run-config';
import { labPolicy } from './policy-weights';
import type { LabSetup, ToolCallSetup } from './setup-shape';

export const REWARD_MODE_CHOICES: { id: RewardMode; title: string; summary: string }[] = [
  { id: 'integrated', title: 'Integrated', summary: 'r = o + the mean of the PRM\u2019s votes on the step: every step is judged.' },
  { id: 'outcome', title: 'Outcome only', summary: 'r = o: every step of an episode gets its final answer\u2019s \u00b11; no step judge.' },
];

/** The tool-call example as the CLI prints it: what the track starts with in the Setup. */
const example = () => exampleConfig('toolcall');

export function defaultToolCallSetup(): ToolCallSetup {
  const e = example();
  return {
    ...e.toolcall,
    problems: { source: e.problems.source === 'file' ? 'builtin' : e.problems.source, count: e.problems.count },
    schedule: { ...e.schedule },
    sampling: { ...e.sampling.policy },
  };
}

/** The track's preset: Binary RL's votes for the PRM, the track's KL, the example's batch and rank. */
export function toolCallLabPreset(): MethodPreset {
  return example().preset;
}

/** The policy a setup switched to the tool-call track starts with (a chat model that calls tools). */
export const TOOL_CALL_MODEL = example().models.policy.model;

/**
 * The prompt of an episode's first step, rounded up: the system prompt, the calculator's
 * `<tools>` block and a GSM8K question (about 380 tokens with Qwen3's template on the built-in
 * problems).
 */
const FIRST_PROMPT_TOKENS = 512;
/** One tool result as the next step's prompt carries it, with its template tokens (about 25). */
const TOOL_RESULT_TOKENS = 32;

/**
 * What the policy serves at most at once on this track, for the memory plan: every rollout of
 * the groups in flight, and the last step's context (the first prompt and every earlier step's
 * reply and tool result).
 */
export function toolCallServing(t: ToolCallSetup): { batch: number; contextTokens: number } {
  return { batch: t.schedule.concurrentGroups * t.groupSize, contextTokens: FIRST_PROMPT_TOKENS + t.maxSteps * (t.sampling.maxNewTokens + TOOL_RESULT_TOKENS) };
}

/** A tool-call run config as the lab starts it (like LabRunConfig for the personal track). */
export type LabToolCallRunConfig = ToolCallRunConfig & Required<Pick<ConfigExtras, 'lab' | 'modelRefs' | 'seeds'>>;

/**
 * The run config of a setup on the tool-call track, checked by the run-config parser.
 * `policyModel` is the hub id or URL, or the picked folder's name.
 *
 * @throws RunConfigError / PresetError naming the first bad field
 */
export function toToolCallRunConfig(setup: LabSetup, policyModel: string): LabToolCallRunConfig {
  const t = setup.toolcall;
  const model = policyModel || 'policy';
  const { policy, ref } = labPolicy(setup, model);
  const config: ToolCallRunConfig = {
    format: 'nextstate-run-config',
    formatVersion: 1,
    label: setup.label.trim() || toolCallLabel(setup, model),
    track: 'toolcall',
    method: 'binary',
    preset: setup.preset,
    models: {
      policy,
      judge: setup.roles.judge,
    },
    seed: setup.seed,
    problems: { ...t.problems },
    toolcall: { rewardMode: t.rewardMode, wrongAnswer: 'tool-calls', groupSize: t.groupSize, maxSteps: t.maxSteps, evalHeldOut: t.evalHeldOut },
    schedule: { ...t.schedule },
    sampling: { policy: { ...t.sampling } },
  };
  const checked = parseToolCallRunConfig(config);
  return {
    ...checked,
    lab: { policySource: setup.policy.source },
    modelRefs: { policy: ref },
    seeds: { run: setup.seed },
  };
}

/** The label of a tool-call run whose form names none. */
export function toolCallLabel(setup: LabSetup, policyModel: string): string {
  const mode = REWARD_MODE_CHOICES.find((m) => m.id === setup.toolcall.rewardMode)?.title ?? setup.toolcall.rewardMode;
  const model = bundledName(policyModel) ?? (policyModel.split('/').pop() || policyModel);
  return `toolcall \u00b7 ${mode} \u00b7 ${model}`;
}
