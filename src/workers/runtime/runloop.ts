/**
 * The run loop: many simulated (or real) sessions at once, their generation requests batched,
 * each closed main turn judged without blocking the sessions, judged samples buffered into
 * batches, a training step whenever a batch is ready (serving goes on with the previous
 * version meanwhile), and the personalization evaluation before training and every K steps.
 *
 * Plain TypeScript with injected services and clock: it runs unchanged in Node (the CLI's
 * headless runs) and in the page, where the services are web workers.
 */
import { SampleBuffer, type Batch, type BufferedSample } from '../../rl/buffer';
import type { ChatMessage } from '../../rl/messages';
import type { EvaluationRecord, InteractionRecord, RunRecord, RuntimeEventRecord, TokenUpdateRecord, TrainStats } from '../../rl/records';
import { assembleSample, sampleRecord, type PolicyResponse, type TrainingSample } from '../../rl/samples';
import { SessionTracker, type ClosedTurn, type TrackerEvents } from '../../rl/sessions';
import { scoreEvaluation } from '../../sims/evaluator';
import type { TextGenerator } from '../../sims/generator';
import type { Problem } from '../../sims/problems/problem';
import { createScenario, isDone, simulatorMessages, simulatorReply, type Scenario } from '../../sims/scenarios/index';
import { GenerationBatcher } from './batcher';
import { PauseGate, Semaphore } from './gate';
import { judgeTurn } from './judge-turn';
import type { PolicyService } from './policy-service';
import type { RunConfig } from './run-config';

export interface RunServices {
  policy: PolicyService;
  /** null when the person at the keyboard is the user (talk yourself). */
  user: TextGenerator | null;
  judge: TextGenerator;
  hintJudge: TextGenerator;
  evaluator: TextGenerator | null;
}

/** Where records go; `append` resolves only once they are committed (storage, a file). */
export interface RecordSink {
  append(records: RunRecord[]): Promise<void>;
}

export type RunStatus = 'running' | 'paused' | 'stopping' | 'finished' | 'stopped' | 'failed';

export interface RunSnapshot {
  status: RunStatus;
  step: number;
  version: number;
  sessionsStarted: number;
  generationQueue: number;
  judgeInFlight: number;
  judgeWaiting: number;
  bufferedSamples: number;
  batchesWaiting: number;
  /** Generated tokens per second over the last few seconds. */
  tokensPerSecond: number;
  /** Tokens per second of the last training step (forward, backward and optimizer). */
  trainTokensPerSecond: number | null;
  /** The policy engine's device memory, as of the last per-second update. */
  memory: { allocated: number; peak: number } | null;
}

export interface RunLoopOptions {
  now?: () => number;
  /** Called after each record is committed: the UI shows only what storage holds. */
  onRecord?: (r: RunRecord) => void;
  onSnapshot?: (s: RunSnapshot) => void;
  onProgress?: (p: { phase: 'train' | 'evaluate'; done: number; total: number }) => void;
  /** How often onSnapshot fires while the run goes (default every second; 0 = only on changes). */
  snapshotEveryMs?: number;
  /** Continue a saved run: its step and version (the adapter is restored by the caller). */
  resume?: {
    step: number;
    version: number;
    sessionsStarted: number;
    /**
     * Samples that were buffered but not trained on when the run stopped (storage's
     * resumePoint().buffered), oldest first. They go back into the buffer with the loss mask
     * they were logged with, and no new sample record is written: their records are in the log.
     */
    samples?: BufferedSample<TrainingSample>[];
  };
}

/**
 * Thrown (or rejected with) by a user's generator to end the conversation on request: the
 * session ends explicitly, its last answer closes without a next state, and the worker starts
 * the next session. Talk yourself's "New conversation" button uses it.
 */
export class EndSessionRequest extends Error {
  override name = 'EndSessionRequest';
  constructor(message = 'the user ended the conversation') {
    super(message);
  }
}

const JUDGE_CONCURRENCY = 8;
/** The side session in which the policy writes the teacher scenario's student attempts. */
export const STUDENT_WORK_SESSION = 'student-work';
const MAX_WAITING_BATCHES = 1;

export class RunLoop {
  readonly scenario: Scenario;
  private readonly gate = new PauseGate();
  private readonly abort = new AbortController();
  private readonly batcher: GenerationBatcher;
  private readonly tracker: SessionTracker<PolicyResponse>;
  private readonly buffer: SampleBuffer<TrainingSample>;
  private readonly judgeSlots = new Semaphore(JUDGE_CONCURRENCY);
  private readonly batches: Batch<TrainingSample>[] = [];
  private batchWaiters: (() => void)[] = [];
  private readonly now: () => number;
  private status: RunStatus = 'running';
  private step: number;
  private version: number;
  private sessionsStarted: number;
  private tokenLog: { at: number; tokens: number }[] = [];
  private failure: unknown = null;
  private trainerWake: (() => void) | null = null;
  private readonly judging = new Set<Promise<void>>();
  private trainRate: number | null = null;
  private memory: RunSnapshot['memory'] = null;

  constructor(
    readonly config: RunConfig,
    private readonly services: RunServices,
    private readonly problems: Problem[],
    private readonly sink: RecordSink,
    private readonly options: RunLoopOptions = {},
  ) {
    this.scenario = createScenario(config.scenario);
    this.now = options.now ?? Date.now;
    this.batcher = new GenerationBatcher(services.policy, 32);
    this.tracker = new SessionTracker({ idleTimeoutMs: config.preset.session.idleTimeoutMs, now: this.now });
    this.buffer = new SampleBuffer({ batchSize: config.preset.batch.size, zeroAdvantage: config.preset.batch.zeroAdvantage });
    this.step = options.resume?.step ?? 0;
    this.version = options.resume?.version ?? 0;
    this.sessionsStarted = options.resume?.sessionsStarted ?? 0;
    if (problems.length === 0) throw new Error('the run has no problems to start sessions from');
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
    this.memory = (await this.services.policy.memory?.().catch(() => null)) ?? this.memory;
    this.options.onSnapshot?.(this.snapshot());
  }

  pause(): void {
    if (this.status !== 'running') return;
    this.gate.pause();
    this.setStatus('paused');
    void this.event('paused', 'paused: sessions wait before their next request; work in flight completes');
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

  /** Stops sessions and drops work in flight; committed records stay. */
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

  private get stopping(): boolean {
    return this.abort.signal.aborted;
  }

  private async commit(records: RunRecord[]): Promise<void> {
    if (!records.length) return;
    await this.sink.append(records);
    for (const r of records) this.options.onRecord?.(r);
  }

  /** Runs until the configured number of steps (and the last evaluation) is done, or stop(). */
  async run(): Promise<{ status: RunStatus; step: number; version: number }> {
    const every = this.options.snapshotEveryMs ?? 1000;
    const ticker = every > 0 && this.options.onSnapshot ? setInterval(() => void this.tick(), every) : null;
    await this.prepareStudentWork().catch((e) => this.fail(e));
    const trainer = this.trainLoop().catch((e) => this.fail(e));
    const sessions = Array.from({ length: this.config.schedule.concurrentSessions }, () => this.sessionWorker().catch((e) => this.fail(e)));
    await trainer;
    this.stop();
    await Promise.all(sessions);
    await Promise.allSettled([...this.judging]);
    if (ticker) clearInterval(ticker);
    if (this.failure) {
      this.status = 'failed';
      throw this.failure;
    }
    this.setStatus(this.step >= this.config.schedule.steps ? 'finished' : 'stopped');
    return { status: this.status, step: this.step, version: this.version };
  }

  /**
   * The teacher grades a student's attempt at each problem: the policy writes it once, before
   * any session, as a logged side turn (never trained on), so the run holds what was graded.
   * Problems that already carry an attempt (a resumed run) keep it.
   */
  private async prepareStudentWork(): Promise<void> {
    if (this.scenario.id !== 'teacher') return;
    const sp = this.config.sampling.policy;
    await Promise.all(
      this.problems.map(async (problem, i) => {
        if (problem.studentWork !== undefined) return;
        const messages: ChatMessage[] = [{ role: 'user', content: `Solve this math problem and show your work.\n\n${problem.question}` }];
        const reply = await this.generate(messages, this.config.seed * 1_000_003 + 7 * i, sp);
        if (!reply) return;
        this.problems[i] = { ...problem, studentWork: reply.text };
        await this.commit([
          {
            kind: 'interaction',
            version: reply.version,
            ts: this.now(),
            session: STUDENT_WORK_SESSION,
            turn: i + 1,
            turnType: 'side',
            messages,
            response: reply.text,
            tokenIds: reply.tokenIds,
            logprobs: reply.logprobs,
            tokenTexts: reply.tokenTexts,
            startedAt: reply.startedAt,
            finishedAt: reply.finishedAt,
          },
        ]);
      }),
    );
  }

  private fail(e: unknown): void {
    if (isAbort(e) && this.stopping) return;
    this.failure ??= e;
    this.stop();
  }

  private async sessionWorker(): Promise<void> {
    while (!this.stopping) {
      const index = this.sessionsStarted++;
      await this.runSession(`s${index}`, this.problems[index % this.problems.length], index);
    }
  }

  private async runSession(session: string, problem: Problem, index: number): Promise<void> {
    const { user } = this.services;
    if (!user) throw new Error(`the ${this.scenario.title} scenario needs a simulated user; talk-yourself runs take replies from the page`);
    // No persona: the person at the keyboard is the user (talk yourself). They write the first
    // message too, see the conversation as it is, and only they end it.
    const human = this.scenario.persona === null;
    const transcript: ChatMessage[] = [];
    if (human) {
      const first = await this.userSays(user, transcript, index, 0);
      if (!first || 'ended' in first) return;
      transcript.push({ role: 'user', content: first.text });
    } else {
      transcript.push({ role: 'user', content: this.scenario.firstMessage(problem) });
    }
    const maxTurns = this.scenario.maxTurns ?? (human ? Infinity : 8);
    const sp = this.config.sampling.policy;
    for (let turn = 1; turn <= maxTurns; turn++) {
      await this.waitForCapacity();
      if (this.stopping) return;
      const reply = await this.generate(transcript, this.config.seed * 1_000_003 + index * 101 + turn, sp);
      if (!reply) return;
      const response: PolicyResponse = { text: reply.text, tokenIds: reply.tokenIds, logprobs: reply.logprobs };
      const observed = this.tracker.observe({ session, turnType: 'main', messages: transcript, version: reply.version }, response);
      const interaction: InteractionRecord = {
        kind: 'interaction',
        version: reply.version,
        ts: this.now(),
        session,
        turn: observed.turn.turn,
        turnType: 'main',
        messages: transcript.map((m) => ({ ...m })),
        response: reply.text,
        tokenIds: reply.tokenIds,
        logprobs: reply.logprobs,
        tokenTexts: reply.tokenTexts,
        startedAt: reply.startedAt,
        finishedAt: reply.finishedAt,
      };
      await this.commit([interaction]);
      await this.handleTracker(observed);
      transcript.push({ role: 'assistant', content: reply.text });
      const next = await this.userSays(user, transcript, index, turn);
      if (!next) return;
      if ('ended' in next) {
        await this.handleTracker(this.tracker.endSession(session));
        return;
      }
      const said = next.text;
      const finalWord: ChatMessage = { role: 'user', content: said };
      if (isDone(this.scenario, said) || turn === maxTurns) {
        await this.handleTracker(this.tracker.endSession(session, finalWord));
        return;
      }
      transcript.push(finalWord);
    }
  }

  /** The user's next message; null when the run stops, `ended` when the user ends the session. */
  private async userSays(user: TextGenerator, transcript: ChatMessage[], index: number, turn: number): Promise<{ text: string } | { ended: true } | null> {
    const messages = this.scenario.persona === null ? transcript.map((m) => ({ ...m })) : simulatorMessages(this.scenario, transcript);
    try {
      return { text: simulatorReply(await user.generate(messages, { ...this.config.sampling.user, seed: this.config.seed + index * 7919 + turn, signal: this.abort.signal })) };
    } catch (e) {
      if (isAbort(e)) return null;
      if ((e as { name?: string })?.name === 'EndSessionRequest') return { ended: true };
      throw e;
    }
  }

  private async generate(messages: ChatMessage[], seed: number, sp: RunConfig['sampling']['policy']) {
    try {
      const reply = await this.batcher.request(
        { messages: messages.map((m) => ({ ...m })), maxNewTokens: sp.maxNewTokens, sampling: { temperature: sp.temperature, topP: sp.topP, topK: sp.topK }, seed },
        this.abort.signal,
      );
      this.tokenLog.push({ at: this.now(), tokens: reply.tokenIds.length });
      return reply;
    } catch (e) {
      if (isAbort(e) && this.stopping) return null;
      throw e;
    }
  }

  /** Sessions wait while paused or while batches pile up faster than training takes them. */
  private async waitForCapacity(): Promise<void> {
    await this.gate.wait();
    while (!this.stopping && this.batches.length > MAX_WAITING_BATCHES) {
      await new Promise<void>((r) => this.batchWaiters.push(r));
    }
  }

  /** Session-end records, then a judge task per closed turn (bounded: back-pressure). */
  private async handleTracker(events: TrackerEvents<PolicyResponse>): Promise<void> {
    await this.commit(
      events.ended.map((e) => ({ kind: 'session_end' as const, version: this.version, ts: e.at, session: e.session, reason: e.reason, turns: e.turns, mainTurns: e.mainTurns })),
    );
    for (const turn of events.closed) {
      await this.judgeSlots.acquire();
      const task = this.judgeAndBuffer(turn)
        .catch((e) => this.fail(e))
        .finally(() => {
          this.judgeSlots.release();
          this.judging.delete(task);
        });
      this.judging.add(task);
    }
  }

  private async judgeAndBuffer(turn: ClosedTurn<PolicyResponse>): Promise<void> {
    if (this.stopping) return;
    const { judge, hintJudge, policy } = this.services;
    const judged = await judgeTurn(turn, { judge, hintJudge, policy, preset: this.config.preset, seed: this.config.seed, now: this.now, signal: this.abort.signal });
    if (this.stopping) return;
    await this.commit(judged.records);
    const sample = assembleSample(turn, judged.judgement, this.config.method, this.config.preset.advantage.weights);
    if (!sample) return;
    const added = this.buffer.add(sample);
    await this.commit([sampleRecord(added.sample, this.now())]);
    if (added.batch) {
      this.batches.push(added.batch);
      this.trainerWake?.();
    }
  }

  private async trainLoop(): Promise<void> {
    const { steps, evalEvery } = this.config.schedule;
    if (evalEvery > 0 && this.step === 0) await this.evaluate();
    while (!this.stopping && this.step < steps) {
      const batch = await this.nextBatch();
      if (!batch) return;
      await this.gate.wait();
      if (this.stopping) return;
      await this.train(batch);
      if (evalEvery > 0 && (this.step % evalEvery === 0 || this.step === steps)) await this.evaluate();
    }
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
    const items = batch.samples.map((s: BufferedSample<TrainingSample>) => ({
      messages: s.messages,
      tokenIds: [...s.response.tokenIds],
      advantages: s.advantages,
      rolloutLogp: [...s.response.logprobs],
      trainable: s.trainable,
    }));
    const result = await this.services.policy.train(items, (i, n) => this.options.onProgress?.({ phase: 'train', done: i, total: n }));
    const from = this.version;
    this.step++;
    if (result.stats.stepMs > 0) this.trainRate = (result.stats.tokens * 1000) / result.stats.stepMs;
    this.version = result.version;
    const s = result.stats;
    const finite = (x: number | null) => (x !== null && Number.isFinite(x) ? x : null);
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
    };
    const updates: TokenUpdateRecord[] = (s.perSample ?? []).flatMap((t, i) => {
      const sample = batch.samples[i];
      if (!sample.trainable) return [];
      return [{ kind: 'token_update' as const, version: sample.version, ts: result.finishedAt, session: sample.session, turn: sample.turn, step: this.step, before: t.before, after: t.after }];
    });
    await this.commit([
      { kind: 'train_step', version: from, ts: result.finishedAt, step: this.step, samples: batch.samples.length, stats, skipped: s.skipped },
      ...updates,
      { kind: 'version_boundary', version: this.version, ts: result.finishedAt, step: this.step, from, to: this.version },
    ]);
    this.options.onSnapshot?.(this.snapshot());
  }

  /** The personalization score: the current policy's first answer to the first N problems. */
  private async evaluate(): Promise<void> {
    const evaluator = this.services.evaluator;
    const preference = this.scenario.preference;
    if (!evaluator || !preference) return;
    const n = Math.min(this.config.schedule.evalProblems, this.problems.length);
    const problems = this.problems.slice(0, n);
    const sp = this.config.sampling.policy;
    // Greedy, so that two evaluations differ only by the policy, not by sampling luck.
    const replies = await Promise.all(
      problems.map((p) =>
        this.batcher.request(
          { messages: [{ role: 'user', content: this.scenario.firstMessage(p) }], maxNewTokens: sp.maxNewTokens, sampling: { temperature: 0, topP: 1, topK: 0 }, seed: 0 },
          this.abort.signal,
        ),
      ),
    );
    const result = await scoreEvaluation(
      evaluator,
      problems.map((p, i) => ({ id: p.id, question: this.scenario.firstMessage(p), answer: replies[i].text })),
      {
        preference,
        votes: this.config.schedule.evalVotes,
        signal: this.abort.signal,
        onProgress: (p) => this.options.onProgress?.({ phase: 'evaluate', done: p.problemsDone, total: p.problemsTotal }),
      },
    );
    const record: EvaluationRecord = {
      kind: 'evaluation',
      // The version that wrote the answers (a finished step swaps in at the next generation).
      version: Math.min(...replies.map((r) => r.version)),
      ts: this.now(),
      step: this.step,
      name: 'personalization',
      scores: { score: result.score },
      perProblem: result.perProblem.map((p, i) => ({ id: p.id, score: p.failed ? null : p.score, detail: replies[i].text })),
    };
    await this.commit([record]);
  }
}

function isAbort(e: unknown): boolean {
  return (e as { name?: string })?.name === 'AbortError';
}
