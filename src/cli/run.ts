import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { FILE_LIMITS, InputFileError, readLocalText } from '../gpu/local-file';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { RunRecord } from '../rl/records';
import { memorySource, runFileStream } from '../storage/index';
import type { Backend } from '../gpu/backend';
import { createScenario } from '../sims/scenarios/index';
import type { RecordSink, RunController, RunLoopOptions } from '../runtime/loop-types';
import type { PolicyService } from '../runtime/policy-service';
import { loadProblems } from '../runtime/problems';
import { isTrainedArm, TRAINED_ARMS } from '../runtime/arms';
import {
  EXAMPLES,
  exampleConfig,
  isRemotePolicy,
  parseAnyRunConfig,
  trackOf,
  withoutSecrets,
  type AnyRunConfig,
  type ExampleName,
} from '../runtime/run-config';
import { fullFinetuneLrWarning } from '../rl/presets';
import { RunLoop } from '../runtime/runloop';
import { createNodeServices, readTextFile } from '../runtime/services-node';
import { folderWorkspaces } from '../runtime/workspace-node';
import type { WorkspaceFactory } from '../sims/workspace/workspace';
import { ToolCallRunLoop } from '../runtime/toolcall/loop';
import { loadToolCallProblems } from '../runtime/toolcall/problems';
import { createToolCallNodeServices } from '../runtime/toolcall/services-node';
import { resolveWeightFormat } from '../gpu/load';
import { createBackend, policyFiles, QUANTIZE_NOTE, QUANTIZE_OPTION, QUANTIZE_USAGE, weightFormatOption } from './engine';
import { isPositiveInt, number, parse, UsageError } from './args';
import { timeLeft, type CliIo } from './io';
import { notStdout } from './output';
import { Interrupted, stoppable, type StopSignal } from './signals';

export const usage = `nextstate run --config RUN.json [--out RUN_FILE] [--steps N] [--policy DIR|ID] [--backend cpu|webgpu]
      ${QUANTIZE_USAGE} [--json]
  nextstate run --example ${EXAMPLES.join('|')} [--method ${TRAINED_ARMS.join('|')}] [--policy DIR|ID] ${QUANTIZE_USAGE}
      print a complete example config (the method's preset included; combined-shuffled is
      Combined with the shuffled-hint control)
  ${QUANTIZE_NOTE} It replaces the config's models.policy.weightFormat;
  the run file records the format the run loaded. Ctrl-C (SIGINT) or SIGTERM stops at the next
  step and writes the run file so far, then exits 130 or 143.`;

/**
 * The JSON lines a script follows: one per training step and per evaluation. An evaluation's
 * `score` is its headline number (personalization score, or tool-call accuracy); `scores` has all.
 */
export function eventLine(r: RunRecord): object | null {
  if (r.kind === 'train_step') return { type: 'train_step', step: r.step, version: r.version + 1, samples: r.samples, skipped: r.skipped, ...r.stats };
  if (r.kind === 'evaluation') {
    const score = r.scores.score ?? r.scores.accuracy;
    return { type: 'evaluation', name: r.name, step: r.step ?? 0, version: r.version, score, scores: r.scores, n: r.perProblem.length };
  }
  return null;
}

/** The run loop of the config's track, with its Node services and problems. */
async function createRun(
  config: AnyRunConfig,
  backend: Backend,
  sink: RecordSink,
  options: RunLoopOptions,
  workspaces: WorkspaceFactory,
): Promise<{ loop: RunController; policy: PolicyService }> {
  if (config.track === 'toolcall') {
    const services = await createToolCallNodeServices(config, backend);
    const problems = await loadToolCallProblems(config, readTextFile);
    return { loop: new ToolCallRunLoop(config, services, problems, sink, options), policy: services.policy };
  }
  const services = await createNodeServices(config, backend);
  const problems = await loadProblems(config, createScenario(config.scenario), readTextFile);
  return { loop: new RunLoop(config, { ...services, workspaces }, problems, sink, options), policy: services.policy };
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
    json: { type: 'boolean' },
  });
  const weightFormat = weightFormatOption(v);
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
    io.out(JSON.stringify(example, null, 2));
    return;
  }
  if (typeof v.config !== 'string') throw new UsageError('--config RUN.json or --example NAME is required');
  // The run file must stay byte-exact (its lines carry their SHA-256), and stdout has the --json events.
  const file = typeof v.out === 'string' ? notStdout(v.out, 'out', 'the run file') : undefined;

  let raw: unknown;
  try {
    raw = JSON.parse(readLocalText(v.config, FILE_LIMITS.runConfig));
  } catch (e) {
    throw e instanceof InputFileError ? e : new UsageError(`${v.config}: ${(e as Error).message}`);
  }
  const config: AnyRunConfig = parseAnyRunConfig(raw);
  if (isRemotePolicy(config.models.policy) && (v.policy !== undefined || v.backend !== undefined || weightFormat)) {
    throw new UsageError('--policy, --backend and --quantize load a policy here; this config\'s policy runs on a server (models.policy.kind "server")');
  }
  if (typeof v.policy === 'string') config.models.policy.model = v.policy;
  if (typeof v.backend === 'string') config.models.policy.backend = v.backend as 'cpu' | 'webgpu';
  if (weightFormat) config.models.policy.weightFormat = weightFormat;
  config.schedule.steps = number(v, 'steps', config.schedule.steps, isPositiveInt);
  const lrWarning = fullFinetuneLrWarning(config.preset);
  if (lrWarning) io.note(`warning: ${lrWarning}`);

  const steps = config.schedule.steps;
  // From the first event (after the model loaded), so the time left follows the steps' own pace.
  let started: number | undefined;
  const result = await runToFile(config, {
    file,
    onLine: (line) => {
      started ??= Date.now();
      if (v.json) io.out(JSON.stringify(line));
      else io.progress(describe(line as Record<string, unknown>, steps, started));
    },
  });
  const written = `${result.records.length} records written to ${result.file}${result.modelDir ? `, the fully fine-tuned model to ${result.modelDir}` : ''}`;
  if (result.signal) throw new Interrupted(result.signal, `stopped by ${result.signal}: ${written}`);
  io.note(`run ${result.status}: ${written}`);
}

/**
 * One headless run of a checked config, written as a run file (adapter included): what `run`
 * does, and what `reproduce` does once per method and seed.
 */
export async function runToFile(
  config: AnyRunConfig,
  o: { file?: string; onLine?: (line: object) => void } = {},
): Promise<{ status: string; records: RunRecord[]; file: string; modelDir?: string; signal?: StopSignal }> {
  const records: RunRecord[] = [];
  const created = Date.now();
  const backend = await createBackend(config.models.policy.backend ?? 'cpu');
  // The config as run: with the weight format an absent one resolves to, so the file says it.
  config = structuredClone(config);
  const policyModel = config.models.policy;
  const remote = isRemotePolicy(policyModel);
  if (!remote) policyModel.weightFormat = resolveWeightFormat(policyModel.weightFormat, backend);
  const file = o.file ?? `nextstate-${runName(config)}-${new Date(created).toISOString().replace(/[:.]/g, '-')}.nsrun`;
  const { loop, policy } = await createRun(
    config,
    backend,
    {
      append: async (rs) => void records.push(...rs),
    },
    {
      onRecord: (r) => {
        const line = eventLine(r);
        if (line) o.onLine?.(line);
      },
    },
    // A homework workspace's files, one folder per homework, beside the run file.
    folderWorkspaces(`${file.replace(/\.nsrun$/, '')}.workspace`),
  );
  const { value, signal } = await stoppable(
    () => loop.stop(),
    () => loop.run(),
  );
  const status = value.status;
  // A full fine-tuning run has no adapter: its trained model is a Hugging Face folder beside the
  // run file. A remote policy's server holds what it trained: neither is here.
  const full = config.preset.finetune.mode === 'full';
  const trained = !remote;
  let modelDir: string | undefined;
  if (trained && full && policy.exportModel) {
    modelDir = `${file.replace(/\.nsrun$/, '')}.model`;
    mkdirSync(modelDir, { recursive: true });
    for (const [name, bytes] of await policy.exportModel()) writeFileSync(join(modelDir, name), bytes);
  }
  const adapter = !trained || full ? undefined : { version: policy.servingVersion(), ts: Date.now(), files: await policy.exportAdapter() };
  const source = memorySource(
    {
      // A remote policy's key stays out of the file; its ref names the server.
      config: {
        ...withoutSecrets(config),
        modelRefs: {
          policy: isRemotePolicy(policyModel)
            ? { id: `${policyModel.model} @ ${policyModel.url}` }
            : { id: policyModel.model, files: policyFiles(policy), weightFormat: policyModel.weightFormat },
        },
        seeds: { run: config.seed },
      },
      label: config.label ?? runName(config),
      notes: '',
      created,
      status: status === 'finished' ? 'finished' : 'stopped',
    },
    records,
    adapter,
  );
  await pipeline(Readable.fromWeb(runFileStream(source, { includeAdapter: adapter !== undefined }) as NodeReadableStream), createWriteStream(file));
  return { status, records, file, ...(modelDir ? { modelDir } : {}), ...(signal ? { signal } : {}) };
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
