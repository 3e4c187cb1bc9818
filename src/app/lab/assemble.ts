/**
 * The parts of a live run, put together: the policy worker (reloaded after a device loss,
 * checkpointing each step's adapter), the judge, user and evaluator services, the run's slot in
 * storage (a new row, or the resumed one at its last saved step) and the RunLoop over them.
 * A failure on the way ends what was made before it, so no worker or lock outlives it.
 */
import type { RunRecord } from '../../rl/records';
import type { RunInfo, RunStore } from '../../storage/index';
import type { RunConfig } from '../../runtime/run-config';
import { RunLoop, type RunLoopOptions } from '../../runtime/runloop';
import { PolicyClient } from '../../workers/browser/policy-client';
import type { ModelLocation, PolicyEvent, PolicyInfo } from '../../workers/browser/policy-host';
import { CheckpointingPolicy } from './checkpoint';
import type { FileEvent } from './downloads';
import { HumanUser, type HumanTurn } from './human-user';
import { claimRunSlot, runInputs } from './launch';
import { checkSamePolicy } from './model-files';
import { RecoveringPolicy } from './recovering';
import { apiKeySetting, buildServices, type BuiltServices } from './services';
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
  loop: RunLoop;
  policy: PolicyClient;
  /** The person, when they play the user (talk yourself). */
  human: HumanUser | null;
  loss: DeviceLoss;
  resume: RunLoopOptions['resume'];
  /** Ends the policy and role workers and releases the run's lock. */
  close(): void;
}

export async function assembleRun(
  store: RunStore,
  config: RunConfig,
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
    let recovering: RecoveringPolicy | null = null;
    policy = PolicyClient.create((e) => {
      if (e.type === 'device-lost') recovering?.deviceLost();
      hooks.onPolicyEvent(e, loss);
    });
    recovering = new RecoveringPolicy(policy);
    const info = await policy.load({ location, backend, preset: config.preset, seed: config.seed });
    hooks.onPolicyInfo(info);
    if (resuming) checkSamePolicy(resuming.info.config, info.files);

    hooks.announce('Loading the judge, user and evaluator…');
    const built = await buildServices(config, {
      policyLocation: location,
      backend,
      apiKey: (baseUrl) => store.getSetting<string>(apiKeySetting(baseUrl)),
      onProgress: (model, e) => hooks.onDownload(model, e),
      roleFiles,
    });
    dispose = built.dispose;
    hooks.onLabels(built.labels);
    const { scenario, problems } = await runInputs(config);
    const loaded = policy;
    // The run file says what played each role: library and version, device, model.
    const slot = await claimRunSlot(store, { ...config, roleSources: built.sources }, info.files, resuming && {
      ...resuming,
      restore: (adapter, version) => loaded.restore(adapter.files, version),
    });
    const { runId, resume } = slot;
    release = slot.release;

    const human = scenario.persona === null ? new HumanUser((t) => hooks.onTalkTurn(t)) : null;
    const checkpointing = new CheckpointingPolicy(recovering, (version, files) => hooks.durably(() => store.saveAdapter(runId, version, files)));
    const loop = new RunLoop(
      config,
      { ...built.services, policy: checkpointing, user: human ?? built.services.user },
      problems,
      { append: (records) => hooks.durably(async () => void (await store.appendMany(runId, records))) },
      { ...hooks.loop, resume },
    );
    const releaseSlot = release;
    const close = () => {
      loaded.terminate();
      built.dispose();
      releaseSlot();
    };
    return { runId, loop, policy, human, loss, resume, close };
  } catch (e) {
    policy?.terminate();
    dispose();
    release?.();
    throw e;
  }
}
