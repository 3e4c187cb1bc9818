/**
 * The run loop of a served policy (`nextstate serve`): no simulated users. The sessions are a
 * real agent's requests, which arrive from outside (an HTTP server, a transport like the page's
 * workers) through `answer`. Everything else is the RunLoopCore every track shares: requests
 * merged by the GenerationBatcher, the session tracker pairing each main turn with its next
 * state, judging off the request's path, the sample buffer, PPO steps serving v while training
 * v+1, and every record committed before the reply goes out.
 */
import { CLIENT_ENVELOPES } from '../rl/envelopes';
import type { ChatMessage } from '../rl/messages';
import { SessionTracker, type ClosedTurn, type ObservedTurn, type TurnType } from '../rl/sessions';
import { idleTimeoutOf } from '../rl/presets';
import type { SamplingOptions } from '../gpu/sampler';
import type { TrainingSample } from '../rl/samples';
import { interactionRecord, RunLoopCore } from './loop-core';
import type { RequestTokenListener } from './batcher';
import type { RecordSink, RunLoopOptions } from './loop-types';
import type { GoesOn } from './resume-plan';
import type { PolicyReply, PolicyService } from './policy-service';
import type { RunConfig } from './run-config';
import type { RunServices } from './runloop';
import { CONFIG_LIMITS } from './run-config-check';
import type { ServedResponse, UnfinishedTurns } from './serve-unfinished';

/** One request of a served agent, once the transport has read and paired it. */
export interface ServedRequest {
  session: string;
  turnType: TurnType;
  /** The client says this is the session's last request (X-Session-Done). */
  done: boolean;
  messages: ChatMessage[];
  /** The tools the chat template lists for this request (OpenAI function format). */
  tools?: readonly object[];
  maxNewTokens: number;
  sampling: SamplingOptions;
  seed: number;
  stop?: string[];
  /** What answers the session's previous main turn, when it is not the last message (see TurnRequest.nextState). */
  nextState?: ChatMessage;
  /** Hears each reply token as it is drawn, before the reply is committed (a streaming client's). */
  onToken?: RequestTokenListener;
}

/** A served request's answer and where the tracker put it. */
export interface ServedReply {
  reply: PolicyReply;
  session: string;
  turn: number;
}

/** The run stopped (shutdown) before this request was answered. */
export class ServeStoppedError extends Error {
  override name = 'ServeStoppedError';
  constructor() {
    super('the server is shutting down and no longer answers; start it again with --resume');
  }
}

/**
 * A request came while a step that cannot run beside serving holds the policy (the reference's
 * server answers 503 during its weight update the same way): the client retries after
 * `retryAfterS`, when the new version answers.
 */
export class ServeTrainingError extends Error {
  override name = 'ServeTrainingError';
  constructor(
    readonly step: number,
    readonly retryAfterS: number,
  ) {
    super(`training step ${step} holds the policy, which cannot train beside serving here; retry after ${retryAfterS} s, when the new version answers`);
  }
}

/** Retry-After's guess at a step with no step before it, and the most it says (clients honour up to a minute). */
const FIRST_STEP_GUESS_MS = 10_000;
const MAX_RETRY_AFTER_S = 60;

/** A run that never ends by itself: it stops when the server does. */
export const SERVED_STEPS = CONFIG_LIMITS.steps;
/** How often idle sessions are swept, at most (their last turns close without a next state). */
const SWEEP_MS = 10_000;

export class ServeLoop extends RunLoopCore {
  private readonly tracker: SessionTracker<ServedResponse>;
  private sweeper: ReturnType<typeof setInterval> | null = null;
  /** Turns a stopped server had closed but not judged: judged once the loop runs. */
  private readonly unjudgedAtStart: ClosedTurn<ServedResponse>[];
  /** Turns a stopped server left waiting for their next state: their sessions go on. */
  private readonly waitingAtStart: readonly ObservedTurn<ServedResponse>[];
  /** Samples of turns a stopped server had judged but not buffered: buffered once the loop runs. */
  private readonly unbufferedAtStart: readonly TrainingSample[];

  constructor(
    readonly config: RunConfig,
    private readonly services: Pick<RunServices, 'policy' | 'judge' | 'hintJudge'>,
    sink: RecordSink,
    options: RunLoopOptions & { turnsSoFar?: ReadonlyMap<string, number>; unfinished?: UnfinishedTurns } = {},
  ) {
    super(
      {
        steps: config.schedule.steps,
        evalEvery: 0,
        // The agent's requests are the sessions: the loop starts none of its own.
        workers: 0,
        batchSize: config.preset.batch.size,
        zeroAdvantage: config.preset.batch.zeroAdvantage,
      },
      services.policy,
      sink,
      options,
    );
    // A resumed server numbers a known session's turns on from its log, so (session, turn) stays unique.
    this.tracker = new SessionTracker({ idleTimeoutMs: idleTimeoutOf(config.preset), now: this.now, turnsSoFar: options.turnsSoFar });
    for (const w of options.unfinished?.waiting ?? []) this.tracker.restore(w.turn, { turns: w.turns, mainTurns: w.mainTurns });
    this.unjudgedAtStart = options.unfinished?.unjudged ?? [];
    this.waitingAtStart = (options.unfinished?.waiting ?? []).map((w) => w.turn);
    this.unbufferedAtStart = options.unfinished?.unbuffered ?? [];
  }

  /** After the run_resumed record: each buffered as judgeAndBuffer would have, its sample record committed, so no later resume adds it again. */
  protected override async prepare(): Promise<void> {
    for (const sample of this.unbufferedAtStart) await this.addSample(sample);
  }

  protected override goesOn(): GoesOn {
    const going = new Set([...this.waitingAtStart, ...this.unjudgedAtStart].map((t) => `${t.session}#${t.turn}`));
    return (session, turn) => going.has(`${session}#${turn}`);
  }

  protected override goingOn(): string {
    const waiting = this.waitingAtStart.length;
    const unbuffered = this.unbufferedAtStart.length;
    return (
      `${waiting === 1 ? '1 turn waiting for its' : `${waiting} turns waiting for their`} next state and ${this.unjudgedAtStart.length} to judge again` +
      (unbuffered > 0 ? `, and ${unbuffered} judged ${unbuffered === 1 ? 'turn' : 'turns'} whose sample is buffered again` : '')
    );
  }

  get policy(): PolicyService {
    return this.services.policy;
  }

  protected async worker(): Promise<void> {}

  /** A served run has no evaluation set: its users are real. */
  protected async evaluate(): Promise<void> {}

  override async run() {
    const every = Math.min(SWEEP_MS, idleTimeoutOf(this.config.preset));
    this.sweeper = setInterval(() => void this.closeTurns(this.tracker.sweep(), (t) => this.judgeServed(t)).catch((e) => this.fail(e)), every);
    void this.closeTurns({ closed: this.unjudgedAtStart, ended: [] }, (t) => this.judgeServed(t)).catch((e) => this.fail(e));
    try {
      return await super.run();
    } finally {
      clearInterval(this.sweeper);
    }
  }

  /**
   * Answers one request: generates through the batcher, pairs it with its session's previous
   * main turn, commits the interaction (and any session end), and queues the closed turn for
   * the judges. Resolves once the records are committed; `request.onToken` has heard every
   * token by then.
   *
   * @throws ServeStoppedError when the server stops first; ServeTrainingError during a step that
   *   cannot run beside serving; an AbortError when `signal` fires
   */
  async answer(request: ServedRequest, signal?: AbortSignal): Promise<ServedReply> {
    if (this.stopping) throw new ServeStoppedError();
    const refused = this.refusal();
    if (refused) throw refused;
    const { messages, tools } = request;
    const reply = await this.generate(
      {
        messages: messages.map((m) => ({ ...m })),
        ...(tools ? { tools } : {}),
        maxNewTokens: request.maxNewTokens,
        sampling: request.sampling,
        seed: request.seed,
        ...(request.stop ? { stop: request.stop } : {}),
      },
      signal,
      request.onToken,
    );
    if (!reply) throw new ServeStoppedError();
    const response: ServedResponse = { text: reply.text, tokenIds: reply.tokenIds, logprobs: reply.logprobs, ...(tools ? { tools } : {}) };
    const observed = this.tracker.observe(
      { session: request.session, turnType: request.turnType, messages, version: reply.version, done: request.done, nextState: request.nextState },
      response,
    );
    if (observed.turn.turn === 1) this.sessionsStarted++;
    await this.commit([
      interactionRecord(reply, this.now(), {
        session: request.session,
        turn: observed.turn.turn,
        turnType: request.turnType,
        messages,
        ...(tools ? { tools } : {}),
      }),
    ]);
    await this.closeTurns(observed, (t) => this.judgeServed(t));
    return { reply, session: request.session, turn: observed.turn.turn };
  }

  /** What a request gets while a step that holds the policy trains (the policy cannot train beside serving); null otherwise. */
  refusal(): ServeTrainingError | null {
    const step = this.stepInFlight();
    if (!step || this.policy.refusesDuringSteps !== true) return null;
    const left = (step.lastStepMs ?? FIRST_STEP_GUESS_MS) - (this.now() - step.since);
    return new ServeTrainingError(step.step, Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(left / 1000))));
  }

  /** Ends a session without a request (its pending turn closes with no next state). */
  async endSession(session: string): Promise<void> {
    await this.closeTurns(this.tracker.endSession(session), (t) => this.judgeServed(t));
  }

  /** A served turn judged with the tools its request listed, on its user's words without the agent's envelope. */
  private judgeServed(turn: ClosedTurn<ServedResponse>): Promise<void> {
    return this.judgeAndBuffer(turn, this.services, { ...this.config, envelopes: CLIENT_ENVELOPES }, turn.response.tools);
  }
}
