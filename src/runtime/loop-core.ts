/**
 * What every track's run loop shares: concurrent workers whose generation requests are merged
 * by one GenerationBatcher, judging off the workers' path with back-pressure, the sample buffer
 * that releases batches of N, the trainer (PolicyService.train, then train_step, token_update
 * and version_boundary records), the evaluation schedule (before training, every K steps and at
 * the last step), pause/resume/stop, snapshots, and the record sink.
 *
 * A track supplies its workers (what a session or a group of rollouts is, how it is judged, what
 * samples it buffers) and its evaluation. Plain TypeScript with injected services and clock: it
 * runs unchanged in Node (the CLI) and in the page.
 */
import { SampleBuffer, type Batch, type BufferedSample } from '../rl/buffer';
import { copyMessage, type ChatMessage } from '../rl/messages';
import type { InteractionRecord, RunRecord, RuntimeEventRecord, TokenUpdateRecord, TrainStats, WorkspaceFileRecord } from '../rl/records';
import type { ClosedTurn, TrackerEvents, TurnType } from '../rl/sessions';
import { assembleSample, sampleRecord, type PolicyResponse, type TrainingSample } from '../rl/samples';
import { HintShuffler } from '../rl/hint-shuffle';
import type { MethodPreset, MethodName } from '../rl/presets';
import type { TextGenerator } from '../generators/generator';
import type { WorkspaceChange } from '../sims/workspace/tools';
import { judgeTurn } from './judge-turn';
import { GenerationBatcher, type RequestTokenListener } from './batcher';
import { PauseGate, Semaphore } from './gate';
import type { PolicyReply, PolicyRequest, PolicyService, ScoreItem } from './policy-service';
import type { LoopSettings, RecordSink, RunController, RunLoopOptions, RunResult, RunSnapshot, RunStatus } from './loop-types';

/** The roles that judge a turn. */
export interface JudgeRoles {
  judge: TextGenerator;
  hintJudge: TextGenerator;
  policy: Pick<PolicyService, 'score' | 'scoreTopK'>;
}

/** What of a run's config judging reads. */
export interface JudgedRun {
  method: MethodName;
  preset: MethodPreset;
  seed: number;
  /** The judge's hints rewritten for another user: the scenario's, for the other-child control (JudgeDeps.rewriteHint). */
  rewriteHint?: { user: string; rewrite: (hint: string) => string };
}

/** The run-log record of one policy call: the prompt as sent and the reply with its tokens. */
export function interactionRecord(
  reply: PolicyReply,
  ts: number,
  where: { session: string; turn: number; turnType: TurnType; messages: readonly ChatMessage[]; tools?: readonly object[] },
): InteractionRecord {
  return {
    kind: 'interaction',
    version: reply.version,
    ts,
    session: where.session,
    turn: where.turn,
    turnType: where.turnType,
    messages: where.messages.map(copyMessage),
    response: reply.text,
    tokenIds: reply.tokenIds,
    logprobs: reply.logprobs,
    tokenTexts: reply.tokenTexts,
    ...(where.tools ? { tools: structuredClone([...where.tools]) } : {}),
    ...(reply.promptIds ? { promptIds: [...reply.promptIds] } : {}),
    startedAt: reply.startedAt,
    finishedAt: reply.finishedAt,
  };
}

/** The run-log record of a workspace file's change (WorkspaceFileRecord). */
export function workspaceFileRecord(
  change: WorkspaceChange,
  version: number,
  ts: number,
  where: { workspace: string; session: string; turn?: number },
): WorkspaceFileRecord {
  return {
    kind: 'workspace_file',
    version,
    ts,
    workspace: where.workspace,
    session: where.session,
    ...(where.turn !== undefined ? { turn: where.turn } : {}),
    ...change,
  };
}

const JUDGE_CONCURRENCY = 8;
const MAX_WAITING_BATCHES = 1;
const MAX_GENERATION_BATCH = 32;

export function isAbort(e: unknown): boolean {
  return (e as { name?: string })?.name === 'AbortError';
}

/** Evaluations happen before the first step and after every K steps, and after the last one. */
export function evaluationDue(step: number, evalEvery: number, steps: number): boolean {
  return evalEvery > 0 && (step === 0 || step % evalEvery === 0 || step === steps);
}

const finite = (x: number | null) => (x !== null && Number.isFinite(x) ? x : null);

export abstract class RunLoopCore implements RunController {
  protected readonly gate = new PauseGate();
  protected readonly abort = new AbortController();
  protected readonly batcher: GenerationBatcher;
  protected readonly now: () => number;
  private readonly buffer: SampleBuffer<TrainingSample>;
  private readonly judgeSlots = new Semaphore(JUDGE_CONCURRENCY);
  private readonly batches: Batch<TrainingSample>[] = [];
  private batchWaiters: (() => void)[] = [];
  private status: RunStatus = 'running';
  protected step: number;
  protected version: number;
  protected sessionsStarted: number;
  private tokenLog: { at: number; tokens: number }[] = [];
  private failure: unknown = null;
  private trainerWake: (() => void) | null = null;
  private readonly judging = new Set<Promise<void>>();
  private trainRate: number | null = null;
  private memory: RunSnapshot['memory'] = null;
  /** The accepted hints the shuffled-hint control draws from; a resumed run starts it empty. */
  private readonly shuffler = new HintShuffler();
  /** Judged turns that gave no sample since the last step record. */
  private dropped = 0;
  /** Per session, closed turns still being judged and buffered (closeTurns). */
  private readonly unjudged = new Map<string, number>();
  /** Sessions that ended while some of their turns were still being judged (closeTurns). */
  private readonly ended = new Set<string>();
  /** Main turns closed so far where the policy's server trains (settings.trainsHere false). */
  private closedOnServer = 0;

  constructor(
    private readonly settings: LoopSettings,
    protected readonly policyService: PolicyService,
    private readonly sink: RecordSink,
    protected readonly options: RunLoopOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.batcher = new GenerationBatcher(policyService, options.generationBatch ?? MAX_GENERATION_BATCH);
    this.buffer = new SampleBuffer({ batchSize: settings.batchSize, zeroAdvantage: settings.zeroAdvantage });
    this.step = options.resume?.step ?? 0;
    this.version = options.resume?.version ?? 0;
    this.sessionsStarted = options.resume?.sessionsStarted ?? 0;
    for (const s of options.resume?.samples ?? []) this.rebuffer(s);
  }

  /** Puts a logged, untrained sample back into the buffer, keeping its logged loss mask. */
  private rebuffer(s: BufferedSample<TrainingSample>): void {
    const { trainable, promoted, ...sample } = s;
    const added = this.buffer.add(sample);
    added.sample.trainable = trainable;
    added.sample.promoted = promoted;
    if (added.batch) {
      added.batch.trainable = added.batch.samples.filter((x) => x.trainable).length;
      this.batches.push(added.batch);
    }
  }

  /** One worker: starts sessions (or groups) until the run stops. `settings.workers` run at once. */
  protected abstract worker(): Promise<void>;

  /** Work before the workers and the trainer start (e.g. the teacher scenario's student attempts). */
  protected async prepare(): Promise<void> {}

  /** The track's evaluation of the current policy; it commits its own records. */
  protected abstract evaluate(): Promise<void>;

  snapshot(): RunSnapshot {
    const t = this.now();
    this.tokenLog = this.tokenLog.filter((e) => t - e.at < 5000);
    const span = this.tokenLog.length ? Math.max(1000, t - this.tokenLog[0].at) : 1000;
    return {
      status: this.status,
      step: this.step,
      version: this.version,
      sessionsStarted: this.sessionsStarted,
      generationQueue: this.batcher.queued,
      generating: this.batcher.generating,
      judgeInFlight: this.judgeSlots.inUse,
      judgeWaiting: this.judgeSlots.waiting,
      bufferedSamples: this.buffer.size,
      batchesWaiting: this.batches.length,
      tokensPerSecond: (this.tokenLog.reduce((n, e) => n + e.tokens, 0) * 1000) / span,
      trainTokensPerSecond: this.trainRate,
      memory: this.memory,
    };
  }

  /** The per-second metrics update: throughput, queues and device memory. */
  private async tick(): Promise<void> {
    this.memory = (await this.policyService.memory?.().catch(() => null)) ?? this.memory;
    this.options.onSnapshot?.(this.snapshot());
  }

  pause(): void {
    if (this.status !== 'running') return;
    this.gate.pause();
    this.setStatus('paused');
    void this.event('paused', 'paused: workers wait before their next request; work in flight completes');
  }

  resume(): void {
    if (this.status !== 'paused') return;
    this.gate.resume();
    this.setStatus('running');
    void this.event('resumed', 'resumed');
  }

  /** Logs something that happened to the runtime (also used by the page: a lost GPU device). */
  async event(event: RuntimeEventRecord['event'], message: string): Promise<void> {
    await this.commit([{ kind: 'runtime_event', version: this.version, ts: this.now(), step: this.step, event, message }]).catch((e) => this.fail(e));
  }

  /** Stops workers and drops work in flight; committed records stay. */
  stop(): void {
    if (this.status === 'finished' || this.status === 'stopped') return;
    this.setStatus('stopping');
    this.abort.abort(new DOMException('run stopped', 'AbortError'));
    this.gate.resume();
    this.trainerWake?.();
    for (const w of this.batchWaiters.splice(0)) w();
  }

  private setStatus(s: RunStatus): void {
    this.status = s;
    this.options.onSnapshot?.(this.snapshot());
  }

  protected get stopping(): boolean {
    return this.abort.signal.aborted;
  }

  protected async commit(records: RunRecord[]): Promise<void> {
    if (!records.length) return;
    await this.sink.append(records);
    for (const r of records) this.options.onRecord?.(r);
  }

  /** Runs until the configured number of steps (and the last evaluation) is done, or stop(). */
  async run(): Promise<RunResult> {
    const every = this.options.snapshotEveryMs ?? 1000;
    const ticker = every > 0 && this.options.onSnapshot ? setInterval(() => void this.tick(), every) : null;
    await this.prepare().catch((e) => this.fail(e));
    const trainer = this.trainLoop().catch((e) => {
      this.fail(e);
      return false;
    });
    const workers = Array.from({ length: this.settings.workers }, () => this.worker().catch((e) => this.fail(e)));
    const completed = await trainer;
    this.stop();
    await Promise.all(workers);
    await Promise.allSettled([...this.judging]);
    if (ticker) clearInterval(ticker);
    if (this.failure) {
      this.status = 'failed';
      throw this.failure;
    }
    this.setStatus(completed ? 'finished' : 'stopped');
    return { status: this.status, step: this.step, version: this.version };
  }

  protected fail(e: unknown): void {
    if (isAbort(e) && this.stopping) return;
    this.failure ??= e;
    this.stop();
  }

  /**
   * One generation through the batcher; null when the run stopped meanwhile. `signal` also
   * cancels it (a served client that went away), with an AbortError. `onToken` hears each token
   * as it is drawn (a served client's stream).
   */
  protected async generate(request: PolicyRequest, signal?: AbortSignal, onToken?: RequestTokenListener): Promise<PolicyReply | null> {
    try {
      const reply = await this.batcher.request(request, signal ? AbortSignal.any([this.abort.signal, signal]) : this.abort.signal, onToken);
      this.tokenLog.push({ at: this.now(), tokens: reply.tokenIds.length });
      return reply;
    } catch (e) {
      if (isAbort(e) && this.stopping) return null;
      throw e;
    }
  }

  /** Workers wait while paused or while batches pile up faster than training takes them. */
  protected async waitForCapacity(): Promise<void> {
    await this.gate.wait();
    while (!this.stopping && this.batches.length > MAX_WAITING_BATCHES) {
      await new Promise<void>((r) => this.batchWaiters.push(r));
    }
  }

  /**
   * Runs judging work off the worker's path: waits for one of a bounded number of slots
   * (back-pressure), then returns while the task runs. A failing task fails the run.
   */
  protected async offPath(task: () => Promise<void>): Promise<void> {
    await this.judgeSlots.acquire();
    const running: Promise<void> = task()
      .catch((e) => this.fail(e))
      .finally(() => {
        this.judgeSlots.release();
        this.judging.delete(running);
      });
    this.judging.add(running);
  }

  /** A judged turn gave no sample (the method drops it); the next step record counts it. */
  protected noteDropped(): void {
    this.dropped++;
  }

  /**
   * No more samples will come for this session: the buffer's at-least-one rule forgets it, so
   * its set of sessions does not grow for the whole run.
   */
  protected sessionDone(session: string): void {
    this.buffer.forgetSession(session);
  }

  /**
   * What a session tracker's events mean for the run: a session_end record per ended session,
   * then `judge` off the path for each closed turn (bounded: back-pressure). A session is let go
   * of (sessionDone) once it has ended and all its closed turns are judged.
   */
  protected async closeTurns<R extends PolicyResponse>(events: TrackerEvents<R>, judge: (turn: ClosedTurn<R>) => Promise<void>): Promise<void> {
    // Counted before anything awaits, so an ended session is not let go while its turns wait.
    for (const turn of events.closed) this.unjudged.set(turn.session, (this.unjudged.get(turn.session) ?? 0) + 1);
    for (const e of events.ended) this.ended.add(e.session);
    await this.commit(
      events.ended.map((e) => ({
        kind: 'session_end' as const,
        version: this.version,
        ts: e.at,
        session: e.session,
        reason: e.reason,
        turns: e.turns,
        mainTurns: e.mainTurns,
      })),
    );
    for (const e of events.ended) this.releaseIfDone(e.session);
    for (const turn of events.closed) {
      await this.offPath(async () => {
        try {
          await judge(turn);
        } finally {
          this.unjudged.set(turn.session, this.unjudged.get(turn.session)! - 1);
          this.releaseIfDone(turn.session);
        }
      });
    }
  }

  private releaseIfDone(session: string): void {
    if (!this.ended.has(session) || (this.unjudged.get(session) ?? 0) > 0) return;
    this.ended.delete(session);
    this.unjudged.delete(session);
    this.sessionDone(session);
  }

  /**
   * A closed main turn judged (off the request path), its judges' records committed and its
   * sample buffered, or counted dropped: every personal-track loop's judging. `tools`: the tools
   * its prompt was rendered with where they vary by request (a served agent's), so the teacher
   * scores the answer under the prompt it was sampled from.
   */
  protected async judgeAndBuffer(turn: ClosedTurn<PolicyResponse>, roles: JudgeRoles, run: JudgedRun, tools?: readonly object[]): Promise<void> {
    if (this.stopping) return;
    const { policy } = roles;
    const withTools = (items: ScoreItem[]) => (tools ? items.map((it) => ({ ...it, tools })) : items);
    const judged = await judgeTurn(turn, {
      judge: roles.judge,
      hintJudge: roles.hintJudge,
      policy: tools
        ? {
            score: (items, teacher) => policy.score(withTools(items), teacher),
            ...(policy.scoreTopK ? { scoreTopK: (items, source, k) => policy.scoreTopK!(withTools(items), source, k) } : {}),
          }
        : policy,
      preset: run.preset,
      seed: run.seed,
      now: this.now,
      signal: this.abort.signal,
      shuffler: this.shuffler,
      ...(run.rewriteHint ? { rewriteHint: run.rewriteHint } : {}),
    });
    if (this.stopping) return;
    await this.commit(judged.records);
    const sample = assembleSample(turn, judged.judgement, run.method, run.preset.advantage.weights);
    if (!sample) {
      this.noteDropped();
      return;
    }
    await this.addSample(tools ? { ...sample, tools } : sample);
  }

  /** Queues a judged sample, logs it as the buffer tagged it, and hands a full batch to the trainer. */
  protected async addSample(sample: TrainingSample): Promise<void> {
    const added = this.buffer.add(sample);
    await this.commit([sampleRecord(added.sample, this.now())]);
    if (added.batch) {
      this.batches.push(added.batch);
      this.trainerWake?.();
    }
  }

  /**
   * True when it ran every step and the evaluation due after the last one; false when a stop
   * came first, even during that last evaluation (whose record is then missing).
   */
  private async trainLoop(): Promise<boolean> {
    const { steps, evalEvery } = this.settings;
    const evaluated = this.options.resume?.evaluated ?? this.step > 0;
    if (!evaluated && evaluationDue(this.step, evalEvery, steps)) await this.evaluate();
    while (!this.stopping && this.step < steps) {
      if (this.settings.trainsHere === false) {
        if (!(await this.nextServerStep())) return false;
      } else {
        const batch = await this.nextBatch();
        if (!batch) return false;
        await this.gate.wait();
        if (this.stopping) return false;
        await this.train(batch);
      }
      if (evaluationDue(this.step, evalEvery, steps)) await this.evaluate();
    }
    return this.step >= steps;
  }

  /**
   * A main turn closed where the policy's server judges and trains it: counted, not judged.
   * The server saw its next state in the session's next request (or its end).
   */
  protected turnClosedOnServer(): void {
    this.closedOnServer++;
    this.trainerWake?.();
  }

  /** Waits for the next `batchSize` closed main turns (a remote policy's step); false when the run stops first. */
  private async nextServerStep(): Promise<boolean> {
    while (this.closedOnServer < (this.step + 1) * this.settings.batchSize) {
      if (this.stopping) return false;
      await new Promise<void>((r) => (this.trainerWake = r));
      this.trainerWake = null;
    }
    await this.gate.wait();
    if (this.stopping) return false;
    this.step++;
    this.version = this.policyService.servingVersion();
    this.options.onSnapshot?.(this.snapshot());
    return true;
  }

  private async nextBatch(): Promise<Batch<TrainingSample> | null> {
    while (!this.batches.length) {
      if (this.stopping) return null;
      await new Promise<void>((r) => (this.trainerWake = r));
      this.trainerWake = null;
    }
    const batch = this.batches.shift()!;
    for (const w of this.batchWaiters.splice(0)) w();
    return batch;
  }

  private async train(batch: Batch<TrainingSample>): Promise<void> {
    const tools = this.settings.tools;
    const items = batch.samples.map((s: BufferedSample<TrainingSample>) => ({
      messages: s.messages,
      ...((s.tools ?? tools) ? { tools: s.tools ?? tools } : {}),
      tokenIds: [...s.response.tokenIds],
      advantages: s.advantages,
      rolloutLogp: [...s.response.logprobs],
      trainable: s.trainable,
      ...(s.opdWeight !== 0 ? { opdWeight: s.opdWeight } : {}),
      ...(s.opdWeight !== 0 && s.opdClip ? { opdClip: s.opdClip } : {}),
      ...(s.opdTopK ? { opdTopK: s.opdTopK } : {}),
    }));
    const result = await this.policyService.train(items, (i, n) => this.options.onProgress?.({ phase: 'train', done: i, total: n }));
    const from = this.version;
    this.step++;
    if (result.stats.stepMs > 0) this.trainRate = (result.stats.tokens * 1000) / result.stats.stepMs;
    this.version = result.version;
    const s = result.stats;
    const stats: TrainStats = {
      loss: finite(s.loss),
      policyLoss: finite(s.policyLoss),
      kl: finite(s.kl),
      clipFracLow: finite(s.clipFracLow),
      clipFracHigh: finite(s.clipFracHigh),
      entropy: finite(s.entropy),
      meanAbsAdv: finite(s.meanAbsAdv),
      gradNorm: finite(s.gradNorm),
      tokens: s.tokens,
      stepMs: finite(s.stepMs),
      logpGap: finite(s.rolloutGap),
      opdGap: finite(s.opdGap),
    };
    const dropped = this.dropped;
    this.dropped = 0;
    const updates: TokenUpdateRecord[] = (s.perSample ?? []).flatMap((t, i) => {
      const sample = batch.samples[i];
      if (!t) return [];
      return [
        {
          kind: 'token_update' as const,
          version: sample.version,
          ts: result.finishedAt,
          session: sample.session,
          turn: sample.turn,
          step: this.step,
          before: t.before,
          after: t.after,
          advantages: t.advantages,
        },
      ];
    });
    await this.commit([
      { kind: 'train_step', version: from, ts: result.finishedAt, step: this.step, samples: batch.samples.length, stats, skipped: s.skipped, dropped },
      ...updates,
      { kind: 'version_boundary', version: this.version, ts: result.finishedAt, step: this.step, from, to: this.version },
    ]);
    this.options.onSnapshot?.(this.snapshot());
  }
}
