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
import type { ClientEnvelope } from '../rl/envelopes';
import { copyMessage, type ChatMessage } from '../rl/messages';
import type { InteractionRecord, RunRecord, RuntimeEventRecord, TokenUpdateRecord, TrainStats, WorkspaceFileRecord } from '../rl/records';
import type { ClosedTurn, TrackerEvents, TurnType } from '../rl/sessions';
import { assembleSample, sampleRecord, type PolicyResponse, type TrainingSample } from '../rl/samples';
import { HintShuffler, type ShuffleWindow } from '../rl/hint-shuffle';
import type { MethodPreset, MethodName } from '../rl/presets';
import type { TextGenerator } from '../generators/generator';
import type { WorkspaceChange } from '../sims/workspace/tools';
import { judgeTurn } from './judge-turn';
import { GenerationBatcher, type RequestTokenListener } from './batcher';
import { PauseGate, Semaphore } from './gate';
import type { PolicyReply, PolicyRequest, PolicyService, ScoreItem, TrainResult } from './policy-service';
import type { LoopSettings, RecordSink, RunController, RunLoopOptions, RunResult, RunSnapshot, RunStatus } from './loop-types';
import { VersionSchedule } from './version-schedule';
import { interruptedTurns, resumeMessage, type GoesOn } from './resume-plan';

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
  /** What the run's clients wrap their users' words in (a served agent's), stripped before judging. */
  envelopes?: readonly ClientEnvelope[];
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

/** A closed turn's place in its session's results, under a fixed schedule (RunLoopCore.judgedResults). */
interface JudgeSlot {
  sample: TrainingSample | null;
  done: Promise<void>;
  settle: () => void;
}

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
  /** The fixed schedule (settings.fixedSchedule), or null where the loop runs free (serve, talk). */
  private readonly schedule: VersionSchedule<{ sessions: readonly string[]; samples: (TrainingSample | null)[] }> | null;
  /** Batches the buffer has released since the loop began (resumed ones included). */
  private releasedBatches = 0;
  /** Finished sessions' results go to the buffer one session after the other, in this chain. */
  private flushing: Promise<void> = Promise.resolve();
  /** Fixed schedule: each session's closed turns, in closing order, and each turn's slot. */
  private readonly slots = new Map<string, JudgeSlot[]>();
  private readonly slotOf = new Map<ClosedTurn<PolicyResponse>, JudgeSlot>();
  /** Fixed schedule: the version of every admitted session (or group) that has not finished. */
  private readonly admitted = new Map<number, number>();
  /** Fixed schedule: the version each running session is answered by, for its session_end record. */
  protected readonly sessionVersions = new Map<string, number>();
  /** Fixed schedule: each running session's index (a homework's phases share one). */
  protected readonly sessionIndexes = new Map<string, number>();
  /** The step being trained now, since when; null between steps. */
  private training: { step: number; since: number } | null = null;
  /** How long the last step took, for a guess at when the one in flight ends. */
  private lastStepMs: number | null = null;
  /** Wake when a step finishes (a session waiting for its version) or the schedule drains. */
  private progressWaiters: (() => void)[] = [];

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
    this.schedule =
      settings.fixedSchedule && settings.trainsHere !== false && policyService.keepVersionsFrom
        ? new VersionSchedule({
            window: settings.workers,
            first: this.sessionsStarted,
            startVersion: this.version,
            lastVersion: this.version + settings.steps - this.step,
          })
        : null;
    this.keepVersions();
  }

  /** Whether a fixed schedule decides which version answers each session (a run repeats for its seed). */
  get fixed(): boolean {
    return this.schedule !== null;
  }

  /**
   * Fixed schedule: resolves with the version session (or group) `index` is answered by, once
   * the sessions that decide it are flushed and that version is trained; null when the run needs
   * no such session or stops first. A free-running loop: undefined at once (the serving version).
   */
  protected async admit(index: number): Promise<number | null | undefined> {
    if (!this.schedule) return undefined;
    const version = await this.schedule.admit(index);
    if (version === null || this.stopping) return null;
    while (this.version < version && !this.stopping) await this.progress();
    if (this.stopping) return null;
    this.admitted.set(index, version);
    this.keepVersions();
    return version;
  }

  /** The version a request of this loop pins: `version` under a fixed schedule, none otherwise. */
  protected pin(version: number | undefined): { version: number } | Record<string, never> {
    return this.schedule && version !== undefined ? { version } : {};
  }

  private progress(): Promise<void> {
    return new Promise((r) => this.progressWaiters.push(r));
  }

  private wakeProgress(): void {
    for (const w of this.progressWaiters.splice(0)) w();
  }

  /** Tells the policy which versions admitted sessions and the next evaluation may still pin. */
  private keepVersions(): void {
    if (this.schedule) this.policyService.keepVersionsFrom!(Math.min(this.version, ...this.admitted.values()));
  }

  /**
   * Fixed schedule: session (or group) `index` is over, with its results in its own order (a
   * sample, or null for a judged turn that gave none). Once every earlier session is, they go to
   * the buffer in index order. A free-running loop buffers as it judges, so this does nothing.
   */
  protected async finishIndex(index: number, sessions: readonly string[], results: (TrainingSample | null)[]): Promise<void> {
    const schedule = this.schedule;
    if (!schedule) return;
    this.admitted.delete(index);
    const ready = schedule.finish(index, { sessions, samples: results });
    const flush = this.flushing.then(async () => {
      for (const session of ready) {
        for (const sample of session.results.samples) {
          if (this.stopping) return;
          if (sample) await this.addSample(sample);
          else this.noteDropped();
        }
        // Its sessions give no more samples: forgotten after their last, as a free run does.
        for (const s of session.results.sessions) this.sessionDone(s);
        schedule.flushed(session.index, this.releasedBatches);
      }
    });
    this.flushing = flush.catch(() => {});
    await flush;
    this.keepVersions();
    if (schedule.drained) this.wakeProgress();
  }

  /**
   * Fixed schedule: once every closed turn of `sessions` is judged, their results in order
   * (session by session, each in the order its turns closed). Free-running: none.
   */
  protected async judgedResults(sessions: readonly string[]): Promise<(TrainingSample | null)[]> {
    if (!this.schedule) return [];
    const slots = sessions.flatMap((s) => this.slots.get(s) ?? []);
    await Promise.all(slots.map((slot) => slot.done));
    for (const s of sessions) this.slots.delete(s);
    return slots.map((slot) => slot.sample);
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
      this.releasedBatches++;
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

  /** The step training now and since when, with the last step's duration (a guess at this one's); null between steps. */
  stepInFlight(): { step: number; since: number; lastStepMs: number | null } | null {
    return this.training && { ...this.training, lastStepMs: this.lastStepMs };
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

  /**
   * A resumed run's first record: where it went on, and the turns of the interrupted step it
   * leaves behind, listed so that no reader takes them for this run's turns or for trained ones.
   */
  private async markResume(): Promise<void> {
    const resume = this.options.resume;
    if (!resume?.logged) return;
    // Where the policy's server judges and trains, no turn waited on this loop.
    const interrupted = this.settings.trainsHere === false ? null : interruptedTurns(resume.logged, { fixed: this.fixed, goesOn: this.goesOn() });
    const message = resumeMessage({
      step: this.step,
      version: this.version,
      samples: resume.samples?.length ?? 0,
      dropped: resume.dropped ?? 0,
      goesOn: this.goingOn(),
      interrupted,
    });
    await this.commit([
      { kind: 'runtime_event', version: this.version, ts: this.now(), step: this.step, event: 'run_resumed', message, ...(interrupted ? { interrupted } : {}) },
    ]);
  }

  /** The logged turns a resumed loop goes on with besides its buffer (a served run's); none by default. */
  protected goesOn(): GoesOn | undefined {
    return undefined;
  }

  /** Those turns in words, for the resume's line; null when there are none. */
  protected goingOn(): string | null {
    return null;
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
    this.schedule?.cancel();
    this.wakeProgress();
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
    // A record that cannot be kept (a full disk) ends the run, whoever committed it: a served
    // request's caller only hears of its own turn.
    await this.sink.append(records).catch((e) => {
      this.fail(e);
      throw e;
    });
    for (const r of records) this.options.onRecord?.(r);
  }

  /** Runs until the configured number of steps (and the last evaluation) is done, or stop(). */
  async run(): Promise<RunResult> {
    const every = this.options.snapshotEveryMs ?? 1000;
    const ticker = every > 0 && this.options.onSnapshot ? setInterval(() => void this.tick(), every) : null;
    await this.markResume().catch((e) => this.fail(e));
    await this.prepare().catch((e) => this.fail(e));
    const trainer = this.trainLoop().catch((e) => {
      this.fail(e);
      return false;
    });
    const workers = Array.from({ length: this.settings.workers }, () => this.worker().catch((e) => this.fail(e)));
    const completed = await trainer;
    // No step takes batches any more: sessions that still run (below) must not wait for one to.
    for (const w of this.batchWaiters.splice(0)) w();
    // Under a fixed schedule the sessions admitted before the last batch filled run to their end,
    // so that every run of the config and seed holds the same sessions.
    while (completed && this.schedule && !this.schedule.drained && !this.stopping) await this.progress();
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
    while (!this.stopping && this.step < this.settings.steps && this.batches.length > MAX_WAITING_BATCHES) {
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
      events.ended.map((e) => {
        // The turn that waited for a next state and got none: no judge will see it.
        const unjudged = events.closed.find((t) => t.session === e.session && t.nextState === null);
        return {
          kind: 'session_end' as const,
          version: this.sessionVersions.get(e.session) ?? this.version,
          ts: e.at,
          session: e.session,
          reason: e.reason,
          turns: e.turns,
          mainTurns: e.mainTurns,
          ...(unjudged ? { unjudgedTurn: unjudged.turn } : {}),
        };
      }),
    );
    for (const e of events.ended) this.releaseIfDone(e.session);
    const slots = this.schedule ? events.closed.map((turn) => this.slotFor(turn)) : [];
    for (const [i, turn] of events.closed.entries()) {
      await this.offPath(async () => {
        try {
          await judge(turn);
        } finally {
          slots[i]?.settle();
          this.unjudged.set(turn.session, this.unjudged.get(turn.session)! - 1);
          this.releaseIfDone(turn.session);
        }
      });
    }
  }

  /** Under a fixed schedule: the sessions a shuffled hint for `turn` may come from, all judged before its session began. */
  private shuffleWindow(turn: ClosedTurn<PolicyResponse>): { shuffleWindow: ShuffleWindow } | Record<string, never> {
    const rank = this.sessionIndexes.get(turn.session);
    if (!this.schedule || rank === undefined) return {};
    const w = this.settings.workers;
    return { shuffleWindow: { rank, turn: turn.turn, from: rank - 2 * w + 1, below: rank - w + 1 } };
  }

  /** A closed turn's slot in its session's results, in closing order (fixed schedule). */
  private slotFor(turn: ClosedTurn<PolicyResponse>): JudgeSlot {
    let settle!: () => void;
    const slot: JudgeSlot = { sample: null, done: new Promise<void>((r) => (settle = r)), settle: () => settle() };
    const list = this.slots.get(turn.session) ?? [];
    list.push(slot);
    this.slots.set(turn.session, list);
    this.slotOf.set(turn, slot);
    return slot;
  }

  private releaseIfDone(session: string): void {
    if (!this.ended.has(session) || (this.unjudged.get(session) ?? 0) > 0) return;
    this.ended.delete(session);
    this.unjudged.delete(session);
    this.sessionVersions.delete(session);
    this.sessionIndexes.delete(session);
    // Under a fixed schedule its samples are still to be buffered: finishIndex forgets it after them.
    if (!this.schedule) this.sessionDone(session);
  }

  /**
   * A closed main turn judged (off the request path), its judges' records committed and its
   * sample buffered, or counted dropped: every personal-track loop's judging. `tools`: the tools
   * its prompt was rendered with where they vary by request (a served agent's), so the teacher
   * scores the answer under the prompt it was sampled from.
   */
  protected async judgeAndBuffer(turn: ClosedTurn<PolicyResponse>, roles: JudgeRoles, run: JudgedRun, tools?: readonly object[]): Promise<void> {
    const slot = this.slotOf.get(turn);
    this.slotOf.delete(turn);
    if (this.stopping) return;
    const { policy } = roles;
    // A fixed schedule scores 'current' as the version that wrote the turn, not whichever serves now.
    const pinned = this.pin(turn.version);
    const withTools = (items: ScoreItem[]) => items.map((it) => ({ ...it, ...(tools ? { tools } : {}), ...pinned }));
    const judged = await judgeTurn(turn, {
      judge: roles.judge,
      hintJudge: roles.hintJudge,
      policy:
        tools || this.schedule
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
      ...this.shuffleWindow(turn),
      ...(run.rewriteHint ? { rewriteHint: run.rewriteHint } : {}),
      ...(run.envelopes ? { envelopes: run.envelopes } : {}),
    });
    if (this.stopping) return;
    const assembled = assembleSample(turn, judged.judgement, run.method, run.preset.advantage.weights);
    const sample = assembled && tools ? { ...assembled, tools } : assembled;
    // A free-running loop commits the judgement and its sample together: a kill between two
    // commits would leave a judged turn that never trains (a resumed server rebuilds one that a
    // cut-short write leaves so: serve-unfinished.ts).
    if (slot || !sample) await this.commit(judged.records);
    if (slot) slot.sample = sample;
    else if (!sample) this.noteDropped();
    else await this.addSample(sample, judged.records);
  }

  /** Queues a judged sample, logs it (after `judgement`, its judges' records) as the buffer tagged it, and hands a full batch to the trainer. */
  protected async addSample(sample: TrainingSample, judgement: RunRecord[] = []): Promise<void> {
    const added = this.buffer.add(sample);
    await this.commit([...judgement, sampleRecord(added.sample, this.now())]);
    if (added.batch) {
      this.batches.push(added.batch);
      this.releasedBatches++;
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
      ...(s.lossMask ? { lossMask: s.lossMask } : {}),
      ...(s.opdWeight !== 0 ? { opdWeight: s.opdWeight } : {}),
      ...(s.opdWeight !== 0 && s.opdClip ? { opdClip: s.opdClip } : {}),
      ...(s.opdTopK ? { opdTopK: s.opdTopK } : {}),
    }));
    this.training = { step: this.step + 1, since: this.now() };
    let result: TrainResult;
    try {
      await this.sink.stepStarting?.({ step: this.training.step, samples: batch.samples.length, at: this.training.since });
      result = await this.policyService.train(items, (i, n) => this.options.onProgress?.({ phase: 'train', done: i, total: n }));
      this.lastStepMs = this.now() - this.training.since;
    } finally {
      this.training = null;
    }
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
    this.keepVersions();
    this.wakeProgress();
    this.options.onSnapshot?.(this.snapshot());
  }
}
