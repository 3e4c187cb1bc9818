/**
 * The personal-agent run loop: many simulated (or real) sessions at once, their generation
 * requests batched, each closed main turn judged without blocking the sessions, judged samples
 * buffered into batches, a training step whenever a batch is ready (serving goes on with the
 * previous version meanwhile), and the personalization evaluation before training and every K
 * steps. Batching, buffering, training, the evaluation schedule, pause/stop and snapshots are
 * the RunLoopCore every track shares (loop-core.ts); this file is what sessions are.
 *
 * Plain TypeScript with injected services and clock: it runs unchanged in Node (the CLI's
 * headless runs) and in the page, where the services are web workers.
 */
import type { ChatMessage } from '../rl/messages';
import type { EvaluationRecord } from '../rl/records';
import type { PolicyResponse } from '../rl/samples';
import { SessionTracker, type TrackerEvents } from '../rl/sessions';
import { idleTimeoutOf, lastTurnOf } from '../rl/presets';
import { scoreEvaluation } from '../sims/evaluator';
import type { TextGenerator } from '../generators/generator';
import { createScenario, isDone, simulatorMessages, simulatorReply, type Scenario } from '../sims/scenarios/index';
import type { Problem } from '../sims/problems/problem';
import { problemSetLabel, type ProblemSets } from './problems';
import { interactionRecord, isAbort, RunLoopCore } from './loop-core';
import type { RecordSink, RunLoopOptions } from './loop-types';
import type { PolicyService, SessionTag } from './policy-service';
import { isRemotePolicy, type RunConfig } from './run-config';

export type { RecordSink, RunLoopOptions, RunSnapshot, RunStatus } from './loop-types';

export interface RunServices {
  policy: PolicyService;
  /** null when the person at the keyboard is the user (talk yourself). */
  user: TextGenerator | null;
  judge: TextGenerator;
  hintJudge: TextGenerator;
  evaluator: TextGenerator | null;
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

/** The side session in which the policy writes the teacher scenario's student attempts. */
export const STUDENT_WORK_SESSION = 'student-work';

export class RunLoop extends RunLoopCore {
  readonly scenario: Scenario;
  private readonly tracker: SessionTracker<PolicyResponse>;

  constructor(
    readonly config: RunConfig,
    private readonly services: RunServices,
    private readonly problems: ProblemSets,
    sink: RecordSink,
    options: RunLoopOptions = {},
  ) {
    super(
      {
        steps: config.schedule.steps,
        evalEvery: config.schedule.evalEvery,
        workers: config.schedule.concurrentSessions,
        batchSize: config.preset.batch.size,
        zeroAdvantage: config.preset.batch.zeroAdvantage,
        trainsHere: !isRemotePolicy(config.models.policy),
      },
      services.policy,
      sink,
      options,
    );
    this.scenario = createScenario(config.scenario);
    this.tracker = new SessionTracker({ idleTimeoutMs: idleTimeoutOf(config.preset), now: this.now });
    if (problems.train.length === 0) throw new Error('the run has no problems to start sessions from');
  }

  /**
   * The teacher grades a student's attempt at each problem: the policy writes it once, before
   * any session, as a logged side turn (never trained on), so the run holds what was graded.
   * Problems that already carry an attempt (a resumed run) keep it. Training problems come
   * first, then evaluation problems not among them, numbered in that order.
   */
  protected override async prepare(): Promise<void> {
    if (this.scenario.id !== 'teacher') return;
    const sp = this.config.sampling.policy;
    const { train, evaluation } = this.problems;
    const slots = [
      ...train.map((_, i) => ({ list: train, i })),
      ...evaluation.map((_, i) => ({ list: evaluation, i })).filter(({ i }) => !train.includes(evaluation[i])),
    ];
    await Promise.all(
      slots.map(async ({ list, i }, k) => {
        const problem = list[i];
        if (problem.studentWork !== undefined) return;
        const messages: ChatMessage[] = [{ role: 'user', content: `Solve this math problem and show your work.\n\n${problem.question}` }];
        const reply = await this.generateReply(messages, this.config.seed * 1_000_003 + 7 * k, sp, { id: STUDENT_WORK_SESSION, turnType: 'side', done: true });
        if (!reply) return;
        list[i] = { ...problem, studentWork: reply.text };
        await this.commit([interactionRecord(reply, this.now(), { session: STUDENT_WORK_SESSION, turn: k + 1, turnType: 'side', messages })]);
      }),
    );
  }

  protected async worker(): Promise<void> {
    while (!this.stopping) {
      const index = this.sessionsStarted++;
      await this.runSession(`s${index}`, this.problems.train[index % this.problems.train.length], index);
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
    // The reference's runners send no done message and nothing after the last turn.
    const lastUnjudged = lastTurnOf(this.config.preset) === 'unjudged';
    for (let turn = 1; turn <= maxTurns; turn++) {
      await this.waitForCapacity();
      if (this.stopping) return;
      // The last turn is known before it is asked only at the turn limit; a session that ends
      // on the user's word instead closes on the server when it goes idle.
      const reply = await this.generateReply(transcript, this.config.seed * 1_000_003 + index * 101 + turn, sp, {
        id: session,
        turnType: 'main',
        done: turn === maxTurns && !lastUnjudged,
      });
      if (!reply) return;
      const response: PolicyResponse = { text: reply.text, tokenIds: reply.tokenIds, logprobs: reply.logprobs };
      const observed = this.tracker.observe({ session, turnType: 'main', messages: transcript, version: reply.version }, response);
      const interaction = interactionRecord(reply, this.now(), { session, turn: observed.turn.turn, turnType: 'main', messages: transcript });
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
        await this.handleTracker(lastUnjudged ? this.withoutLastTurn(session) : this.tracker.endSession(session, finalWord));
        return;
      }
      transcript.push(finalWord);
    }
  }

  /**
   * Ends a session whose last reply the reference would never judge (preset session.lastTurn
   * "unjudged"): its pending turn is let go without a judge or a sample, as a turn waiting for a
   * next state that never comes.
   */
  private withoutLastTurn(session: string): TrackerEvents<PolicyResponse> {
    const events = this.tracker.endSession(session);
    return { ...events, closed: events.closed.filter((t) => t.session !== session) };
  }

  /** The user's next message; null when the run stops, `ended` when the user ends the session. */
  private async userSays(user: TextGenerator, transcript: ChatMessage[], index: number, turn: number): Promise<{ text: string } | { ended: true } | null> {
    const messages = this.scenario.persona === null ? transcript.map((m) => ({ ...m })) : simulatorMessages(this.scenario, transcript);
    try {
      return {
        text: simulatorReply(
          await user.generate(messages, { ...this.config.sampling.user, seed: this.config.seed + index * 7919 + turn, signal: this.abort.signal }),
        ),
      };
    } catch (e) {
      if (isAbort(e)) return null;
      if ((e as { name?: string })?.name === 'EndSessionRequest') return { ended: true };
      throw e;
    }
  }

  /** One policy answer through the shared batcher; null when the run stopped meanwhile. */
  private generateReply(messages: ChatMessage[], seed: number, sp: RunConfig['sampling']['policy'], session: SessionTag) {
    return this.generate({
      messages: messages.map((m) => ({ ...m })),
      session,
      maxNewTokens: sp.maxNewTokens,
      sampling: { temperature: sp.temperature, topP: sp.topP, topK: sp.topK },
      seed,
    });
  }

  /** Session-end records, then a judge task per closed turn (bounded: back-pressure). */
  private handleTracker(events: TrackerEvents<PolicyResponse>): Promise<void> {
    if (isRemotePolicy(this.config.models.policy)) return this.closeTurns(events, async () => this.turnClosedOnServer());
    return this.closeTurns(events, (turn) => this.judgeAndBuffer(turn, this.services, this.config));
  }

  /** The personalization score: the current policy's first answer to the first N evaluation problems. */
  protected async evaluate(): Promise<void> {
    const evaluator = this.services.evaluator;
    const preference = this.scenario.preference;
    if (!evaluator || !preference) return;
    const n = Math.min(this.config.schedule.evalProblems, this.problems.evaluation.length);
    const problems = this.problems.evaluation.slice(0, n);
    const sp = this.config.sampling.policy;
    // Greedy, so that two evaluations differ only by the policy, not by sampling luck.
    const replies = await Promise.all(
      problems.map((p) =>
        this.batcher.request(
          {
            messages: [{ role: 'user', content: this.scenario.firstMessage(p) }],
            maxNewTokens: sp.maxNewTokens,
            sampling: { temperature: 0, topP: 1, topK: 0 },
            seed: 0,
          },
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
      scores: result.score === null ? {} : { score: result.score },
      perProblem: result.perProblem.map((p, i) => ({ id: p.id, prompt: this.scenario.firstMessage(problems[i]), score: p.score, detail: replies[i].text })),
      failed: result.failedProblems,
      problemSet: problemSetLabel(this.config.problems, this.scenario, n),
    };
    await this.commit([record]);
  }
}
