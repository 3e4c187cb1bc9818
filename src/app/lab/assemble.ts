/**
 * The parts of a live run, put together: the policy worker (reloaded after a device loss,
 * checkpointing each step's adapter) or a policy server's client (RemotePolicyService), the judge, user and evaluator services (the step judge on
 * the tool-call track), the run's slot in storage (a new row, or the resumed one at its last saved
 * step) and the RunLoop (ToolCallRunLoop) over them.
 * A failure on the way ends what was made before it, so no worker or lock outlives it.
 */
import type { RunRecord } from '../../rl/records';
import { createScenario } from '../../sims/scenarios/index';
import type { RunInfo, RunStore } from '../../storage/index';
import { isRemotePolicy, isToolCallConfig, type AnyRunConfig, type RunConfig, type ToolCallRunConfig } from '../../runtime/run-config';
import { RemotePolicyService } from '../../runtime/remote-policy';
import type { RunLoopCore } from '../../runtime/loop-core';
import type { RecordSink } from '../../runtime/loop-types';
import type { PolicyService } from '../../runtime/policy-service';
import { RunLoop, type RunLoopOptions } from '../../runtime/runloop';
import { checkWorkspacePolicy } from '../../runtime/agent-turn';
import { checkToolCallPolicy, ToolCallRunLoop } from '../../runtime/toolcall/index';
import { PolicyClient } from '../../workers/browser/policy-client';
import { pinnedLocation } from '../../workers/browser/policy-source';
import type { ModelLocation, PolicyEvent, PolicyInfo } from '../../workers/browser/policy-host';
import { CheckpointingPolicy } from './checkpoint';
import type { FileEvent } from './downloads';
import { HumanUser, type HumanTurn } from './human-user';
import { claimRunSlot, runInputs, toolCallInputs } from './launch';
import { checkSamePolicy } from './model-files';
import { RecoveringPolicy } from './recovering';
import { apiKeySetting, buildServices, type BuiltServices, type ServiceDeps } from './services';
import { buildToolCallServices } from './services-toolcall';
import type { RoleFiles } from './role-files';

/** Set while a loss pressed in the debug menu is in progress (it is logged when pressed). */
export interface DeviceLoss {
  simulated: boolean;
}

/** What assembling tells the page as it goes, and how the run's writes reach storage. */
export interface AssemblyHooks {
  onPolicyEvent(e: PolicyEvent, loss: DeviceLoss): void;
  onPolicyInfo(info: PolicyInfo): void;
  onDownload(model: string, e: FileEvent): void;
  onLabels(labels: BuiltServices['labels']): void;
  announce(text: string): void;
  onTalkTurn(turn: HumanTurn | null): void;
  /** Runs a storage write until it succeeds (DurableWrites). */
  durably<T>(write: () => Promise<T>): Promise<T>;
  loop: Pick<RunLoopOptions, 'onRecord' | 'onSnapshot' | 'onProgress'>;
}

/** A resumed run: its row and the records it has so far. */
export interface Resuming {
  info: RunInfo;
  records: readonly RunRecord[];
}

export interface LiveRun {
  runId: string;
  /** The personal track's RunLoop or the tool-call track's ToolCallRunLoop. */
  loop: RunLoopCore;
  /** The policy worker; null for a policy on a server (RemotePolicyService), which has none here. */
  policy: PolicyClient | null;
  /** The person, when they play the user (talk yourself). */
  human: HumanUser | null;
  loss: DeviceLoss;
  resume: RunLoopOptions['resume'];
  /** Ends the policy and role workers and releases the run's lock. */
  close(): void;
}

/** What differs between the tracks: the roles' services, the problems and the loop over them. */
interface TrackParts {
  labels: BuiltServices['labels'];
  sources: BuiltServices['sources'];
  human: HumanUser | null;
  dispose(): void;
  loop(policy: PolicyService, sink: RecordSink, options: RunLoopOptions): RunLoopCore;
}

async function personalParts(config: RunConfig, deps: ServiceDeps, hooks: AssemblyHooks): Promise<TrackParts> {
  const built = await buildServices(config, deps);
  try {
    const { scenario, problems } = await runInputs(config);
    const human = scenario.persona === null ? new HumanUser((t) => hooks.onTalkTurn(t)) : null;
    return {
      ...built,
      human,
      loop: (policy, sink, options) => new RunLoop(config, { ...built.services, policy, user: human ?? built.services.user }, problems, sink, options),
    };
  } catch (e) {
    built.dispose();
    throw e;
  }
}

/** GSM8K with the calculator: the step judge, the training and held-out problems, the ToolCallRunLoop. */
async function toolCallParts(config: ToolCallRunConfig, deps: ServiceDeps): Promise<TrackParts> {
  const built = await buildToolCallServices(config, deps);
  try {
    const problems = await toolCallInputs(config);
    return { ...built, human: null, loop: (policy, sink, options) => new ToolCallRunLoop(config, { policy, judge: built.judge }, problems, sink, options) };
  } catch (e) {
    built.dispose();
    throw e;
  }
}

export async function assembleRun(
  store: RunStore,
  config: AnyRunConfig,
  location: ModelLocation,
  resuming: Resuming | null,
  hooks: AssemblyHooks,
  roleFiles: RoleFiles = {},
): Promise<LiveRun> {
  let policy: PolicyClient | null = null;
  let dispose = () => {};
  let release: (() => void) | null = null;
  try {
    const backend = config.models.policy.backend ?? 'webgpu';
    const loss: DeviceLoss = { simulated: false };
    const served = isToolCallConfig(config) || !isRemotePolicy(config.models.policy) ? null : config.models.policy;
    // The server generates, judges and trains: nothing loads here, and its key stays in settings.
    const remote = served && new RemotePolicyService(served, { apiKey: await store.getSetting<string>(apiKeySetting(served.url)) });
    let recovering: RecoveringPolicy | null = null;
    // What the run records of the policy it loaded: none of either for a policy on a server.
    let loadedPolicy: { files: Record<string, string>; commit: string | null } = { files: {}, commit: null };
    if (!remote) {
      const client = PolicyClient.create((e) => {
        if (e.type === 'device-lost') recovering?.deviceLost();
        hooks.onPolicyEvent(e, loss);
      });
      policy = client;
      recovering = new RecoveringPolicy(client);
      const info = await client.load({
        location,
        backend,
        // Absent in runs from before weight formats: the engine's default, which they loaded.
        weightFormat: config.models.policy.weightFormat,
        preset: config.preset,
        seed: config.seed,
        temperature: config.sampling.policy.temperature,
        replies: isToolCallConfig(config) ? undefined : createScenario(config.scenario).baseModelReplies,
      });
      hooks.onPolicyInfo(info);
      if (isToolCallConfig(config)) checkToolCallPolicy(config.models.policy.model, info.hasChatTemplate);
      else if (createScenario(config.scenario).workspace) checkWorkspacePolicy(config.models.policy.model, info);
      if (resuming) checkSamePolicy(resuming.info.config, info.files);
      loadedPolicy = info;
    }

    const deps: ServiceDeps = {
      // A frozen copy of the policy reads the commit the policy did.
      policyLocation: pinnedLocation(location, loadedPolicy.commit),
      backend,
      apiKey: (baseUrl) => store.getSetting<string>(apiKeySetting(baseUrl)),
      onProgress: (model, e) => hooks.onDownload(model, e),
      roleFiles,
    };
    hooks.announce(isToolCallConfig(config) ? 'Loading the step judge and the problems…' : 'Loading the judge, user and evaluator…');
    const built = isToolCallConfig(config) ? await toolCallParts(config, deps) : await personalParts(config, deps, hooks);
    dispose = built.dispose;
    // The server judges its turns: the judge chosen here (rules stand in) reads none of them.
    hooks.onLabels(remote ? { ...built.labels, judge: `the server, ${remote.label}` } : built.labels);
    const loaded = policy;
    // The run file says what played each role: library and version, device, model.
    const slot = await claimRunSlot(
      store,
      { ...config, roleSources: built.sources },
      loadedPolicy,
      resuming && {
        ...resuming,
        restore: (adapter, version) => (loaded ? loaded.restore(adapter.files, version) : Promise.resolve()),
      },
    );
    const { runId, resume } = slot;
    release = slot.release;

    const { human } = built;
    const policyService: PolicyService =
      remote ?? new CheckpointingPolicy(recovering!, (version, adapter) => hooks.durably(() => store.saveAdapter(runId, version, adapter)));
    const loop = built.loop(
      policyService,
      { append: (records) => hooks.durably(async () => void (await store.appendMany(runId, records))) },
      { ...hooks.loop, resume },
    );
    const releaseSlot = release;
    const close = () => {
      loaded?.terminate();
      built.dispose();
      releaseSlot();
    };
    return { runId, loop, policy: loaded, human, loss, resume, close };
  } catch (e) {
    policy?.terminate();
    dispose();
    release?.();
    throw e;
  }
}
