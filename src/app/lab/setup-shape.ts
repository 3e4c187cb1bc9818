/**
 * What the Setup form edits, as types: LabSetup and its parts (the roles, the custom persona, the
 * tool-call track's fields). Apart from the modules that read and build a setup (setup.ts,
 * toolcall-setup.ts, policy-weights.ts, role-files.ts), so that each of them can name the shape
 * without importing the others.
 */
import type { MethodName, MethodPreset } from '../../rl/presets';
import type { HomeworkMode, ScenarioId } from '../../sims/scenarios/index';
import type { ProblemOrder } from '../../sims/problems/index';
import type { RewardMode } from '../../sims/toolcall/index';
import type { WeightFormat } from '../../gpu/quant';
import type { ConfigExtras, GeneratorRole, GeneratorSpec, RunConfig, ToolCallRunConfig, Track } from '../../runtime/run-config';
import type { BackendKind } from '../../gpu/backend';

/** Where a judge, simulated user or evaluator gets its text (the run config's GeneratorSpec). */
export type RoleChoice = GeneratorSpec;
export type Role = GeneratorRole;
export type Backend = BackendKind;

export interface CustomPersona {
  persona: string;
  preference: string;
  doneMarker: string;
  maxTurns: number;
}

export interface LabSetup {
  /** Bumped when the shape changes, so a remembered setup from an older app is dropped. */
  version: 1;
  label: string;
  /** personal: a scenario's users and judges; toolcall: GSM8K with the calculator (fields in `toolcall`). */
  track: Track;
  scenario: ScenarioId;
  storySubject: string;
  /** The storyteller child's pet name and its favourite thing. */
  storyName: string;
  storyFavourite: string;
  custom: CustomPersona;
  /** The student's and the teacher's homework: in the chat, or in workspace files (HomeworkMode). */
  homework: HomeworkMode;
  method: MethodName;
  /** The method's preset; the advanced panel edits every field of it. */
  preset: MethodPreset;
  policy: {
    /**
     * hub: a hub id or https URL; files: a folder or files the person picks (not remembered);
     * server: a policy server (`nextstate serve`, the reference's) that judges and trains it.
     */
    source: NonNullable<ConfigExtras['lab']>['policySource'];
    /** The policy server's OpenAI base URL and the model it serves (policyServer); its key is kept in settings (apiKeySetting). */
    server?: { url: string; model: string };
    hubId: string;
    /** The name picked files are recorded under (the folder's name unless the person changes it). */
    localName: string;
    backend: Backend;
    /** How its weight matrices are stored (the Setup's "Weights"); full fine-tuning uses f32. */
    weights: WeightFormat;
  };
  roles: Record<Role, RoleChoice>;
  seed: number;
  /** GSM8K from the hub comes in the reference evaluation's order unless `order` is 'dataset'. */
  problems: { source: Exclude<RunConfig['problems']['source'], 'file'>; count: number; order: ProblemOrder };
  schedule: RunConfig['schedule'];
  sampling: RunConfig['sampling'];
  /** The tool-call track's own fields; its step judge is `roles.judge`. */
  toolcall: ToolCallSetup;
}

/** What the form edits on the tool-call track; the run config's `toolcall`, problems, schedule and sampling. */
export interface ToolCallSetup {
  /** integrated: r_t = o + mean(PRM votes of step t); outcome: r_t = o. */
  rewardMode: RewardMode;
  /** Rollouts per problem (n). */
  groupSize: number;
  /** Policy steps an episode may take before it ends without an answer. */
  maxSteps: number;
  /** Problems after the training ones, never trained on, for the greedy accuracy evaluation. */
  evalHeldOut: number;
  /** Training problems: the first `count` of the source. */
  problems: { source: Exclude<ToolCallRunConfig['problems']['source'], 'file'>; count: number };
  schedule: ToolCallRunConfig['schedule'];
  sampling: ToolCallRunConfig['sampling']['policy'];
}
