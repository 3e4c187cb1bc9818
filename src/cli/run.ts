import { mkdirSync, writeFileSync } from 'node:fs';
import { FILE_LIMITS, InputFileError, readLocalText } from '../models/local-file';
import { join } from 'node:path';
import { turnCount, type RunRecord } from '../rl/records';
import type { StoredAdapter } from '../storage/index';
import type { Backend } from '../gpu/backend';
import { createScenario } from '../sims/scenarios/index';
import type { RecordSink, RunController, RunLoopOptions, RunResult } from '../runtime/loop-types';
import { policyCommit, type PolicyService } from '../runtime/policy-service';
import { loadProblems } from '../runtime/problems';
import { isTrainedArm, TRAINED_ARMS } from '../runtime/arms';
import {
  EXAMPLES,
  exampleConfig,
  isRemotePolicy,
  parseAnyRunConfig,
  RUN_CONFIG_SCHEMA_REF,
  trackOf,
  withoutSecrets,
  type AnyRunConfig,
  type ExampleName,
} from '../runtime/run-config';
import { evaluationDue } from '../runtime/loop-core';
import { fullFinetuneLrWarning } from '../rl/presets';
import { RunLoop } from '../runtime/runloop';
import { createNodeServices, readTextFile, type LoadProgressFor } from '../runtime/services-node';
import { folderWorkspaces } from '../runtime/workspace-node';
import type { WorkspaceFactory } from '../sims/workspace/workspace';
import { ToolCallRunLoop } from '../runtime/toolcall/loop';
import { loadToolCallProblems } from '../runtime/toolcall/problems';
import { createToolCallNodeServices } from '../runtime/toolcall/services-node';
import { resolveWeightFormat } from '../gpu/load';
import {
  createBackend,
  policyFiles,
  QUANTIZE_NOTE,
  QUANTIZE_OPTION,
  QUANTIZE_USAGE,
  REVISION_NOTE,
  REVISION_OPTION,
  REVISION_USAGE,
  revisionOption,
  weightFormatOption,
  BACKEND_USAGE,
  backendOption,
} from './engine';
import { isPositiveInt, number, parse, UsageError } from './args';
import { timeLeft, type CliIo } from './io';
import { progressFor } from './load-progress';
import { FORCE_OPTION, notStdout } from './output';
import { Interrupted, stoppable, type StopSignal } from './signals';
import { withPolicyCommit } from '../runtime/policy-commit';
import { loopResume, resumePlan } from '../runtime/resume-plan';
import { applySets, SET_NOTE, SET_OPTION, SET_USAGE, setValues } from './overrides';
import { journalResumePoint, modelPath, RunJournal, RunJournalError, workspacePath, type RunJournalOptions } from '../runtime/run-journal';

export const usage = `nextstate run --config RUN.json [--out RUN_FILE [--force]] [--steps N] [--policy DIR|ID] ${REVISION_USAGE}
      ${BACKEND_USAGE} ${QUANTIZE_USAGE} ${SET_USAGE} [--json]
      --force replaces a run already at RUN_FILE (its journal, checkpoints and workspace too) once
      the policy has loaded; without it such a run is refused
  nextstate run --resume RUN_FILE [--steps N] [--json]
      continue a stopped, killed or failed run from its last checkpoint, with the config and seeds
      it recorded; --steps may extend it
  nextstate run --example ${EXAMPLES.join('|')} [--method ${TRAINED_ARMS.join('|')}] [--policy DIR|ID] ${REVISION_USAGE} ${QUANTIZE_USAGE}
      print a complete example config (the method's preset included; combined-shuffled is
      Combined with the shuffled-hint control; opd-other-child and combined-other-child, for the
      storyteller, read the hints written for another child); its "$schema" (${RUN_CONFIG_SCHEMA_REF},
      relative to the config's folder, so a config saved at the repository's root) lets an editor
      complete and check it
  ${SET_NOTE}. ${QUANTIZE_NOTE} It replaces the config's models.policy.weightFormat;
  the run file records the format the run loaded. ${REVISION_NOTE} --revision replaces the
  config's models.policy.revision; the run file records the commit a hub policy loaded, which
  --resume, and a run of the recorded config, load again. Every record is on disk (RUN_FILE.journal) once
  it is committed, and RUN_FILE is rewritten after every step. Ctrl-C (SIGINT) or SIGTERM stops at
  the next step and writes the run file, then exits 130 or 143.`;

/**
 * The JSON lines a script follows: one per training step and per evaluation. An evaluation's
 * `score` is its headline number (personalization score, or tool-call accuracy); `scores` has all.
 */
export function eventLine(r: RunRecord): object | null {
  if (r.kind === 'runtime_event' && r.event === 'run_resumed') {
    return { type: 'resumed', step: r.step ?? 0, version: r.version, interrupted: turnCount(r.interrupted), message: r.message };
  }
  if (r.kind === 'train_step') return { type: 'train_step', step: r.step, version: r.version + 1, samples: r.samples, skipped: r.skipped, ...r.stats };
  if (r.kind === 'evaluation') {
    const score = r.scores.score ?? r.scores.accuracy;
    return { type: 'evaluation', name: r.name, step: r.step ?? 0, version: r.version, score, scores: r.scores, n: r.perProblem.length };
  }
  return null;
}

/** The policy of the config's track, loaded with its Node services and problems, and the way to start its run loop. */
async function prepareRun(
  config: AnyRunConfig,
  backend: Backend,
  workspaces: WorkspaceFactory,
  progress?: LoadProgressFor,
): Promise<{ policy: PolicyService; loop: (sink: RecordSink, options: RunLoopOptions) => RunController }> {
  if (config.track === 'toolcall') {
    const services = await createToolCallNodeServices(config, backend, progress);
    const problems = await loadToolCallProblems(config, readTextFile);
    return { policy: services.policy, loop: (sink, options) => new ToolCallRunLoop(config, services, problems, sink, options) };
  }
  const services = await createNodeServices(config, backend, progress);
  const problems = await loadProblems(config, createScenario(config.scenario), readTextFile);
  return { policy: services.policy, loop: (sink, options) => new RunLoop(config, { ...services, workspaces }, problems, sink, options) };
}

/** What a run is called in file names and labels: its scenario, or its track. */
function runName(config: AnyRunConfig): string {
  return config.track === 'toolcall' ? trackOf(config) : config.scenario.id;
}

export async function runCommand(argv: string[], io: CliIo): Promise<void> {
  const v = parse(argv, {
    config: { type: 'string' },
    example: { type: 'string' },
    method: { type: 'string' },
    out: { type: 'string' },
    steps: { type: 'string' },
    policy: { type: 'string' },
    backend: { type: 'string' },
    ...QUANTIZE_OPTION,
    ...REVISION_OPTION,
    resume: { type: 'string' },
    ...FORCE_OPTION,
    ...SET_OPTION,
    json: { type: 'boolean' },
  });
  const weightFormat = weightFormatOption(v);
  const revision = revisionOption(v);
  if (typeof v.example === 'string') {
    if (!EXAMPLES.includes(v.example as ExampleName)) throw new UsageError(`--example must be one of ${EXAMPLES.join(', ')}`);
    const method = String(v.method ?? 'combined');
    if (!isTrainedArm(method)) throw new UsageError(`--method must be one of ${TRAINED_ARMS.join(', ')}`);
    if (v.example === 'toolcall' && method !== 'binary' && v.method !== undefined) {
      throw new UsageError('--method: the toolcall example is always "binary" (its PRM votes are evaluative)');
    }
    const policy = typeof v.policy === 'string' ? v.policy : undefined;
    const example = v.example === 'toolcall' ? exampleConfig('toolcall', policy) : exampleConfig(v.example as ExampleName, policy, method);
    if (weightFormat) example.models.policy.weightFormat = weightFormat;
    if (revision) example.models.policy.revision = revision;
    applySets(example as unknown as Record<string, unknown>, setValues(v));
    io.out(JSON.stringify({ $schema: RUN_CONFIG_SCHEMA_REF, ...parseAnyRunConfig(example) }, null, 2));
    return;
  }
  // From the first event (after the model loaded), so the time left follows the steps' own pace.
  let started: number | undefined;
  let steps = 0;
  const onLine = (line: object) => {
    const event = line as Record<string, unknown>;
    // What a resume did is said whether or not a person watches: the log keeps what it left behind.
    if (event.type === 'resumed') return v.json ? io.out(JSON.stringify(line)) : io.note(String(event.message));
    started ??= Date.now();
    if (v.json) io.out(JSON.stringify(line));
    else io.progress(describe(event, steps, started));
  };
  if (typeof v.resume === 'string') {
    for (const other of ['config', 'out', 'policy', 'revision', 'backend', 'quantize', 'force', 'set'] as const)
      if (v[other] !== undefined) throw new UsageError(`--resume continues the run with the config it recorded; leave out --${other}`);
    const file = notStdout(v.resume, 'resume', 'the run file');
    const more = v.steps === undefined ? undefined : number(v, 'steps', 0, isPositiveInt);
    return report(
      await resumeRunFile(file, { ...(more ? { steps: more } : {}), onLine, onStart: (c) => (steps = c.schedule.steps), loadProgress: progressFor(io) }),
      io,
    );
  }
  if (typeof v.config !== 'string') throw new UsageError('--config RUN.json, --resume RUN_FILE or --example NAME is required');
  // The run file must stay byte-exact (its lines carry their SHA-256), and stdout has the --json events.
  const file = typeof v.out === 'string' ? notStdout(v.out, 'out', 'the run file') : undefined;
  if (v.force && !file) throw new UsageError('--force replaces the run at --out RUN_FILE; give --out');

  let raw: unknown;
  try {
    raw = JSON.parse(readLocalText(v.config, FILE_LIMITS.runConfig));
  } catch (e) {
    throw e instanceof InputFileError ? e : new UsageError(`${v.config}: ${(e as Error).message}`);
  }
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) applySets(raw as Record<string, unknown>, setValues(v));
  const config: AnyRunConfig = parseAnyRunConfig(raw);
  if (isRemotePolicy(config.models.policy) && (v.policy !== undefined || v.backend !== undefined || weightFormat || revision)) {
    throw new UsageError(
      '--policy, --revision, --backend and --quantize load a policy here; this config\'s policy runs on a server (models.policy.kind "server")',
    );
  }
  if (typeof v.policy === 'string') {
    config.models.policy.model = v.policy;
    // The config's revision (or commit) belongs to the model it named.
    delete config.models.policy.revision;
  }
  if (revision) config.models.policy.revision = revision;
  if (typeof v.backend === 'string') config.models.policy.backend = backendOption(v.backend);
  if (weightFormat) config.models.policy.weightFormat = weightFormat;
  config.schedule.steps = number(v, 'steps', config.schedule.steps, isPositiveInt);
  const lrWarning = fullFinetuneLrWarning(config.preset);
  if (lrWarning) io.note(`warning: ${lrWarning}`);

  steps = config.schedule.steps;
  report(await runToFile(config, { file, onLine, replace: v.force === true, loadProgress: progressFor(io) }), io);
}

/** The command's last line: where the records are; a stop by a signal exits as that signal would. */
function report(result: RunToFileResult, io: CliIo): void {
  const written = `${result.records.length} records written to ${result.file}${result.modelDir ? `, the fully fine-tuned model to ${result.modelDir}` : ''}`;
  if (result.signal) throw new Interrupted(result.signal, `stopped by ${result.signal}: ${written}`);
  io.note(`run ${result.status}: ${written}`);
}

export interface RunToFileOptions {
  file?: string;
  /** Replace a run already at `file` (every file of it), once the policy has loaded. */
  replace?: boolean;
  onLine?: (line: object) => void;
  /** The config the run goes with, once its policy is loaded (a resumed run's is the recorded one). */
  onStart?: (config: AnyRunConfig) => void;
  /** Each model load's download and conversion (the command's progress lines). */
  loadProgress?: LoadProgressFor;
}

export interface RunToFileResult {
  status: string;
  /** Every record of the run, those of the runs it resumed included. */
  records: readonly RunRecord[];
  file: string;
  modelDir?: string;
  signal?: StopSignal;
}

/** The run loop failed; its records so far are on disk. */
export class RunFailedError extends Error {
  override name = 'RunFailedError';
}

/**
 * One headless run of a checked config, written as a run file (adapter included) and its
 * journal as it goes (run-journal.ts): what `run` does, and what `reproduce` does once per
 * method and seed.
 *
 * @throws RunJournalError when files of a run are at `file` already (and `replace` is not set)
 * @throws RunFailedError when the loop fails (its records so far are on disk)
 */
export async function runToFile(config: AnyRunConfig, o: RunToFileOptions = {}): Promise<RunToFileResult> {
  const created = Date.now();
  const file = o.file ?? `nextstate-${runName(config)}-${new Date(created).toISOString().replace(/[:.]/g, '-')}.nsrun`;
  if (o.replace) RunJournal.checkReplaceable(file);
  else RunJournal.checkNew(file);
  const backend = await createBackend(config.models.policy.backend ?? 'cpu');
  // The config as run: with the weight format an absent one resolves to, so the file says it.
  config = structuredClone(config);
  const policyModel = config.models.policy;
  if (!isRemotePolicy(policyModel)) policyModel.weightFormat = resolveWeightFormat(policyModel.weightFormat, backend);
  const journalOptions: RunJournalOptions = { snapshotEachStep: true };
  return journaled(config, backend, file, journalOptions, o, async (policy) => {
    // Only now: a policy that fails to load leaves the run that was there as it was.
    if (o.replace) RunJournal.remove(file);
    return { journal: await RunJournal.create(file, recordedConfig(config, policy), config.label ?? runName(config), journalOptions) };
  });
}

/**
 * Continues the run whose journal is beside `file`, from its last checkpoint, with the config it
 * recorded (its seeds included); `steps` may extend it.
 *
 * @throws RunJournalError when the run cannot be resumed (no journal, a damaged one, nothing to go on with)
 */
export async function resumeRunFile(file: string, o: Omit<RunToFileOptions, 'file'> & { steps?: number } = {}): Promise<RunToFileResult> {
  const journalOptions: RunJournalOptions = { snapshotEachStep: true };
  const { run: journal, config } = await RunJournal.resume(file, journalOptions, (recorded, records) => {
    if (isRemotePolicy(recorded.models.policy))
      throw new RunJournalError(`${file} is a run whose policy trains on a server, which holds its training state; start a new run instead`);
    if (recorded.preset.finetune.mode === 'full')
      throw new RunJournalError(`${file} is a full fine-tuning run, which keeps no per-step checkpoints; start a new run instead`);
    const done = lastStep(records);
    const steps = o.steps ?? recorded.schedule.steps;
    // A run stopped after its last step but before that step's evaluation resumes to evaluate.
    const finished = steps === done && (!evaluationDue(done, recorded.schedule.evalEvery, steps) || evaluatedAt(records, done));
    if (steps < done || finished)
      throw new RunJournalError(`${file} has done ${done} of its ${recorded.schedule.steps} steps already; give --steps N above ${done} to go on`);
    recorded.schedule.steps = steps;
    return recorded;
  });
  const backend = await createBackend(config.models.policy.backend ?? 'cpu');
  return journaled(config, backend, file, journalOptions, o, async (policy) => {
    const point = journalResumePoint(file, journal.all);
    if (point.adapter) await policy.restore(point.adapter.files, point.version);
    const plan = resumePlan(point, journal.all);
    return {
      journal,
      resume: { ...loopResume(plan), evaluated: evaluatedAt(journal.all, plan.step) },
    };
  });
}

/** Whether a log holds an evaluation of the policy after `step` steps. */
function evaluatedAt(records: readonly RunRecord[], step: number): boolean {
  return records.some((r) => r.kind === 'evaluation' && (r.step ?? 0) === step);
}

/** The last train_step a log holds (0 when none). */
function lastStep(records: readonly RunRecord[]): number {
  let step = 0;
  for (const r of records) if (r.kind === 'train_step') step = Math.max(step, r.step);
  return step;
}

/**
 * The config a run file records: no secrets, the policy's files named, the seed, and a hub
 * policy's revision as the commit it loaded, so a resume or a rerun loads those files again.
 */
function recordedConfig(config: AnyRunConfig, policy: PolicyService): AnyRunConfig {
  const policyModel = config.models.policy;
  return withPolicyCommit(
    {
      // A remote policy's key stays out of the file; its ref names the server.
      ...withoutSecrets(config),
      modelRefs: {
        policy: isRemotePolicy(policyModel)
          ? { id: `${policyModel.model} @ ${policyModel.url}` }
          : { id: policyModel.model, files: policyFiles(policy), weightFormat: policyModel.weightFormat },
      },
      seeds: { run: config.seed },
    } as AnyRunConfig,
    policyCommit(policy),
  );
}

/**
 * Loads the policy, lets `open` give the journal (and where to resume), runs the loop into it,
 * and writes the final run file, whatever ended the run.
 */
async function journaled(
  config: AnyRunConfig,
  backend: Backend,
  file: string,
  journalOptions: RunJournalOptions,
  o: RunToFileOptions,
  open: (policy: PolicyService) => Promise<{ journal: RunJournal; resume?: RunLoopOptions['resume'] }>,
): Promise<RunToFileResult> {
  // A full fine-tuning run has no adapter: its trained model is a Hugging Face folder beside the
  // run file. A remote policy's server holds what it trained: neither is here.
  const full = config.preset.finetune.mode === 'full';
  const trained = !isRemotePolicy(config.models.policy);
  // A homework workspace's files, one folder per homework, beside the run file.
  const workspaces = folderWorkspaces(workspacePath(file));
  const { policy, loop: startLoop } = await prepareRun(config, backend, workspaces, o.loadProgress);
  // Each new version's adapter is checkpointed before its step is journaled, so --resume can rebuild it.
  if (trained && !full) journalOptions.exportAdapter = () => policy.exportAdapter();
  const { journal, resume } = await open(policy);
  o.onStart?.(config);
  const loop = startLoop(journal, {
    ...(resume ? { resume } : {}),
    onRecord: (r) => {
      const line = eventLine(r);
      if (line) o.onLine?.(line);
    },
  });
  let ended: { value: RunResult; signal?: StopSignal } | undefined;
  let failure: unknown;
  try {
    ended = await stoppable(
      () => loop.stop(),
      () => loop.run(),
    );
  } catch (e) {
    failure = e;
  }
  let modelDir: string | undefined;
  let adapter: StoredAdapter | undefined;
  if (!failure && trained && full && policy.exportModel) {
    modelDir = modelPath(file);
    mkdirSync(modelDir, { recursive: true });
    for (const [name, bytes] of await policy.exportModel()) writeFileSync(join(modelDir, name), bytes);
  }
  if (!failure && trained && !full) adapter = { version: policy.servingVersion(), ts: Date.now(), files: await policy.exportAdapter() };
  const status = ended?.value.status === 'finished' ? 'finished' : 'stopped';
  await journal.close({ status, ...(adapter ? { adapter } : {}) });
  if (failure) {
    const why = (failure as Error).message?.split('\n')[0] ?? String(failure);
    throw new RunFailedError(`${why}; its ${journal.all.length} records are in ${file} (nextstate run --resume ${file} continues it)`, { cause: failure });
  }
  return { status: ended!.value.status, records: journal.all, file, ...(modelDir ? { modelDir } : {}), ...(ended!.signal ? { signal: ended!.signal } : {}) };
}

/** A JSON event line as a person reads it, with the time left once steps have been taken. */
function describe(line: Record<string, unknown>, steps: number, started: number): string {
  if (line.type === 'evaluation') {
    const scores = line.scores as Record<string, number>;
    const extra = Object.entries(scores)
      .filter(([k]) => k !== 'score' && k !== line.name)
      .map(([k, x]) => `, ${k} ${x.toFixed(3)}`)
      .join('');
    return `evaluation at step ${line.step} (v${line.version}): ${line.name} ${(line.score as number).toFixed(3)} over ${line.n} problems${extra}`;
  }
  const f = (x: unknown, d = 4) => (typeof x === 'number' ? x.toFixed(d) : 'n/a');
  return `step ${line.step}/${steps} -> v${line.version}: loss ${f(line.loss)} kl ${f(line.kl)} grad-norm ${f(line.gradNorm)} entropy ${f(line.entropy, 3)} |A| ${f(line.meanAbsAdv, 3)}${line.skipped ? ` SKIPPED: ${line.skipped}` : ''}${timeLeft(started, line.step as number, steps)}`;
}
