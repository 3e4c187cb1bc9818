/**
 * `nextstate serve`: the policy behind an OpenAI-compatible endpoint that trains while it serves.
 * This reads and checks its options; the server itself (the journal, the policy, the serve loop,
 * the trainer thread and the HTTP server) is src/server/serve-run.ts.
 */
import { isIP } from 'node:net';
import { basename } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { METHODS, makePreset, parsePreset, type MethodName, type MethodPreset, type PresetOverrides } from '../rl/presets';
import { FILE_LIMITS, InputFileError, readLocalText } from '../models/local-file';
import type { GeneratorSpec, RunConfig } from '../runtime/run-config';
import { parseRunConfig } from '../runtime/run-config';
import { isLoopback } from '../runtime/services-node';
import { SERVED_STEPS } from '../runtime/serve-loop';
import { byteSize, durationMs, isPositiveInt, number, parse, required, UsageError } from './args';
import { applySets, SET_NOTE, SET_OPTION, SET_USAGE, setValues } from './overrides';
import {
  BACKEND_OPTION,
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
import { hostName } from '../server/serve-host';
import { startServedRun, UnservableRunError, type ServeHandle, type TrainerThreadHooks } from '../server/serve-run';
import type { CliIo } from './io';
import { progressFor } from './load-progress';
import { FORCE_OPTION, notStdout } from './output';
import { stoppable } from './signals';

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

export type { ServeHandle, TrainerThreadHooks } from '../server/serve-run';

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
  const maxBodyBytes = number(v, 'max-body-bytes', DEFAULTS.maxBodyBytes, isPositiveInt);
  const maxInFlight = number(v, 'max-in-flight', DEFAULTS.maxInFlight, isPositiveInt);
  const maxBatch = number(v, 'max-batch', DEFAULTS.maxBatch, isPositiveInt);
  if (v.resume && v.force) throw new UsageError('--resume continues the run at --out and --force replaces it; give one');
  // --json: every event on stdout, for the program that started the server; else a note on stderr.
  const say = (line: object, text: string, progress = false) => {
    if (v.json) io.out(JSON.stringify(line));
    else if (progress) io.progress(text);
    else io.note(text);
  };
  try {
    return await startServedRun(
      {
        model,
        file,
        resume: v.resume === true,
        replace: v.force === true,
        config: () => serveConfig(v, model),
        checkResumed: (was) => checkResumedOptions(v, was, model, file),
        http: { host, port, apiKey, maxBodyBytes, maxInFlight, allowOrigins, allowHosts },
        modelId: typeof v['served-model-name'] === 'string' ? v['served-model-name'] : basename(model),
        maxBatch,
        trainerThread: !v['no-trainer-thread'],
        maxMemory,
      },
      { say, eventLine, loadProgress: progressFor(io) },
      hooks,
    );
  } catch (e) {
    // A run the server does not continue is the command line's to fix: another --out.
    throw e instanceof UnservableRunError ? new UsageError(e.message) : e;
  }
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
