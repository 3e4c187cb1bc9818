/**
 * A served run: the policy behind an OpenAI-compatible endpoint that trains while it serves, the
 * reference's openclaw_api_server on this project's run loop core. An agent (OpenClaw, any
 * OpenAI client) talks to it; each main turn is paired with its next state, judged, buffered and
 * trained on, exactly as in `nextstate run`, and every record is journaled before the reply goes
 * out (src/runtime/run-journal.ts). `nextstate serve` (src/cli/serve.ts) reads the options and
 * starts it here.
 */
import { nodeBackend } from '../gpu/backend-node';
import { resolveWeightFormat } from '../gpu/load';
import type { PeftFiles } from '../gpu/peft';
import { turnCount, type InteractionRecord, type RunRecord, type RuntimeEventRecord } from '../rl/records';
import { replyMessage, usesToolCallTags } from '../rl/tool-calls';
import type { RunLoopOptions } from '../runtime/loop-types';
import { policyCommit, type EnginePolicyService } from '../runtime/policy-service';
import { withPolicyCommit } from '../runtime/policy-commit';
import { loopResume, resumePlan } from '../runtime/resume-plan';
import type { AnyRunConfig, RunConfig } from '../runtime/run-config';
import { journalResumePoint, RunJournal } from '../runtime/run-journal';
import { createNodeServices, type LoadProgressFor } from '../runtime/services-node';
import { ServeLoop } from '../runtime/serve-loop';
import { SessionPairing } from '../runtime/serve-pairing';
import { unfinishedTurns, type UnfinishedTurns } from '../runtime/serve-unfinished';
import { ChatEndpoint, servedMessage } from './serve-chat';
import { startHttpServer, type HttpOptions, type RunningServer } from './serve-http';
import { placeSteps, type TrainerThreadHooks } from './serve-trainer';

export type { TrainerThreadHooks } from './serve-trainer';

/** Sessions named by the server, for requests that name none: conv-0, conv-1, ... */
const AUTO_SESSION = /^conv-(\d+)$/;

/** What a served run was asked for: `nextstate serve`'s options, read and checked. */
export interface ServeOptions {
  /** Where the policy loads from (--model: a folder or a hub id); clients may name the model by it too. */
  model: string;
  /** The run file (--out); its journal and checkpoints sit beside it. */
  file: string;
  /** --resume: go on with the run at `file`, as it was configured. */
  resume: boolean;
  /** --force: replace the run at `file` once the model has loaded. */
  replace: boolean;
  /** A new run's config; called once the run file is known to be free, so a taken one is said first. */
  config(): RunConfig;
  /** Refuses a resumed run's recorded config where the options ask for other values. */
  checkResumed(was: RunConfig): void;
  /** Where it listens, its key, and its limits on requests. */
  http: HttpOptions;
  /** The name clients ask for (GET /v1/models lists it). */
  modelId: string;
  /** Requests generated together at most. */
  maxBatch: number;
  /** Whether a LoRA run's steps train on a thread of their own (off: --no-trainer-thread). */
  trainerThread: boolean;
  /** Bytes the serving copy and the trainer thread's may take together (--max-memory). */
  maxMemory?: number;
}

/** Where a served run tells what it does. */
export interface ServeOutput {
  /** An event: `event` as a JSON line (--json), else `text` as a note, or as progress where `progress`. */
  say(event: object, text: string, progress?: boolean): void;
  /** A record as `nextstate run --json` writes it, where it is an event. */
  eventLine(r: RunRecord): object | null;
  /** Shows a model's download and conversion. */
  loadProgress: LoadProgressFor;
}

/** The run at --out is not one this server continues; the command line must name another. */
export class UnservableRunError extends Error {
  override name = 'UnservableRunError';
}

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
 * Opens the run's journal (new, resumed or replacing one), loads the policy, places its steps and
 * starts the run loop and the HTTP server; returns once it listens.
 *
 * @throws UnservableRunError where the run at `o.file` is not a served one
 */
export async function startServedRun(o: ServeOptions, out: ServeOutput, hooks: { trainer?: TrainerThreadHooks } = {}): Promise<ServeHandle> {
  const { model, file } = o;
  const say = out.say;

  let exportAdapter: () => Promise<PeftFiles> = () => Promise.reject(new Error('the policy is not loaded yet'));
  const runFileOptions = { exportAdapter: () => exportAdapter() };
  // Checked before the journal is opened for appending, so a refused resume leaves the run as it was.
  const checkResumable = (was: AnyRunConfig) => {
    if (was.track === 'toolcall' || was.scenario.id !== 'talk')
      throw new UnservableRunError(`${file} is a headless run (nextstate run wrote it); continue it with nextstate run --resume ${file}`);
    o.checkResumed(was);
    return was;
  };
  const resumed = o.resume ? await RunJournal.resume(file, runFileOptions, checkResumable) : null;
  if (!resumed && o.replace) RunJournal.checkReplaceable(file);
  else if (!resumed) RunJournal.checkNew(file);
  const was = resumed?.config as RunConfig | undefined;
  // A resumed run goes on as it was configured; only where its policy is loaded from may change
  // (the commit it recorded belongs to the model it named).
  const config: RunConfig = was ? { ...was, models: { ...was.models, policy: resumedPolicy(was, model) } } : o.config();

  // The config's backend is one of the engine's (parseRunConfig checks it).
  const backend = await nodeBackend(config.models.policy.backend ?? 'cpu');
  config.models.policy.weightFormat = resolveWeightFormat(config.models.policy.weightFormat, backend);
  const services = await createNodeServices(config, backend, out.loadProgress);
  const { policyModel } = services;
  // A run file written by a client of another server names that server: this command serves a model of its own.
  if (!policyModel)
    throw new UnservableRunError(`${file} is a run whose policy is on a server (models.policy.kind "server"); nextstate serve continues only runs it served`);
  const policy = services.policy as EnginePolicyService;
  exportAdapter = () => policy.exportAdapter();
  const withRefs: RunConfig = withPolicyCommit(
    {
      ...config,
      // The model's files by SHA-256: a run file names its model by content, not by a folder that exists only here.
      modelRefs: { policy: { id: model, files: { ...policy.policy.files }, weightFormat: config.models.policy.weightFormat } },
      seeds: { run: config.seed },
    },
    policyCommit(policy),
  );
  const steps = placeSteps(policy, withRefs, policyModel.config, {
    thread: o.trainerThread,
    maxMemory: o.maxMemory,
    hooks: hooks.trainer,
    unavailable: (e) => say({ type: 'trainer', trainsBeside: false, message: e.message }, e.message),
  });
  const trainer = steps.trainer;
  // Only now: a model that fails to load leaves the run that was there as it was.
  if (!resumed && o.replace) RunJournal.remove(file);
  const runFile = resumed?.run ?? (await RunJournal.create(file, withRefs, withRefs.label ?? 'serve', runFileOptions));

  const tokenizer = policyModel.tokenizer;
  const toolCallTags = usesToolCallTags(tokenizer.chatTemplateText);
  const pairing = new SessionPairing();
  let nextSession = 0;
  let resume: RunLoopOptions['resume'];
  let unfinished: UnfinishedTurns | undefined;
  const records = runFile.all;
  if (o.resume) {
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
    unfinished = unfinishedTurns(records, { reply, paired: (session) => AUTO_SESSION.test(session), run: config });
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
    generationBatch: o.maxBatch,
    onRecord: (r) => {
      if (r.kind === 'runtime_event' && r.event === 'run_resumed') sayResumed(r);
      const line = out.eventLine(r);
      if (line && r.kind === 'train_step') {
        const loss = r.stats.loss === null ? 'n/a' : r.stats.loss.toFixed(4);
        say(line, `step ${r.step} -> v${r.version + 1}: ${r.samples} samples, loss ${loss}${r.skipped ? `, SKIPPED: ${r.skipped}` : ''}`, true);
      }
    },
  });
  const modelId = o.modelId;
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
    http = await startHttpServer(o.http, chat);
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
