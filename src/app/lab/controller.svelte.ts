/**
 * The lab's one controller: it holds the RunStore, the policy worker and the running RunLoop,
 * and exposes what the page shows as Svelte 5 runes state. Components read this state and call
 * its methods; none of them talks to storage or workers directly, so every record the page
 * shows has gone through RunStore first (the loop's onRecord fires after the commit).
 */
import { comparisonSetups } from './comparison';
import { hubLocation } from './model-location';
import type { RunRecord } from '../../rl/records';
import { exportRun, importRun, requestPersistence, RunStore, type RunInfo } from '../../storage/index';
import { parseAnyRunConfig, parseRunConfig, type AnyRunConfig, type RunConfig } from '../../runtime/run-config';
import { RunLoop, type RunSnapshot } from '../../runtime/runloop';
import { PolicyClient } from '../../workers/browser/policy-client';
import type { ModelLocation, PolicyEvent, PolicyInfo } from '../../workers/browser/policy-host';
import { errorText } from '../gpu-adapter';
import { CheckpointingPolicy } from './checkpoint';
import { RecoveringPolicy } from './recovering';
import { DownloadTracker, type DownloadRow } from './downloads';
import { HumanUser, type HumanTurn } from './human-user';
import { DurableWrites } from './durable';
import { claimRunSlot, runInputs } from './launch';
import { RunLibrary, type RunRecords } from './runs.svelte';
import { deviceNotice, endNotice, phaseAfter, RecordFeed, recordAnnouncement, type LivePhase } from './live';
import { checkSamePolicy } from './model-files';
import type { PersistenceAnswer } from './persistence';
import { hashFor, parseHash, type Page } from './routing';
import { adapterFiles, download, importedMessage, runFileName, samplesFile } from './run-files';
import { apiKeySetting, buildServices } from './services';
import { askPersistence, hasApiKey, loadSettings, setApiKey, SetupSaver } from './settings';
import { defaultSetup, policyModelName, setupProblems, toRunConfig, type LabSetup } from './setup';

export { PAGES, type Page } from './routing';
export type { LivePhase } from './live';

export type { RunRecords } from './runs.svelte';


interface Live {
  runId: string;
  loop: RunLoop;
  policy: PolicyClient;
  human: HumanUser | null;
  /** Set while a loss pressed in the debug menu is in progress (it is logged when pressed). */
  loss: { simulated: boolean };
  dispose: () => void;
}

export class LabController {
  page = $state<Page>('setup');
  ready = $state(false);
  /** null until probed; decides the default backend. */
  webgpu = $state<boolean | null>(null);
  setup = $state<LabSetup>(defaultSetup());
  /** The policy's picked folder (File objects cannot be remembered across reloads). */
  pickedFiles = $state.raw<File[]>([]);

  /** The runs, the open run and its records, the compared runs, and the storage actions on them. */
  readonly library: RunLibrary;
  get runs(): RunInfo[] {
    return this.library.runs;
  }
  get openRun(): RunInfo | null {
    return this.library.openRun;
  }
  set openRun(info: RunInfo | null) {
    this.library.openRun = info;
  }
  get records(): RunRecord[] {
    return this.library.records;
  }
  set records(records: RunRecord[]) {
    this.library.records = records;
  }
  get compareIds(): string[] {
    return this.library.compareIds;
  }
  get compared(): RunRecords[] {
    return this.library.compared;
  }

  liveRunId = $state<string | null>(null);
  phase = $state<LivePhase>('idle');
  snapshot = $state.raw<RunSnapshot | null>(null);
  downloads = $state.raw<DownloadRow[]>([]);
  trainProgress = $state.raw<{ done: number; total: number } | null>(null);
  evalProgress = $state.raw<{ done: number; total: number } | null>(null);
  policyInfo = $state.raw<PolicyInfo | null>(null);
  roleLabels = $state.raw<Record<string, string> | null>(null);
  talkTurn = $state.raw<HumanTurn | null>(null);

  /** One polite line for the aria-live status region. */
  announcement = $state('');
  error = $state<string | null>(null);
  /** StorageFullError's message while a run waits for space. */
  storageFull = $state<string | null>(null);
  /** The browser's answer to navigator.storage.persist() when the last run started; null before any. */
  persistence = $state.raw<PersistenceAnswer | null>(null);

  readonly store: RunStore;
  private live: Live | null = null;
  private readonly feed = new RecordFeed((records) => {
    if (this.openRun?.id === this.liveRunId) this.records = records;
  });
  private readonly writes = new DurableWrites((message) => {
    this.storageFull = message;
    this.live?.loop.pause();
  });
  private readonly tracker = new DownloadTracker();
  private readonly saver: SetupSaver;

  constructor(store: RunStore = new RunStore()) {
    this.store = store;
    this.saver = new SetupSaver(store);
    this.library = new RunLibrary(store, () => (this.liveRunId ? { id: this.liveRunId, records: () => this.feed.published() } : null));
  }

  /** Stops timers (tests, and a page that unmounts the lab); a live run is stopped too. */
  dispose(): void {
    this.saver.cancel();
    this.feed.cancel();
    this.live?.loop.stop();
  }

  // ---- start-up and navigation ----

  async init(options: { webgpu: boolean }): Promise<void> {
    this.webgpu = options.webgpu;
    try {
      await this.store.open();
      const report = await this.store.markInterruptedOnStartup();
      ({ setup: this.setup, persistence: this.persistence } = await loadSettings(this.store, options.webgpu));
      await this.refreshRuns();
      if (report.interrupted.length) this.announce(`${report.interrupted.length} run(s) were interrupted when the page closed; resume them from Runs.`);
    } catch (e) {
      this.error = `Could not open the browser's run storage: ${errorText(e)}`;
    }
    this.ready = true;
  }

  /** Page and open run from the URL hash ("#/run/<id>"), so reload and Back land where they were. */
  async fromHash(hash: string): Promise<void> {
    const route = parseHash(hash);
    if (!route) return;
    if (route.runId !== undefined && route.runId !== this.openRun?.id) await this.open(route.runId);
    else this.go(route.page);
  }

  hash(): string {
    return hashFor(this.page, this.openRun?.id);
  }

  /** Counts navigations, so a run that finishes opening after the person went elsewhere does not pull them back. */
  private navigations = 0;

  go(page: Page): void {
    this.navigations++;
    this.page = page;
  }

  private announce(text: string): void {
    this.announcement = text;
  }

  /** Remembers the form (debounced): the next visit starts from the same choices. */
  rememberSetup(): void {
    if (!this.ready) return;
    this.saver.later($state.snapshot(this.setup));
  }

  setApiKey(baseUrl: string, key: string): Promise<void> {
    return setApiKey(this.store, baseUrl, key);
  }

  hasApiKey(baseUrl: string): Promise<boolean> {
    return hasApiKey(this.store, baseUrl);
  }

  // ---- runs ----

  refreshRuns(): Promise<void> {
    return this.library.refresh();
  }

  private loadRecords(id: string): Promise<RunRecord[]> {
    return this.library.loadRecords(id);
  }

  /** Opens a run on the Run page (live, stored or imported). */
  async open(id: string): Promise<void> {
    const nav = ++this.navigations;
    try {
      await this.library.open(id);
      if (nav === this.navigations) this.page = 'run';
    } catch (e) {
      this.error = errorText(e);
    }
  }

  toggleCompare(id: string, on: boolean): Promise<void> {
    return this.library.toggleCompare(id, on);
  }

  async rename(id: string, label: string): Promise<void> {
    const clean = await this.library.rename(id, label);
    if (clean) this.announce(`Renamed to ${clean}.`);
  }

  async remove(id: string): Promise<void> {
    if (id === this.liveRunId) {
      this.error = 'Stop the run before deleting it.';
      return;
    }
    await this.library.remove(id);
    this.announce('Run deleted.');
  }

  async exportFile(id: string): Promise<void> {
    const info = await this.store.getRun(id);
    download({ blob: await exportRun(this.store, id, { includeAdapter: true }), name: runFileName(info?.label ?? id) });
    this.announce(`Exported ${info?.label ?? id}.`);
  }

  /** The last adapter in the PEFT layout: adapter_model.safetensors and adapter_config.json. */
  async exportAdapter(id: string): Promise<void> {
    const adapter = await this.store.latestAdapter(id);
    if (!adapter) {
      this.error = 'This run has no saved adapter yet: adapters are saved after each training step.';
      return;
    }
    for (const file of adapterFiles(adapter)) download(file);
    this.announce(`Exported the adapter of version ${adapter.version}.`);
  }

  /** Training samples as TRL-style JSONL rows. */
  async exportSamples(id: string): Promise<void> {
    const info = await this.store.getRun(id);
    const file = samplesFile(await this.loadRecords(id), info?.config, info?.label ?? id);
    download(file);
    this.announce(`Exported ${file.rows} training samples.`);
  }

  /** Imports a .nsrun file as a read-only run and opens it. */
  async importFile(file: File): Promise<void> {
    this.error = null;
    this.announce(`Importing ${file.name}…`);
    try {
      const id = await importRun(this.store, file);
      await this.refreshRuns();
      await this.open(id);
      this.announce(importedMessage(file.name, this.openRun?.integrity));
    } catch (e) {
      this.error = `Could not import ${file.name}: ${errorText(e)}`;
      this.announce('');
    }
  }

  /** Whether a stored run can continue: interrupted by a reload, paused, or stopped early. */
  canResume(info: RunInfo): boolean {
    return !info.readOnly && info.id !== this.liveRunId && (info.status === 'interrupted' || info.status === 'paused' || info.status === 'stopped');
  }

  /** Runs whose policy came from picked files need those files again to resume. */
  needsFiles(info: RunInfo): boolean {
    return configOf(info)?.lab?.policySource === 'files';
  }

  // ---- the live run ----

  get busy(): boolean {
    return this.live !== null || this.phase === 'loading';
  }

  /** The runs still to start of a method comparison, and the ids of those already started. */
  comparison = $state.raw<{ pending: LabSetup[]; started: string[] } | null>(null);

  /** Starts a new run from the setup form. */
  async start(): Promise<void> {
    if (this.busy) return;
    this.comparison = null;
    await this.startSetup($state.snapshot(this.setup) as LabSetup);
  }

  /** Runs the setup once per method, one after another, each overlaid on the ones before. */
  async compareMethods(): Promise<void> {
    if (this.busy) return;
    const [first, ...rest] = comparisonSetups($state.snapshot(this.setup) as LabSetup);
    this.comparison = { pending: rest, started: [] };
    await this.startSetup(first);
  }

  private async startNextCompared(): Promise<void> {
    const c = this.comparison;
    if (!c?.pending.length) {
      this.comparison = null;
      return;
    }
    const [next, ...rest] = c.pending;
    this.comparison = { ...c, pending: rest };
    await this.startSetup(next);
  }

  private async startSetup(setup: LabSetup): Promise<void> {
    this.error = null;
    const problems = setupProblems(setup, { pickedFiles: this.pickedFiles.length });
    if (problems.length) {
      this.error = problems.join(' ');
      return;
    }
    const files = this.pickedFiles;
    const fromFiles = setup.policy.source === 'files';
    const policyModel = policyModelName(setup, files);
    const config = toRunConfig(setup, policyModel);
    void this.saver.now(setup);
    const location: ModelLocation = fromFiles ? { kind: 'files', files } : hubLocation(policyModel);
    await this.launch(config, location, null);
  }

  /** Continues a stored run: the adapter of its last saved step, the samples that waited, new sessions after the old ones. */
  async resumeRun(id: string, files: File[] = []): Promise<void> {
    if (this.busy) return;
    this.error = null;
    const info = await this.store.getRun(id);
    if (!info || !this.canResume(info)) {
      this.error = 'This run cannot be resumed.';
      return;
    }
    if (this.needsFiles(info) && files.length === 0) {
      this.error = 'This run\u2019s policy came from picked files: pick the same model folder to resume it.';
      return;
    }
    let config: RunConfig;
    try {
      config = parseRunConfig(info.config);
    } catch (e) {
      this.error = `This run cannot be resumed: ${errorText(e)}`;
      return;
    }
    const location: ModelLocation = this.needsFiles(info) ? { kind: 'files', files } : hubLocation(config.models.policy.model);
    await this.launch(config, location, info);
  }

  private async launch(config: RunConfig, location: ModelLocation, resuming: RunInfo | null): Promise<void> {
    this.phase = 'loading';
    this.tracker.clear();
    this.downloads = [];
    this.trainProgress = null;
    this.evalProgress = null;
    this.snapshot = null;
    this.policyInfo = null;
    this.roleLabels = null;
    this.talkTurn = null;
    this.storageFull = null;
    this.announce(resuming ? `Resuming ${resuming.label}: loading the policy…` : 'Loading the policy model…');
    if (resuming) {
      this.openRun = resuming;
      this.records = await this.loadRecords(resuming.id);
    }
    this.go('run');
    // Not awaited: Firefox asks the person, and the run need not wait for their answer.
    void this.askPersistence();

    let policy: PolicyClient | null = null;
    let dispose = () => {};
    let release: (() => void) | null = null;
    try {
      const backend = config.models.policy.backend ?? 'webgpu';
      const loss = { simulated: false };
      let recovering: RecoveringPolicy | null = null;
      policy = PolicyClient.create((e) => {
        if (e.type === 'device-lost') recovering?.deviceLost();
        this.onPolicyEvent('policy', e, loss);
      });
      recovering = new RecoveringPolicy(policy);
      this.policyInfo = await policy.load({ location, backend, preset: config.preset, seed: config.seed });
      if (resuming) checkSamePolicy(resuming.config, this.policyInfo.files);

      this.announce('Loading the judge, user and evaluator…');
      const built = await buildServices(config, {
        policyLocation: location,
        backend,
        apiKey: (baseUrl) => this.store.getSetting<string>(apiKeySetting(baseUrl)),
        onProgress: (model, e) => (this.downloads = this.tracker.update(model, e)),
      });
      dispose = built.dispose;
      this.roleLabels = built.labels;
      const { scenario, problems } = await runInputs(config);
      const loaded = policy;
      const slot = await claimRunSlot(this.store, config, this.policyInfo.files, resuming && {
        info: resuming,
        records: this.records,
        restore: (adapter, version) => loaded.restore(adapter.files, version),
      });
      const { runId, resume } = slot;
      release = slot.release;
      if (!resuming) this.records = [];
      this.feed.reset(this.records);
      this.library.remember(runId);
      this.openRun = (await this.store.getRun(runId)) ?? null;

      const human = scenario.persona === null ? new HumanUser((t) => (this.talkTurn = t)) : null;
      const checkpointing = new CheckpointingPolicy(recovering, (version, files) => this.durably(() => this.store.saveAdapter(runId, version, files)));
      const loop: RunLoop = new RunLoop(
        config,
        { ...built.services, policy: checkpointing, user: human ?? built.services.user },
        problems,
        { append: (records) => this.durably(async () => void (await this.store.appendMany(runId, records))) },
        {
          onRecord: (r) => this.onRecord(r),
          onSnapshot: (s) => this.onSnapshot(s),
          onProgress: (p) => {
            // Training reports the 0-based micro-batch it starts; evaluation the problems done.
            if (p.phase === 'train') this.trainProgress = { done: p.done, total: p.total };
            else this.evalProgress = p.done >= p.total ? null : { done: p.done, total: p.total };
          },
          resume,
        },
      );
      const liveRelease = release;
      const livePolicy = policy;
      this.live = { runId, loop, policy, human, loss, dispose };
      this.liveRunId = runId;
      if (this.comparison && !resuming) {
        // The runs of the comparison so far are overlaid on this one's charts.
        const before = this.comparison.started;
        this.comparison = { ...this.comparison, started: [...before, runId] };
        await this.library.compareWith(before);
      }
      this.phase = 'running';
      this.announce(resuming ? `Resumed at step ${resume?.step ?? 0}.` : 'Run started.');
      await this.refreshRuns();
      // The loop itself reports a snapshot every second (RunLoopOptions.snapshotEveryMs).
      void loop
        .run()
        .then(async (result) => {
          await this.store.setStatus(runId, result.status === 'finished' ? 'finished' : 'stopped').catch(() => {});
          const notice = endNotice(result);
          this.announce(notice.text);
          if (notice.endsComparison) this.comparison = null;
        })
        .catch(async (e) => {
          this.comparison = null;
          this.error = `The run failed: ${errorText(e)}`;
          await this.store.setStatus(runId, 'stopped').catch(() => {});
        })
        .finally(() => {
          this.finish(livePolicy, dispose, liveRelease);
          if (this.comparison) void this.startNextCompared();
        });
    } catch (e) {
      this.comparison = null;
      this.error = `Could not start the run: ${errorText(e)}`;
      policy?.terminate();
      dispose();
      release?.();
      this.phase = 'idle';
      this.announce('');
      if (resuming) await this.store.setStatus(resuming.id, resuming.status === 'running' ? 'interrupted' : resuming.status).catch(() => {});
      await this.refreshRuns().catch(() => {});
    }
  }

  /**
   * Asks the browser to keep this origin's data under storage pressure (a best-effort origin
   * can be evicted, runs and all), and keeps its answer for the System page, saved first.
   */
  private async askPersistence(): Promise<void> {
    this.persistence = await askPersistence(this.store, requestPersistence);
  }

  private finish(policy: PolicyClient, dispose: () => void, release: () => void): void {
    this.feed.flush();
    if (this.live) this.snapshot = this.live.loop.snapshot();
    const id = this.liveRunId;
    if (id) this.library.remember(id, this.feed.published());
    this.live = null;
    this.liveRunId = null;
    this.phase = 'idle';
    this.trainProgress = null;
    this.evalProgress = null;
    this.talkTurn = null;
    policy.terminate();
    dispose();
    release();
    void this.refreshRuns();
  }

  private onPolicyEvent(model: string, e: PolicyEvent, state: { simulated: boolean }): void {
    if (e.type === 'progress') {
      this.downloads = this.tracker.update(model, e.progress);
      return;
    }
    const notice = deviceNotice(e, state.simulated);
    if (e.type === 'recovered') state.simulated = false;
    this.announce(notice.text);
    if (notice.log) void this.live?.loop.event(notice.log.kind, notice.log.detail);
  }

  private onRecord(r: RunRecord): void {
    // The milestones a screen-reader user wants to hear about, through the aria-live line.
    if (r.kind === 'train_step') this.trainProgress = null;
    if (r.kind === 'evaluation') this.evalProgress = null;
    const said = recordAnnouncement(r);
    if (said) this.announce(said);
    this.feed.push(r);
  }

  private onSnapshot(s: RunSnapshot): void {
    this.snapshot = s;
    this.phase = phaseAfter(this.phase, s.status);
  }

  /** Runs a storage write until it succeeds, pausing the run while the disk is full (DurableWrites). */
  private durably<T>(write: () => Promise<T>): Promise<T> {
    return this.writes.run(write);
  }

  /** After freeing space: retry the writes that failed and continue the run. */
  retryStorage(): void {
    this.storageFull = null;
    this.writes.retry();
    this.resume();
  }

  pause(): void {
    if (!this.live) return;
    this.live.loop.pause();
    void this.store.setStatus(this.live.runId, 'paused').catch(() => {});
    this.announce('Paused: sessions wait; work already in flight completes.');
  }

  resume(): void {
    if (!this.live || this.storageFull) return;
    this.live.loop.resume();
    void this.store.setStatus(this.live.runId, 'running').catch(() => {});
    this.announce('Resumed.');
  }

  stop(): void {
    if (!this.live) return;
    this.phase = 'stopping';
    this.live.loop.stop();
    // A stop while storage waits would otherwise hang on the waiting write.
    if (this.storageFull) {
      this.storageFull = null;
      this.writes.retry();
    }
    this.announce('Stopping: work in flight is dropped, saved records stay.');
  }

  /** Debug menu: destroys the policy's GPU device to show recovery from the last saved step. */
  async simulateDeviceLoss(): Promise<void> {
    const live = this.live;
    if (!live) return;
    live.loss.simulated = true;
    await live.loop.event('device_lost', 'simulated GPU device loss (debug menu): the device was destroyed on purpose');
    try {
      await live.policy.simulateDeviceLoss();
    } catch (e) {
      live.loss.simulated = false;
      this.error = errorText(e);
    }
  }

  // ---- talk yourself ----

  sendReply(text: string): boolean {
    return this.live?.human?.submit(text) ?? false;
  }

  newConversation(): void {
    this.live?.human?.endConversation();
    this.announce('Conversation ended; write a new first message.');
  }
}

/** A stored run's config, or null when it is not one this app reads (the list still shows the run). */
function configOf(info: RunInfo): AnyRunConfig | null {
  try {
    return parseAnyRunConfig(info.config);
  } catch {
    return null;
  }
}
