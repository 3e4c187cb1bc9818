/**
 * The lab's one controller: the page's state (LabPage) and the live run on top of it: launching
 * and resuming runs, the policy worker and the running RunLoop, and their controls, exposed as
 * Svelte 5 runes state. Components read this state and call its methods; none of them talks to
 * storage or workers directly, so every record the page shows has gone through RunStore first
 * (the loop's onRecord fires after the commit).
 */
import { comparisonProblems, ComparisonQueue, type CompareOptions } from './comparison';
import { configLocation, filesLocation } from './model-location';
import type { RunRecord } from '../../rl/records';
import { copyRun, requestPersistence, type RunInfo } from '../../storage/index';
import { parseAnyRunConfig, type AnyRunConfig } from '../../runtime/run-config';
import type { RunSnapshot } from '../../runtime/runloop';
import type { ModelLocation, PolicyEvent, PolicyInfo } from '../../workers/browser/policy-host';
import { errorText } from '../gpu-adapter';
import { assembleRun, type DeviceLoss, type LiveRun } from './assemble';
import { DownloadTracker, type DownloadRow } from './downloads';
import type { HumanTurn } from './human-user';
import { DurableWrites } from './durable';
import { deviceNotice, endNotice, phaseAfter, recordAnnouncement, type LivePhase } from './live';
import { LabPage } from './page.svelte';
import { askPersistence } from './settings';
import { copyConfig, copyLabel, copyResumeProblem, importedNameSetting } from './resume-copy';
import { nextRunSetup, policyModelName, setupProblems, toAnyRunConfig, type LabSetup } from './setup';

export { PAGES, type Page } from './routing';
export type { LivePhase } from './live';
export type { RunRecords } from './runs.svelte';

export class LabController extends LabPage {
  phase = $state<LivePhase>('idle');
  snapshot = $state.raw<RunSnapshot | null>(null);
  downloads = $state.raw<DownloadRow[]>([]);
  trainProgress = $state.raw<{ done: number; total: number } | null>(null);
  evalProgress = $state.raw<{ done: number; total: number } | null>(null);
  policyInfo = $state.raw<PolicyInfo | null>(null);
  roleLabels = $state.raw<Record<string, string> | null>(null);
  talkTurn = $state.raw<HumanTurn | null>(null);
  /** StorageFullError's message while a run waits for space. */
  storageFull = $state<string | null>(null);
  /** Which run of a method comparison the live run is ("run 2 of 4"); null outside a comparison. */
  comparisonAt = $state.raw<{ run: number; of: number } | null>(null);

  private live: LiveRun | null = null;
  private readonly writes = new DurableWrites((message) => {
    this.storageFull = message;
    this.live?.loop.pause();
  });
  private readonly tracker = new DownloadTracker();
  private readonly comparison = new ComparisonQueue();

  /** Stops timers (tests, and a page that unmounts the lab); a live run is stopped too. */
  override dispose(): void {
    super.dispose();
    this.live?.loop.stop();
  }

  get busy(): boolean {
    return this.live !== null || this.phase === 'loading';
  }

  /** Starts a new run from the setup form. */
  async start(): Promise<void> {
    if (this.busy) return;
    this.comparison.end();
    await this.startSetup($state.snapshot(this.setup) as LabSetup);
    this.afterFormStart();
  }

  /** Once the form's run has started, the form shows the next run's (nextRunSetup). */
  private afterFormStart(): void {
    if (this.liveRunId === null) return;
    const next = nextRunSetup($state.snapshot(this.setup) as LabSetup);
    if (next.label !== this.setup.label || next.scenario !== this.setup.scenario) this.setup = next;
  }

  /**
   * Runs the setup once per trained arm and seed (comparisonSetups, with the other-child control
   * where `options` asks; the tool-call track: once per reward mode), one after another, each
   * overlaid on the ones before.
   */
  async compareMethods(seeds = 1, options: CompareOptions = {}): Promise<void> {
    if (this.busy) return;
    const setup = $state.snapshot(this.setup) as LabSetup;
    const problems = comparisonProblems(setup, options);
    if (problems.length) {
      this.error = problems.join(' ');
      return;
    }
    await this.startSetup(this.comparison.begin(setup, seeds, options));
    this.afterFormStart();
  }

  private async startSetup(setup: LabSetup): Promise<void> {
    this.error = null;
    const problems = setupProblems(setup, { pickedFiles: this.pickedFiles.length, roleFiles: this.roleFiles });
    if (problems.length) {
      this.error = problems.join(' ');
      return;
    }
    const files = this.pickedFiles;
    const fromFiles = setup.policy.source === 'files';
    const policyModel = policyModelName(setup, files);
    const config = toAnyRunConfig(setup, policyModel);
    void this.saver.now(setup);
    const location: ModelLocation = fromFiles ? filesLocation(files) : configLocation(config.models.policy);
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
    let config: AnyRunConfig;
    try {
      config = parseAnyRunConfig(info.config);
    } catch (e) {
      this.error = `This run cannot be resumed: ${errorText(e)}`;
      return;
    }
    const location: ModelLocation = this.needsFiles(info) ? filesLocation(files) : configLocation(config.models.policy);
    await this.launch(config, location, info);
  }

  /**
   * Resumes an imported run as a new one: a copy of its records and last adapter (the import
   * stays as its file had it) that trains on to `steps` with the config and seeds it recorded.
   */
  async resumeCopy(id: string, steps: number, files: File[] = []): Promise<void> {
    if (this.busy) return;
    this.error = null;
    const info = await this.store.getRun(id);
    if (!info?.readOnly) {
      this.error = 'Only an imported run is resumed as a copy; resume this one from its own row.';
      return;
    }
    const logged = await this.store.records(id, { kind: 'train_step' });
    const progress = {
      steps: logged.length,
      trained: logged.some((r) => r.record.skipped === null),
      hasAdapter: (await this.store.adapterVersions(id)).length > 0,
    };
    const problem = copyResumeProblem(info.config, progress);
    if (problem) {
      this.error = `${info.label}: ${problem}`;
      return;
    }
    if (!Number.isInteger(steps) || steps <= progress.steps) {
      this.error = `${info.label} has done ${progress.steps} steps: give a number of steps above ${progress.steps} to go on.`;
      return;
    }
    if (this.needsFiles(info) && files.length === 0) {
      this.error = 'This run\u2019s policy came from a model folder: pick the same folder to resume it.';
      return;
    }
    let copy: string;
    try {
      const name = await this.store.getSetting<string>(importedNameSetting(id));
      copy = await copyRun(this.store, id, { label: copyLabel(info.label, typeof name === 'string' ? name : null), config: copyConfig(info.config, steps) });
    } catch (e) {
      this.error = `Could not copy ${info.label} to resume it: ${errorText(e)}`;
      return;
    }
    await this.refreshRuns();
    await this.resumeRun(copy, files);
  }

  private async launch(config: AnyRunConfig, location: ModelLocation, resuming: RunInfo | null): Promise<void> {
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
    } else {
      // The Run page shows the run being started, not the one that was open before it.
      this.openRun = null;
      this.records = [];
      // Runs ticked for comparison belong to the run they were ticked on; a comparison overlays its own.
      await this.library.compareWith([]);
    }
    this.go('run');
    // Not awaited: Firefox asks the person, and the run need not wait for their answer.
    void this.askPersistence();

    let run: LiveRun | null = null;
    try {
      run = await assembleRun(
        this.store,
        config,
        location,
        resuming && { info: resuming, records: this.records },
        {
          onPolicyEvent: (e, loss) => this.onPolicyEvent('policy', e, loss),
          onPolicyInfo: (info) => (this.policyInfo = info),
          onDownload: (model, e) => (this.downloads = this.tracker.update(model, e)),
          onLabels: (labels) => (this.roleLabels = labels),
          announce: (text) => this.announce(text),
          onTalkTurn: (turn) => (this.talkTurn = turn),
          durably: (write) => this.durably(write),
          loop: {
            onRecord: (r) => this.onRecord(r),
            onSnapshot: (s) => this.onSnapshot(s),
            onProgress: (p) => {
              // Training reports the 0-based micro-batch it starts; evaluation the problems done.
              if (p.phase === 'train') this.trainProgress = { done: p.done, total: p.total };
              else this.evalProgress = p.done >= p.total ? null : { done: p.done, total: p.total };
            },
          },
        },
        this.roleFiles,
      );
      const { runId, loop } = run;
      const live = run;
      if (!resuming) this.records = [];
      this.feed.reset(this.records);
      this.library.remember(runId);
      this.openRun = (await this.store.getRun(runId)) ?? null;
      this.keepOpen(runId);
      this.live = run;
      this.liveRunId = runId;
      // The runs of the comparison so far are overlaid on this one's charts.
      if (this.comparison.active && !resuming) {
        await this.library.compareWith(this.comparison.add(runId));
        this.comparisonAt = this.comparison.position;
      }
      this.phase = 'running';
      // A resumed loop's first record says where it went on and what it left behind (recordAnnouncement).
      if (!resuming) this.announce('Run started.');
      await this.refreshRuns();
      // The loop itself reports a snapshot every second (RunLoopOptions.snapshotEveryMs).
      void loop
        .run()
        .then(async (result) => {
          await this.store.setStatus(runId, result.status === 'finished' ? 'finished' : 'stopped').catch(() => {});
          const notice = endNotice(result);
          this.announce(notice.text);
          if (notice.endsComparison) this.comparison.end();
        })
        .catch(async (e) => {
          this.comparison.end();
          this.error = `The run failed: ${errorText(e)}`;
          await this.store.setStatus(runId, 'stopped').catch(() => {});
        })
        .finally(() => {
          this.finish(live);
          const next = this.comparison.next();
          if (next) void this.startSetup(next);
        });
    } catch (e) {
      this.comparison.end();
      this.comparisonAt = null;
      this.error = `Could not start the run: ${errorText(e)}`;
      run?.close();
      this.live = null;
      this.liveRunId = null;
      this.phase = 'idle';
      this.announce('');
      // Back to the form that made it, to change what failed (a resume stays on its run).
      if (!resuming) this.go('setup');
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

  private finish(run: LiveRun): void {
    this.feed.flush();
    if (this.live) this.snapshot = this.live.loop.snapshot();
    const id = this.liveRunId;
    if (id) this.library.remember(id, this.feed.published());
    this.live = null;
    this.liveRunId = null;
    this.phase = 'idle';
    this.comparisonAt = null;
    this.trainProgress = null;
    this.evalProgress = null;
    this.talkTurn = null;
    run.close();
    void this.refreshRuns();
  }

  private onPolicyEvent(model: string, e: PolicyEvent, state: DeviceLoss): void {
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
    // The person chose to stop: the comparison ends even if this run finishes before the stop lands.
    this.comparison.end();
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
    // A policy on a server has no device here to lose.
    if (!live?.policy) return;
    const policy = live.policy;
    live.loss.simulated = true;
    await live.loop.event('device_lost', 'simulated GPU device loss (debug menu): the device was destroyed on purpose');
    try {
      await policy.simulateDeviceLoss();
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
