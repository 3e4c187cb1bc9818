/**
 * What the lab page shows apart from a live run: the page and the setup form, the run library
 * (list, open run, comparison, rename and delete), run files in and out, settings, and the lines
 * the page says. LabController adds the live run on top; components hold that one object.
 */
import { policyServerOf } from './policy-place';
import { exportRun, importRun, RunStore, type RunInfo } from '../../storage/index';
import type { RunRecord } from '../../rl/records';
import { parseAnyRunConfig, type AnyRunConfig } from '../../runtime/run-config';
import { errorText } from '../gpu-adapter';
import { RecordFeed } from './live';
import type { PersistenceAnswer } from './persistence';
import { hashFor, parseHash, type Page } from './routing';
import { fileDigest, importedCopySetting } from './import-copies';
import { isLocalPath } from './model-location';
import { importedNameSetting } from './resume-copy';
import { adapterFiles, download, importedMessage, runFileName, samplesFile } from './run-files';
import { RunLibrary, type RunRecords } from './runs.svelte';
import { hasApiKey, loadSettings, setApiKey, SetupSaver } from './settings';
import { defaultSetup, endsWithTab, type LabSetup } from './setup';

/** The settings key of the run open last, which the Run tab opens again after a reload. */
const OPEN_RUN_KEY = 'lab.openRun';
import type { RoleFiles } from './role-files';

export class LabPage {
  page = $state<Page>('setup');
  ready = $state(false);
  /** null until probed; decides the default backend. */
  webgpu = $state<boolean | null>(null);
  setup = $state<LabSetup>(defaultSetup());
  /** The policy's picked folder (File objects cannot be remembered across reloads). */
  pickedFiles = $state.raw<File[]>([]);
  /** Folders picked for roles on transformers.js, by role (not remembered either). */
  roleFiles = $state.raw<RoleFiles>({});

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

  /** The live run's id; null while none runs. */
  liveRunId = $state<string | null>(null);

  /** One polite line for the aria-live status region. */
  announcement = $state('');
  error = $state<string | null>(null);
  /** The browser's answer to navigator.storage.persist() when the last run started; null before any. */
  persistence = $state.raw<PersistenceAnswer | null>(null);

  readonly store: RunStore;
  /** The live run's records as the page shows them, published in batches. */
  protected readonly feed = new RecordFeed((records) => {
    if (this.openRun?.id === this.liveRunId) this.records = records;
  });
  protected readonly saver: SetupSaver;

  constructor(store: RunStore = new RunStore()) {
    this.store = store;
    this.saver = new SetupSaver(store);
    this.library = new RunLibrary(store, () => (this.liveRunId ? { id: this.liveRunId, records: () => this.feed.published() } : null));
  }

  /** Stops timers (tests, and a page that unmounts the lab). */
  dispose(): void {
    this.saver.cancel();
    this.feed.cancel();
  }

  // ---- start-up and navigation ----

  async init(options: { webgpu: boolean }): Promise<void> {
    this.webgpu = options.webgpu;
    try {
      await this.store.open();
      const report = await this.store.markInterruptedOnStartup({ endsWithTab });
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
    else {
      this.go(route.page);
      // The Run tab with no run open (after a reload on another page): the run last open, rather than "No run open".
      if (route.page === 'run' && !this.openRun) await this.reopenLast();
    }
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

  /** Keeps which run is open, for the Run tab after a reload; losing it only loses that convenience. */
  protected keepOpen(id: string): void {
    void this.store.setSetting(OPEN_RUN_KEY, id).catch(() => {});
  }

  /** Opens the run that was open last (kept in the settings store), where it still exists. */
  private async reopenLast(): Promise<void> {
    const nav = this.navigations;
    const id = await this.store.getSetting<string>(OPEN_RUN_KEY).catch(() => undefined);
    // Only if nothing moved meanwhile (a run starting, another page).
    if (typeof id === 'string' && nav === this.navigations && !this.openRun && this.page === 'run' && this.runs.some((r) => r.id === id)) await this.open(id);
  }

  protected announce(text: string): void {
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

  protected loadRecords(id: string): Promise<RunRecord[]> {
    return this.library.loadRecords(id);
  }

  /** Opens a run on the Run page (live, stored or imported). */
  async open(id: string): Promise<void> {
    const nav = ++this.navigations;
    try {
      await this.library.open(id);
      this.keepOpen(id);
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

  /**
   * Imports a .nsrun file as a read-only run and opens it; a file imported before opens the copy
   * made then. Runs ticked for comparison are unticked: they belong to the run they were ticked on.
   *
   * @returns the run opened and whether this import made it; null when the import failed (said in `error`)
   */
  async importFile(file: File): Promise<{ id: string; copied: boolean } | null> {
    this.error = null;
    this.announce(`Importing ${file.name}…`);
    try {
      const digest = await fileDigest(file);
      const earlier = await this.store.getSetting<string>(importedCopySetting(digest));
      const existing = typeof earlier === 'string' ? await this.store.getRun(earlier) : undefined;
      await this.library.compareWith([]);
      if (existing) {
        await this.open(existing.id);
        this.announce(`${file.name} was imported before: this is that copy, “${existing.label}”.`);
        return { id: existing.id, copied: false };
      }
      const id = await importRun(this.store, file);
      await this.store.setSetting(importedCopySetting(digest), id);
      await this.store.setSetting(importedNameSetting(id), file.name);
      await this.refreshRuns();
      await this.open(id);
      this.announce(importedMessage(file.name, this.openRun?.integrity));
      return { id, copied: true };
    } catch (e) {
      this.error = `Could not import ${file.name}: ${errorText(e)}`;
      this.announce('');
      return null;
    }
  }

  /**
   * Whether a stored run can continue: interrupted by a reload, paused, or stopped early. A policy
   * on a server cannot: the server holds what it learned, and no checkpoint of it is here.
   */
  canResume(info: RunInfo): boolean {
    return (
      !info.readOnly &&
      info.id !== this.liveRunId &&
      (info.status === 'interrupted' || info.status === 'paused' || info.status === 'stopped') &&
      !policyServerOf(info.config)
    );
  }

  /**
   * Runs whose policy came from picked files need those files again to resume, and so do runs
   * whose policy the command line loaded from a folder on its machine (an imported run file's).
   */
  needsFiles(info: RunInfo): boolean {
    const config = configOf(info);
    return config?.lab?.policySource === 'files' || (config !== null && isLocalPath(config.models.policy.model));
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
