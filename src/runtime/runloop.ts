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
import { STUDENT_WORK_SESSION } from './resume-plan';
import type { TextGenerator } from '../generators/generator';
import { isEngineLimit } from '../gpu/errors';
import { createScenario, isDone, normaliseChild, simulatorMessages, simulatorReply, type Scenario } from '../sims/scenarios/index';
import { storyEvaluationScores } from '../sims/rules/index';
import type { Problem } from '../sims/problems/problem';
import { studentWorkWithSlip } from '../sims/scenarios/student-work';
import { homeworkFileText, homeworkPath, prepareHomework, WORKSPACE_SYSTEM_PROMPT } from '../sims/workspace/homework';
import { WORKSPACE_TOOLS } from '../sims/workspace/tools';
import { MemoryWorkspace, memoryWorkspaces, type Workspace, type WorkspaceFactory } from '../sims/workspace/workspace';
import { problemSetLabel, type ProblemSets } from './problems';
import { interactionRecord, isAbort, RunLoopCore, workspaceFileRecord } from './loop-core';
import { agentTurn } from './agent-turn';
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
  /** Where a workspace homework's files live, by the homework's session id; absent: in memory. */
  workspaces?: WorkspaceFactory;
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
        // Simulated users: a run is a function of its config and seed. A person at the keyboard
        // is never kept waiting for a version.
        fixedSchedule: services.user !== null && createScenario(config.scenario).persona !== null,
      },
      services.policy,
      sink,
      options,
    );
    this.scenario = createScenario(config.scenario);
    // Simulated sessions always end on their own word; under a fixed schedule an idle clock must
    // not end one that waits for its version.
    this.tracker = new SessionTracker({ idleTimeoutMs: this.fixed ? Infinity : idleTimeoutOf(config.preset), now: this.now });
    if (problems.train.length === 0) throw new Error('the run has no problems to start sessions from');
  }

  /**
   * The teacher grades a student's attempt at each problem: the policy writes it once, before
   * any session, as a logged side turn (never trained on), so the run holds what was graded.
   * Problems that already carry an attempt keep it, and a resumed run takes the attempts its
   * log holds (options.resume.studentWork). Training problems come
   * first, then evaluation problems not among them, numbered in that order. In the workspace
   * variant only evaluation problems need one (their files hold it).
   */
  protected override async prepare(): Promise<void> {
    if (this.scenario.id !== 'teacher') return;
    const sp = this.config.sampling.policy;
    const { train, evaluation } = this.problems;
    // In the workspace the student phase writes what the teacher grades in training; only the
    // evaluation's files need an attempt written beforehand.
    const slots = [
      ...(this.scenario.workspace ? [] : train.map((_, i) => ({ list: train, i }))),
      ...evaluation.map((_, i) => ({ list: evaluation, i })).filter(({ i }) => this.scenario.workspace || !train.includes(evaluation[i])),
    ];
    await Promise.all(
      slots.map(async ({ list, i }, k) => {
        const recorded = this.options.resume?.studentWork?.get(k);
        if (recorded !== undefined && list[i].studentWork === undefined) list[i] = { ...list[i], studentWork: recorded };
        const problem = list[i];
        if (problem.studentWork !== undefined) return;
        const messages: ChatMessage[] = [{ role: 'user', content: `Solve this math problem and show your work.\n\n${problem.question}` }];
        const reply = await this.generateReply(
          messages,
          this.config.seed * 1_000_003 + 7 * k,
          sp,
          { id: STUDENT_WORK_SESSION, turnType: 'side', done: true },
          this.version,
        );
        if (!reply) return;
        list[i] = { ...problem, studentWork: reply.text };
        await this.commit([interactionRecord(reply, this.now(), { session: STUDENT_WORK_SESSION, turn: k + 1, turnType: 'side', messages })]);
      }),
    );
  }

  protected async worker(): Promise<void> {
    while (!this.stopping) {
      const index = this.sessionsStarted++;
      const version = await this.admit(index);
      if (version === null) return;
      const sessions = this.sessionIds(`s${index}`);
      if (version !== undefined) {
        for (const s of sessions) {
          this.sessionVersions.set(s, version);
          this.sessionIndexes.set(s, index);
        }
      }
      await this.runSession(sessions, this.problems.train[index % this.problems.train.length], index, version);
      await this.finishIndex(index, sessions, await this.judgedResults(sessions));
    }
  }

  /** The run's sessions for one session index: one, or the homework's phases in order, the last named `session`. */
  private sessionIds(session: string): string[] {
    const phases = this.scenario.workspace?.phases;
    return phases ? phases.map((p, i) => (i === phases.length - 1 ? session : `${session}.${p.id}`)) : [session];
  }

  /** `version`: the version a fixed schedule answers every turn of it with; undefined: the serving one. */
  private async runSession(sessions: string[], problem: Problem, index: number, version: number | undefined): Promise<void> {
    const session = sessions[sessions.length - 1];
    const { user } = this.services;
    if (!user) throw new Error(`the ${this.scenario.title} scenario needs a simulated user; talk-yourself runs take replies from the page`);
    const homework = this.scenario.workspace;
    if (!homework) {
      // No persona: the person at the keyboard is the user (talk yourself). They write the first
      // message too, see the conversation as it is, and only they end it.
      const human = this.scenario.persona === null;
      const first = human ? null : this.scenario.firstMessage(problem);
      await this.converse(
        user,
        { session, index, phase: 0, user: this.scenario, first, maxTurns: this.scenario.maxTurns ?? (human ? Infinity : 8), version },
        null,
      );
      return;
    }
    // The homework's phases, in order, over one workspace that holds the problem's file, as the
    // reference's runners leave it for each other. The scenario's own phase is the session's id.
    const workspace = await (this.services.workspaces ?? memoryWorkspaces)(session);
    const path = homeworkPath(index % this.problems.train.length);
    const prepared = await prepareHomework(workspace, path, problem);
    await this.commit([workspaceFileRecord(prepared, version ?? this.version, this.now(), { workspace: session, session: sessions[0] })]);
    for (const [i, phase] of homework.phases.entries()) {
      const first = phase.firstMessage(problem, path);
      const done = await this.converse(
        user,
        { session: sessions[i], index, phase: i, user: phase, first, maxTurns: phase.maxTurns, version },
        { id: session, files: workspace },
      );
      if (!done) return;
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

  /**
   * One conversation between the policy and the user: the first message (null: the person writes
   * it), then answer after answer (agentTurn: with the workspace's tools when there is one) until
   * the user ends it, says the done marker, or the turn limit. Resolves false when the run stopped
   * or the person ended the session, true when the conversation ran to its end.
   */
  private async converse(
    user: TextGenerator,
    c: {
      session: string;
      index: number;
      phase: number;
      user: { persona: string | null; doneMarker: string | null };
      first: string | null;
      maxTurns: number;
      version: number | undefined;
    },
    workspace: { id: string; files: Workspace } | null,
  ): Promise<boolean> {
    const { session, index } = c;
    const transcript: ChatMessage[] = workspace ? [{ role: 'system', content: WORKSPACE_SYSTEM_PROMPT }] : [];
    if (c.first === null) {
      const first = await this.userSays(user, c.user, transcript, index, 0, c.phase);
      if (!first || 'ended' in first) return false;
      transcript.push({ role: 'user', content: first.text });
    } else {
      transcript.push({ role: 'user', content: c.first });
    }
    const sp = this.config.sampling.policy;
    const tools = workspace ? WORKSPACE_TOOLS : undefined;
    // The reference's runners send no done message and nothing after the last turn.
    const lastUnjudged = lastTurnOf(this.config.preset) === 'unjudged';
    for (let turn = 1; turn <= c.maxTurns; turn++) {
      await this.waitForCapacity();
      if (this.stopping) return false;
      const reply = await this.unlessFull(
        session,
        agentTurn({
          transcript,
          workspace: workspace?.files ?? null,
          // The last turn is known before it is asked only at the turn limit of a plain chat; a
          // session that ends on the user's word instead closes on the server when it goes idle.
          generate: (messages, round) =>
            this.generateReply(
              messages,
              this.config.seed * 1_000_003 + index * 101 + turn + round * 10_007 + c.phase * 50_021,
              sp,
              {
                id: session,
                turnType: 'main',
                done: !workspace && turn === c.maxTurns && !lastUnjudged,
              },
              c.version,
              tools,
            ),
          onStep: async ({ messages, reply, results }) => {
            const response: PolicyResponse = { text: reply.text, tokenIds: reply.tokenIds, logprobs: reply.logprobs };
            const observed = this.tracker.observe({ session, turnType: 'main', messages, version: reply.version }, response);
            const at = this.now();
            const interaction = interactionRecord(reply, at, { session, turn: observed.turn.turn, turnType: 'main', messages, tools });
            const changes = results.flatMap((r) =>
              r.change ? [workspaceFileRecord(r.change, reply.version, at, { workspace: workspace!.id, session, turn: observed.turn.turn })] : [],
            );
            await this.commit([interaction, ...changes]);
            await this.handleTracker(observed);
          },
        }),
      );
      if (reply === 'full') return true;
      if (!reply) return false;
      const next = await this.userSays(user, c.user, transcript, index, turn, c.phase);
      if (!next) return false;
      if ('ended' in next) {
        await this.handleTracker(this.tracker.endSession(session));
        return false;
      }
      const said = next.text;
      const finalWord: ChatMessage = { role: 'user', content: said };
      if (isDone(c.user, said) || turn === c.maxTurns) {
        await this.handleTracker(lastUnjudged ? this.withoutLastTurn(session) : this.tracker.endSession(session, finalWord));
        return true;
      }
      transcript.push(finalWord);
    }
    return true;
  }

  /**
   * The turn's reply; 'full' when the conversation no longer fits the policy's positions, which
   * ends the session there (its last answer closes without a next state).
   */
  private async unlessFull<T>(session: string, turn: Promise<T>): Promise<T | 'full'> {
    try {
      return await turn;
    } catch (e) {
      if (!isEngineLimit(e)) throw e;
      await this.handleTracker(this.tracker.endSession(session, undefined, 'context-full'));
      return 'full';
    }
  }

  /**
   * The user's next message; null when the run stops, `ended` when the user ends the session.
   * `who`: the scenario, or the homework phase, whose persona the simulator plays.
   */
  private async userSays(
    user: TextGenerator,
    who: { persona: string | null },
    transcript: ChatMessage[],
    index: number,
    turn: number,
    phase = 0,
  ): Promise<{ text: string } | { ended: true } | null> {
    const messages = who.persona === null ? transcript.map((m) => ({ ...m })) : simulatorMessages(who, transcript);
    try {
      return {
        text: simulatorReply(
          await user.generate(messages, {
            ...this.config.sampling.user,
            seed: this.config.seed + index * 7919 + turn + phase * 104_729,
            signal: this.abort.signal,
          }),
        ),
      };
    } catch (e) {
      if (isAbort(e)) return null;
      if ((e as { name?: string })?.name === 'EndSessionRequest') return { ended: true };
      throw e;
    }
  }

  /** One policy answer through the shared batcher; null when the run stopped meanwhile. */
  private generateReply(
    messages: ChatMessage[],
    seed: number,
    sp: RunConfig['sampling']['policy'],
    session: SessionTag,
    version: number | undefined,
    tools?: readonly object[],
  ) {
    return this.generate({
      ...this.pin(version),
      messages: messages.map((m) => ({ ...m })),
      ...(tools ? { tools } : {}),
      session,
      maxNewTokens: sp.maxNewTokens,
      sampling: { temperature: sp.temperature, topP: sp.topP, topK: sp.topK },
      seed,
    });
  }

  /** Session-end records, then a judge task per closed turn (bounded: back-pressure). */
  private handleTracker(events: TrackerEvents<PolicyResponse>): Promise<void> {
    if (isRemotePolicy(this.config.models.policy)) return this.closeTurns(events, async () => this.turnClosedOnServer());
    const run = { ...this.config, rewriteHint: this.scenario.otherUserHints?.(this.config.seed) };
    return this.closeTurns(events, (turn) => this.judgeAndBuffer(turn, this.services, run, this.scenario.workspace ? WORKSPACE_TOOLS : undefined));
  }

  /** The personalization score: the current policy's first answer to the first N evaluation problems. */
  protected async evaluate(): Promise<void> {
    const evaluator = this.services.evaluator;
    const preference = this.scenario.preference;
    if (!evaluator || !preference) return;
    const n = Math.min(this.config.schedule.evalProblems, this.problems.evaluation.length);
    const problems = this.problems.evaluation.slice(0, n);
    const answers = await Promise.all(problems.map((p, i) => this.firstAnswer(p, i)));
    const result = await scoreEvaluation(
      evaluator,
      problems.map((p, i) => ({ id: p.id, question: answers[i].question, answer: answers[i].text })),
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
      version: Math.min(...answers.map((a) => a.version)),
      ts: this.now(),
      step: this.step,
      name: 'personalization',
      scores: { ...(result.score === null ? {} : { score: result.score }), ...this.wishRates(problems, answers) },
      perProblem: result.perProblem.map((p, i) => ({
        id: p.id,
        prompt: answers[i].question,
        score: p.score,
        detail: answers[i].text,
        ...(answers[i].tokenTexts?.length ? { detailTokens: answers[i].tokenTexts } : {}),
      })),
      failed: result.failedProblems,
      problemSet: problemSetLabel(this.config.problems, this.scenario, n),
    };
    await this.commit([record]);
  }

  /**
   * The storyteller's wishes, each read in every evaluation story by rules whatever judges the
   * score (story-score.ts): their rates, the share of replies that are stories, and the old keyword
   * score under its own name. Other scenarios: none.
   */
  private wishRates(problems: Problem[], answers: { question: string; text: string }[]): Record<string, number> {
    const config = this.scenario.config;
    if (config.id !== 'storyteller' || problems.length === 0) return {};
    return storyEvaluationScores(
      normaliseChild(config),
      answers.map((a) => ({ question: a.question, answer: a.text })),
    );
  }

  /**
   * The policy's first answer to evaluation problem `i`, greedy, so that two evaluations differ
   * only by the policy, not by sampling luck. In the workspace it is the first reply the user
   * sees, after any tool calls, over a scratch workspace holding the file as the scenario's phase
   * finds it: the problem, and for the teacher the student's attempt appended (prepare()).
   */
  private async firstAnswer(problem: Problem, i: number): Promise<{ question: string; text: string; tokenTexts?: string[]; version: number }> {
    const sp = this.config.sampling.policy;
    // The evaluation of step k reads version k, whatever else is being answered meanwhile.
    const pinned = this.pin(this.version);
    const request = (messages: ChatMessage[], tools?: readonly object[]) =>
      this.batcher.request(
        { messages, ...(tools ? { tools } : {}), maxNewTokens: sp.maxNewTokens, sampling: { temperature: 0, topP: 1, topK: 0 }, seed: 0, ...pinned },
        this.abort.signal,
      );
    const homework = this.scenario.workspace;
    if (!homework) {
      const question = this.scenario.firstMessage(problem);
      const reply = await request([{ role: 'user', content: question }]);
      return { question, text: reply.text, tokenTexts: reply.tokenTexts, version: reply.version };
    }
    const phase = homework.phases[homework.phases.length - 1];
    const path = homeworkPath(i);
    const files = new MemoryWorkspace();
    const attempt = phase.id === 'teacher' ? (problem.studentWork ?? studentWorkWithSlip(problem).text) : '';
    await files.write(path, homeworkFileText(problem) + attempt);
    const question = phase.firstMessage(problem, path);
    let version = Infinity;
    const reply = await agentTurn({
      transcript: [
        { role: 'system', content: WORKSPACE_SYSTEM_PROMPT },
        { role: 'user', content: question },
      ],
      workspace: files,
      generate: async (messages) => {
        const r = await request(messages, WORKSPACE_TOOLS);
        version = Math.min(version, r.version);
        return r;
      },
    });
    return { question, text: reply!.text, version };
  }
}
