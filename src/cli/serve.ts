/**
 * `nextstate serve`: the policy behind an OpenAI-compatible endpoint that trains while it serves,
 * the reference's openclaw_api_server on this project's run loop core. An agent (OpenClaw, any
 * OpenAI client) talks to it; each main turn is paired with its next state, judged, buffered and
 * trained on, exactly as in `nextstate run`, and every record is journaled before the reply goes
 * out (run-journal.ts).
 */
import { isIP } from 'node:net';
import { basename } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { METHODS, makePreset, parsePreset, type MethodName, type MethodPreset, type PresetOverrides } from '../rl/presets';
import { FILE_LIMITS, InputFileError, readLocalText } from '../models/local-file';
import { turnCount, type InteractionRecord, type RunRecord, type RuntimeEventRecord } from '../rl/records';
import { resolveWeightFormat } from '../gpu/load';
import type { PeftFiles } from '../gpu/peft';
import type { RunLoopOptions } from '../runtime/loop-types';
import type { AnyRunConfig, GeneratorSpec, RunConfig } from '../runtime/run-config';
import { parseRunConfig } from '../runtime/run-config';
import { EnginePolicyService, policyCommit } from '../runtime/policy-service';
import { withPolicyCommit } from '../runtime/policy-commit';
import { loopResume, resumePlan } from '../runtime/resume-plan';
import { createNodeServices, isLoopback } from '../runtime/services-node';
import { SERVED_STEPS, ServeLoop } from '../runtime/serve-loop';
import { SessionPairing } from '../runtime/serve-pairing';
import { unfinishedTurns, type UnfinishedTurns } from '../runtime/serve-unfinished';
import { byteSize, durationMs, isPositiveInt, number, parse, required, UsageError } from './args';
import { applySets, SET_NOTE, SET_OPTION, SET_USAGE, setValues } from './overrides';
import {
  BACKEND_OPTION,
  createBackend,
  policyFiles,
  QUANTIZE_OPTION,
  QUANTIZE_USAGE,
  REVISION_NOTE,
  REVISION_OPTION,
  REVISION_USAGE,
  revisionOption,
  weightFormatOption,
  BACKEND_USAGE,
} from './engine';
import { eventLine } from './run';
import { ChatEndpoint, servedMessage } from '../server/serve-chat';
import { startHttpServer, type RunningServer } from '../server/serve-http';
import { hostName } from '../server/serve-host';
import { journalResumePoint, RunJournal } from './run-journal';
import { replyMessage, usesToolCallTags } from '../rl/tool-calls';
import type { CliIo } from './io';
import { progressFor } from './load-progress';
import { FORCE_OPTION, notStdout } from './output';
import { stoppable } from './signals';
import { placeSteps, type TrainerThreadHooks } from './serve-trainer';

export const usage = `nextstate serve --model DIR|HUB_ID ${REVISION_USAGE} --out RUN.nsrun [--port 30000] [--host 127.0.0.1] [--api-key-file FILE]
      [--method ${METHODS.join('|')}] [--judge rules|policy|URL [--judge-model NAME]] [--batch-size N] [--lora-rank N]
      [--lr X] [--preset PRESET.json] ${BACKEND_USAGE} ${QUANTIZE_USAGE} [--max-tokens N] [--served-model-name NAME]
      [--max-in-flight N] [--max-body-bytes N] [--max-batch N] [--allow-origin ORIGIN] [--allow-host NAME] [--idle-timeout DURATION|off] ${SET_USAGE}
      [--no-trainer-thread] [--max-memory BYTES] [--seed N] [--resume | --force] [--json]
  serve the policy at http://HOST:PORT/v1 (OpenAI chat completions) and train it on the turns it serves;
  --idle-timeout (default 30m) ends a session silent that long, its waiting turn recorded unjudged; off: never;
  a LoRA run's steps train on a thread of their own, with a second copy of the model, while serving goes on;
  --no-trainer-thread trains on the serving thread, requests waiting for each step; --max-memory (bytes, or 512M, 8G)
  trains there too where the two copies would not fit, and chat requests get 503 with Retry-After during each step;
  ${SET_NOTE};
  --allow-origin lets pages of ORIGINs (space- or comma-separated, e.g. the lab's) use the server (chat, the record
  feed; CORS); --allow-host NAMEs clients may reach it by besides its address (Host is checked);
  a key (--api-key-file FILE, NEXTSTATE_SERVE_API_KEY, or --api-key KEY, which other users see in ps) is required
  beyond 127.0.0.1; --resume continues RUN.nsrun after a stop or crash, as it was configured and with the hub
  commit it recorded (the command that started it works again; an option asking for other values is refused);
  --force replaces a run already at RUN.nsrun (its journal and checkpoints too) once the model has loaded.
  ${REVISION_NOTE}`;

const DEFAULTS = { port: 30000, maxTokens: 1024, maxInFlight: 64, maxBodyBytes: 16 * 1024 * 1024, seed: 1, maxBatch: 32 };
/** Sessions named by the server, for requests that name none: conv-0, conv-1, ... */
const AUTO_SESSION = /^conv-(\d+)$/;

export interface ServeHandle {
  url: string;
  loop: ServeLoop;
  runFile: RunJournal;
  /** Resolves when the loop has stopped (stop(), or a failure) and the run file is final. */
  finished: Promise<void>;
  /** Stops serving and training at once (a signal's handler); `finished` resolves when done. */
  stopServing(): void;
  /** Stops serving and training; the run file is written one last time. */
  stop(): Promise<void>;
}

function judgeSpec(v: Record<string, unknown>): GeneratorSpec {
  const judge = typeof v.judge === 'string' ? v.judge : 'rules';
  if (judge === 'rules' || judge === 'policy') return { kind: judge };
  if (!/^https?:\/\//.test(judge))
    throw new UsageError(`--judge must be rules, policy or an http(s) URL of an OpenAI-compatible endpoint, got ${JSON.stringify(judge)}`);
  if (typeof v['judge-model'] !== 'string') throw new UsageError('--judge URL needs --judge-model NAME (the model that endpoint serves)');
  // Its key comes from NEXTSTATE_API_KEY_<HOST>, never from the command line or the run file.
  return { kind: 'endpoint', baseUrl: judge, model: v['judge-model'] };
}

function presetOf(v: Record<string, unknown>): MethodPreset {
  const overrides: PresetOverrides = {};
  if (v['batch-size'] !== undefined) overrides.batch = { size: number(v, 'batch-size', 0, isPositiveInt) };
  if (v['lora-rank'] !== undefined) overrides.finetune = { lora: { rank: number(v, 'lora-rank', 0, isPositiveInt) } };
  if (v.lr !== undefined) overrides.optimizer = { lr: number(v, 'lr', 0, (x) => x > 0) };
  if (typeof v.preset === 'string') {
    let json: unknown;
    try {
      json = JSON.parse(readLocalText(v.preset, FILE_LIMITS.preset));
    } catch (e) {
      throw e instanceof InputFileError ? e : new UsageError(`--preset ${v.preset}: ${(e as Error).message}`);
    }
    const base = parsePreset(json);
    if (v.method !== undefined && v.method !== base.method)
      throw new UsageError(`--method ${v.method} differs from the preset's method (${base.method}); give one of them`);
    const { method: _method, ...rest } = base;
    return makePreset(base.method, { ...rest, ...overrides } as PresetOverrides);
  }
  const method = (v.method ?? 'combined') as MethodName;
  if (!METHODS.includes(method)) throw new UsageError(`--method must be one of ${METHODS.join(', ')}`);
  return makePreset(method, overrides);
}

/** A served run's config: the talk-yourself scenario (real users), no evaluation, steps without end. */
function serveConfig(v: Record<string, unknown>, model: string): RunConfig {
  const preset = presetOf(v);
  const weightFormat = weightFormatOption(v);
  const revision = revisionOption(v);
  const idle = durationMs(v, 'idle-timeout');
  const config = {
    format: 'nextstate-run-config',
    formatVersion: 1,
    label: `serve ${basename(model)} (${preset.method})`,
    scenario: { id: 'talk' },
    method: preset.method,
    preset,
    models: {
      policy: { model, backend: v.backend, ...(weightFormat ? { weightFormat } : {}), ...(revision ? { revision } : {}) },
      user: { kind: 'rules' },
      judge: judgeSpec(v),
      evaluator: { kind: 'rules' },
    },
    seed: number(v, 'seed', DEFAULTS.seed, Number.isSafeInteger),
    problems: { source: 'builtin', count: 1 },
    schedule: { concurrentSessions: 1, steps: SERVED_STEPS, evalEvery: 0, evalProblems: 1, evalVotes: 1 },
    sampling: {
      policy: { temperature: 1, topP: 1, topK: 0, maxNewTokens: number(v, 'max-tokens', DEFAULTS.maxTokens, isPositiveInt) },
      user: { temperature: 0.7, maxNewTokens: 256 },
    },
  };
  applySets(config, [...(idle !== undefined ? [`preset.session.idleTimeoutMs=${idle}`] : []), ...setValues(v)]);
  return parseRunConfig(config);
}

/** Where the options that make a served run's config put their values (--set names its own paths). */
const CONFIG_OPTIONS: Record<string, (c: RunConfig) => unknown> = {
  method: (c) => c.method,
  judge: (c) => c.models.judge,
  'judge-model': (c) => c.models.judge,
  'batch-size': (c) => c.preset.batch.size,
  'lora-rank': (c) => c.preset.finetune.lora.rank,
  lr: (c) => c.preset.optimizer.lr,
  preset: (c) => c.preset,
  'max-tokens': (c) => c.sampling.policy.maxNewTokens,
  'idle-timeout': (c) => c.preset.session.idleTimeoutMs,
  seed: (c) => c.seed,
};

/**
 * A resumed run goes on with the config it recorded, so the command that started it works again
 * with --resume added. An option that asks for something else would be ignored, so it is refused.
 *
 * @throws UsageError naming the first option whose value differs from the run's
 */
function checkResumedOptions(v: Record<string, unknown>, was: RunConfig, model: string, file: string): void {
  const given = Object.keys(CONFIG_OPTIONS).filter((o) => v[o] !== undefined);
  const sets = setValues(v);
  if (given.length === 0 && sets.length === 0) return;
  const asked = serveConfig(v, model);
  const at = (c: RunConfig, path: string) => path.split('.').reduce<unknown>((x, k) => (x as Record<string, unknown> | undefined)?.[k], c);
  const differing = [
    ...given.map((o) => ({ option: `--${o}`, given: `--${o} ${v[o]}`, recorded: CONFIG_OPTIONS[o](was), asked: CONFIG_OPTIONS[o](asked) })),
    ...sets.map((s) => {
      const path = s.slice(0, s.indexOf('='));
      return { option: `--set ${path}`, given: `--set ${s}`, recorded: at(was, path), asked: at(asked, path) };
    }),
  ].find((d) => !isDeepStrictEqual(d.recorded, d.asked));
  if (differing)
    throw new UsageError(
      `${differing.given} differs from what ${file} recorded (${JSON.stringify(differing.recorded)}), and --resume continues the run as it was configured; leave out ${differing.option}, or start a new run with another --out`,
    );
}

/** A resumed run's policy loaded from `model`: at the recorded commit when it is the model the run named. */
function resumedPolicy(was: RunConfig, model: string): RunConfig['models']['policy'] {
  const { revision, ...policy } = was.models.policy;
  return { ...policy, model, ...(revision && was.models.policy.model === model ? { revision } : {}) };
}

/** Each session's last turn number in a log. */
function turnsOf(records: readonly RunRecord[]): Map<string, number> {
  const turns = new Map<string, number>();
  for (const r of records) if (r.kind === 'interaction') turns.set(r.session, Math.max(turns.get(r.session) ?? 0, r.turn));
  return turns;
}

/**
 * The names of --allow-host (space- or comma-separated): host names or addresses, without
 * scheme or port.
 *
 * @throws UsageError naming an entry that is not a host name
 */
export function allowedHosts(text: string | undefined): string[] {
  const entries = (text ?? '').split(/[\s,]+/).filter(Boolean);
  for (const e of entries)
    if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(e) && isIP(e) === 0)
      throw new UsageError(
        `--allow-host: "${e}" is not a host name; give the name clients reach this server by, without scheme or port, such as agent.example`,
      );
  return entries.map((e) => hostName(e.includes(':') ? `[${e}]` : e));
}

/**
 * The origins of --allow-origin: pages there may send chat requests (the lab driving this server
 * as its policy). Each is checked, since a page on any other origin must not train the policy.
 *
 * @throws UsageError naming an entry that is not scheme://host[:port]
 */
export function allowedOrigins(text: string | undefined): string[] {
  const entries = (text ?? '').split(/[\s,]+/).filter(Boolean);
  for (const e of entries)
    if (!/^https?:\/\/[a-z0-9.-]+(?::\d{1,5})?$/i.test(e) && !/^https?:\/\/\[[0-9a-f:]+\](?::\d{1,5})?$/i.test(e))
      throw new UsageError(`--allow-origin: "${e}" is not an origin; give scheme://host[:port] as the browser shows it, such as http://localhost:5173`);
  return entries;
}

/**
 * The key clients must send: --api-key-file's first line, else NEXTSTATE_SERVE_API_KEY, else
 * --api-key. A key on the command line is in every user's `ps`, so giving one warns (`warn`).
 */
export function serveApiKey(
  options: { key?: string; file?: string },
  env: Record<string, string | undefined>,
  warn: (line: string) => void,
): string | undefined {
  if (options.key !== undefined && options.file !== undefined) throw new UsageError('give --api-key-file or --api-key, not both');
  if (options.file !== undefined) {
    const key = readLocalText(options.file, FILE_LIMITS.apiKey).split(/\r?\n/)[0].trim();
    if (!key) throw new UsageError(`--api-key-file ${options.file}: its first line is empty; write the key there`);
    return key;
  }
  if (options.key !== undefined) {
    warn('warning: --api-key is visible to every user of this machine (ps); prefer --api-key-file FILE or NEXTSTATE_SERVE_API_KEY');
    return options.key;
  }
  return env.NEXTSTATE_SERVE_API_KEY || undefined;
}

export type { TrainerThreadHooks } from './serve-trainer';

/** Starts the server from the command line's options; returns once it listens. */
export async function startServe(argv: string[], io: CliIo, hooks: { trainer?: TrainerThreadHooks } = {}): Promise<ServeHandle> {
  const v = parse(argv, {
    model: { type: 'string' },
    out: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    'api-key': { type: 'string' },
    'api-key-file': { type: 'string' },
    method: { type: 'string' },
    judge: { type: 'string' },
    'judge-model': { type: 'string' },
    'batch-size': { type: 'string' },
    'lora-rank': { type: 'string' },
    lr: { type: 'string' },
    preset: { type: 'string' },
    ...BACKEND_OPTION,
    ...QUANTIZE_OPTION,
    ...REVISION_OPTION,
    'max-tokens': { type: 'string' },
    'served-model-name': { type: 'string' },
    'max-in-flight': { type: 'string' },
    'max-batch': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    'allow-origin': { type: 'string' },
    'allow-host': { type: 'string' },
    'idle-timeout': { type: 'string' },
    // The default since the hang it was opt-in for was found; still taken so that scripts that gave it keep working.
    'trainer-thread': { type: 'boolean' },
    'no-trainer-thread': { type: 'boolean' },
    'max-memory': { type: 'string' },
    ...SET_OPTION,
    seed: { type: 'string' },
    resume: { type: 'boolean' },
    ...FORCE_OPTION,
    json: { type: 'boolean' },
  });
  const model = required(v, 'model');
  const file = notStdout(required(v, 'out'), 'out', 'the run file, written as records come');
  const host = String(v.host);
  const apiKey = serveApiKey({ key: v['api-key'] as string | undefined, file: v['api-key-file'] as string | undefined }, process.env, (line) => io.note(line));
  if (!apiKey && !isLoopback(host === '::1' ? '[::1]' : host)) {
    throw new UsageError(`--host ${host} listens beyond this machine; give --api-key-file FILE (or NEXTSTATE_SERVE_API_KEY) so only your agent can use it`);
  }
  const port = number(v, 'port', DEFAULTS.port, (x) => Number.isInteger(x) && x >= 0 && x < 65536);
  if (v['trainer-thread'] && v['no-trainer-thread']) throw new UsageError('give --trainer-thread (the default) or --no-trainer-thread, not both');
  const maxMemory = byteSize(v, 'max-memory');
  const allowOrigins = allowedOrigins(v['allow-origin'] as string | undefined);
  const allowHosts = allowedHosts(v['allow-host'] as string | undefined);
  // --json: every event on stdout, for the program that started the server; else a note on stderr.
  const say = (line: object, text: string, progress = false) => {
    if (v.json) io.out(JSON.stringify(line));
    else if (progress) io.progress(text);
    else io.note(text);
  };

  let exportAdapter: () => Promise<PeftFiles> = () => Promise.reject(new Error('the policy is not loaded yet'));
  const runFileOptions = { exportAdapter: () => exportAdapter() };
  if (v.resume && v.force) throw new UsageError('--resume continues the run at --out and --force replaces it; give one');
  // Checked before the journal is opened for appending, so a refused resume leaves the run as it was.
  const checkResumable = (was: AnyRunConfig) => {
    if (was.track === 'toolcall' || was.scenario.id !== 'talk')
      throw new UsageError(`${file} is a headless run (nextstate run wrote it); continue it with nextstate run --resume ${file}`);
    checkResumedOptions(v, was, model, file);
    return was;
  };
  const resumed = v.resume ? await RunJournal.resume(file, runFileOptions, checkResumable) : null;
  if (!resumed && v.force) RunJournal.checkReplaceable(file);
  else if (!resumed) RunJournal.checkNew(file);
  const was = resumed?.config as RunConfig | undefined;
  // A resumed run goes on as it was configured; only where its policy is loaded from may change
  // (the commit it recorded belongs to the model it named).
  const config: RunConfig = was ? { ...was, models: { ...was.models, policy: resumedPolicy(was, model) } } : serveConfig(v, model);

  const backend = await createBackend(config.models.policy.backend ?? 'cpu');
  config.models.policy.weightFormat = resolveWeightFormat(config.models.policy.weightFormat, backend);
  const services = await createNodeServices(config, backend, progressFor(io));
  const { policyModel } = services;
  // A run file written by a client of another server names that server: this command serves a model of its own.
  if (!policyModel)
    throw new UsageError(`${file} is a run whose policy is on a server (models.policy.kind "server"); nextstate serve continues only runs it served`);
  const policy = services.policy as EnginePolicyService;
  exportAdapter = () => policy.exportAdapter();
  const withRefs: RunConfig = withPolicyCommit(
    {
      ...config,
      modelRefs: { policy: { id: model, files: policyFiles(policy), weightFormat: config.models.policy.weightFormat } },
      seeds: { run: config.seed },
    },
    policyCommit(policy),
  );
  const steps = placeSteps(policy, withRefs, policyModel.config, {
    thread: !v['no-trainer-thread'],
    maxMemory,
    hooks: hooks.trainer,
    unavailable: (e) => say({ type: 'trainer', trainsBeside: false, message: e.message }, e.message),
  });
  const trainer = steps.trainer;
  // Only now: a model that fails to load leaves the run that was there as it was.
  if (!resumed && v.force) RunJournal.remove(file);
  const runFile = resumed?.run ?? (await RunJournal.create(file, withRefs, withRefs.label ?? 'serve', runFileOptions));

  const tokenizer = policyModel.tokenizer;
  const toolCallTags = usesToolCallTags(tokenizer.chatTemplateText);
  const pairing = new SessionPairing();
  let nextSession = 0;
  let resume: RunLoopOptions['resume'];
  let unfinished: UnfinishedTurns | undefined;
  const records = runFile.all;
  if (v.resume) {
    // A logged reply as its client got it back (tool calls parsed), which the client's next request repeats.
    const reply = (r: InteractionRecord) => servedMessage(replyMessage(r.response, toolCallTags && r.tools !== undefined, 'call'), r.tokenTexts);
    const point = journalResumePoint(file, records);
    if (point.adapter) await policy.restore(point.adapter.files, point.version);
    const plan = resumePlan(point, records);
    resume = {
      ...loopResume(plan),
      // Served sessions are named by their clients, not s0, s1, ...: count the ones seen.
      sessionsStarted: new Set(records.flatMap((r) => (r.kind === 'interaction' ? [r.session] : []))).size,
    };
    // Header-less sessions go on where they were: their last request and reply pair the next one.
    for (const r of records) {
      if (r.kind !== 'interaction') continue;
      const auto = AUTO_SESSION.exec(r.session);
      if (!auto) continue;
      nextSession = Math.max(nextSession, Number(auto[1]) + 1);
      pairing.remember(r.session, r.messages, reply(r));
    }
    unfinished = unfinishedTurns(records, { reply, paired: (session) => AUTO_SESSION.test(session) });
  }
  // The loop's first record says what the resume did (resume-plan.ts resumeMessage), before the server listens.
  let resumeSaid = () => {};
  const saidResumed = resume ? new Promise<void>((r) => (resumeSaid = r)) : null;
  const sayResumed = (r: RuntimeEventRecord) => {
    say(
      {
        type: 'resumed',
        step: r.step ?? 0,
        version: r.version,
        buffered: resume?.samples?.length ?? 0,
        dropped: resume?.dropped ?? 0,
        waiting: unfinished?.waiting.length ?? 0,
        unjudged: unfinished?.unjudged.length ?? 0,
        interrupted: turnCount(r.interrupted),
      },
      r.message,
    );
    resumeSaid();
  };

  const loop = new ServeLoop(config, services, runFile, {
    ...(resume ? { resume } : {}),
    ...(unfinished ? { unfinished } : {}),
    turnsSoFar: turnsOf(records),
    generationBatch: number(v, 'max-batch', DEFAULTS.maxBatch, isPositiveInt),
    onRecord: (r) => {
      if (r.kind === 'runtime_event' && r.event === 'run_resumed') sayResumed(r);
      const line = eventLine(r);
      if (line && r.kind === 'train_step') {
        const loss = r.stats.loss === null ? 'n/a' : r.stats.loss.toFixed(4);
        say(line, `step ${r.step} -> v${r.version + 1}: ${r.samples} samples, loss ${loss}${r.skipped ? `, SKIPPED: ${r.skipped}` : ''}`, true);
      }
    },
  });
  const modelId = typeof v['served-model-name'] === 'string' ? v['served-model-name'] : basename(model);
  const maxTokens = config.sampling.policy.maxNewTokens;
  const chat = new ChatEndpoint(
    {
      modelId,
      aliases: [model],
      maxTokens,
      maxPositions: policyModel.config.maxPositions,
      temperature: config.sampling.policy.temperature,
      topP: config.sampling.policy.topP,
      toolCallTags,
      seed: config.seed,
      vocabSize: policyModel.config.vocabSize,
    },
    {
      loop,
      pairing,
      promptIds: (messages, tools) => policyModel.promptIds(messages, { tools }),
      tokenizer,
      newSession: () => `conv-${nextSession++}`,
      runFile,
      trainer: steps.now,
    },
  );
  const running = loop.run();
  let http: RunningServer;
  try {
    if (saidResumed) await Promise.race([saidResumed, running]);
    http = await startHttpServer(
      {
        host,
        port,
        apiKey,
        maxBodyBytes: number(v, 'max-body-bytes', DEFAULTS.maxBodyBytes, isPositiveInt),
        maxInFlight: number(v, 'max-in-flight', DEFAULTS.maxInFlight, isPositiveInt),
        allowOrigins,
        allowHosts,
      },
      chat,
    );
  } catch (e) {
    loop.stop();
    await trainer?.close();
    await running.catch(() => {});
    await runFile.close();
    throw e;
  }
  const finished = running
    .finally(async () => {
      await trainer?.close();
      await http.close();
      await runFile.close();
    })
    .then(() => undefined);
  say(
    { type: 'listening', url: `${http.url}/v1`, model: modelId, file, method: config.method, trainsBeside: policy.trainsBeside === true },
    `serving ${modelId} at ${http.url}/v1 (${config.method}, judge ${config.models.judge.kind}); records go to ${file}` +
      (policy.trainsBeside ? '' : '; steps train on the serving thread'),
  );
  const stop = () => {
    loop.stop();
    // A step in flight in the trainer thread is dropped: its samples are journaled, and --resume trains them.
    void trainer?.close();
  };
  return {
    url: http.url,
    loop,
    runFile,
    finished,
    stopServing: stop,
    stop: async () => {
      stop();
      await finished;
    },
  };
}

export async function serveCommand(argv: string[], io: CliIo): Promise<void> {
  const handle = await startServe(argv, io);
  // Stopping is how a server ends, so a signal here ends it normally (exit 0), its run file closed.
  await stoppable(
    () => handle.stopServing(),
    () => handle.finished,
  );
  const s = handle.loop.snapshot();
  if (argv.includes('--json')) io.out(JSON.stringify({ type: 'stopped', step: s.step, version: s.version, file: handle.runFile.file }));
  else io.note(`stopped at step ${s.step} (v${s.version}); run file ${handle.runFile.file}`);
}
