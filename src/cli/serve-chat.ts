/**
 * POST /v1/chat/completions on the served run loop: the checked request goes to its session
 * (by header, by body field, or paired by its messages), through ServeLoop.answer, and back in
 * OpenAI's shape, as one JSON or as server-sent events.
 *
 * A request without a turn type counts as a main turn when it names no session either (an
 * upstream agent, which marks nothing: every request it sends is a step of its conversation, and
 * training on none of them would train nothing), and as a side turn when it names a session
 * without a type (the reference's protocol, whose patched agent marks every main turn, so an
 * unmarked one is background work: the reference's server defaults to side as well).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ChatMessage } from '../rl/messages';
import type { TurnType } from '../rl/sessions';
import type { PolicyReply } from '../runtime/policy-service';
import { ServeStoppedError, type ServeLoop, type ServedReply } from '../runtime/serve-loop';
import type { SessionPairing } from '../runtime/serve-pairing';
import type { RunJournal } from './run-journal';
import { ApiError } from './serve-errors';
import type { ChatHandler, EventStream } from './serve-http';
import { parseChatRequest } from './serve-openai';
import { replyMessage } from '../rl/tool-calls';

export interface ChatSettings {
  /** The name clients ask for (GET /v1/models lists it); other names get 404. */
  modelId: string;
  /** Other names accepted for the same model (its folder or hub id). */
  aliases: string[];
  /** Tokens a reply may have at most, whatever the client asks. */
  maxTokens: number;
  /** The model's positions: prompt plus reply must fit. */
  maxPositions: number;
  temperature: number;
  topP: number;
  /** Whether replies are searched for `<tool_call>` blocks (the chat template's format). */
  toolCallTags: boolean;
  /** Seeds of requests that give none: run seed based, so a replayed run repeats. */
  seed: number;
}

export interface ChatDependencies {
  loop: ServeLoop;
  pairing: SessionPairing;
  /** Prompt tokens of a conversation, as the policy renders it. */
  promptTokens: (messages: ChatMessage[], tools?: readonly object[]) => number;
  /** A new session's name, for a request that names none and extends none. */
  newSession: () => string;
  /** The run's records, for watchers (GET /v1/nextstate/records). */
  runFile: Pick<RunJournal, 'follow' | 'header'>;
  now?: () => number;
}

/** What the served turn was, for clients that want it (the reference's session_id, and more). */
interface TurnInfo {
  session: string;
  turn: number;
  turnType: TurnType;
  version: number;
}

export class ChatEndpoint implements ChatHandler {
  private requests = 0;
  private readonly now: () => number;

  constructor(
    private readonly settings: ChatSettings,
    private readonly deps: ChatDependencies,
  ) {
    this.now = deps.now ?? Date.now;
  }

  models(): object {
    return { object: 'list', data: [{ id: this.settings.modelId, object: 'model', created: 0, owned_by: 'nextstate' }] };
  }

  health(): object {
    const s = this.deps.loop.snapshot();
    return { ok: true, status: s.status, step: s.step, version: s.version, sessions: s.sessionsStarted, bufferedSamples: s.bufferedSamples };
  }

  /** The run (its config, label and start), then its records in commits as they land: what the lab charts. */
  records(from: number, stream: EventStream, signal: AbortSignal): void {
    const { config, label, created } = this.deps.runFile.header;
    stream.send({ type: 'run', label, created, config });
    const stop = this.deps.runFile.follow(from, (records, firstSeq) => stream.send({ type: 'records', from: firstSeq, records }));
    signal.addEventListener('abort', stop, { once: true });
  }

  /** ServeLoop.answer, with a stopping server as 503 (the agent may retry once it is back). */
  private async answer(...args: Parameters<ServeLoop['answer']>): Promise<ServedReply> {
    try {
      return await this.deps.loop.answer(...args);
    } catch (e) {
      if (e instanceof ServeStoppedError) throw new ApiError(503, e.message, 'server_error', 'shutting_down');
      throw e;
    }
  }

  async chat(body: unknown, headers: IncomingMessage['headers'], signal: AbortSignal, open: () => EventStream): Promise<object | void> {
    const req = parseChatRequest(body, headers);
    const { settings, deps } = this;
    if (req.model !== null && req.model !== settings.modelId && !settings.aliases.includes(req.model)) {
      throw new ApiError(
        404,
        `model ${JSON.stringify(req.model)} is not served here; this server serves "${settings.modelId}" (GET /v1/models)`,
        'invalid_request_error',
        'model_not_found',
        'model',
      );
    }
    const promptTokens = deps.promptTokens(req.messages, req.tools);
    const room = settings.maxPositions - promptTokens;
    const maxNewTokens = Math.min(req.maxTokens ?? settings.maxTokens, settings.maxTokens, room);
    if (maxNewTokens < 1) {
      throw new ApiError(
        400,
        `the prompt has ${promptTokens} tokens and the model ${settings.maxPositions} positions, leaving no room for a reply; send a shorter conversation`,
        'invalid_request_error',
        'context_length_exceeded',
        'messages',
      );
    }
    const paired = req.session === null ? deps.pairing.match(req.messages) : null;
    const session = req.session ?? paired?.session ?? deps.newSession();
    // The message right after the reply answers it (the user's, a tool's); an agent may append more.
    const nextState = paired ? req.messages[paired.replyAt + 1] : undefined;
    const turnType: TurnType = req.turnType ?? (req.session === null ? 'main' : 'side');
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(this.now() / 1000);
    const stream = req.stream ? open() : null;
    const head = { id, object: 'chat.completion.chunk', created, model: settings.modelId };
    stream?.send({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    const served = await this.answer(
      {
        session,
        turnType,
        done: req.done,
        messages: req.messages,
        ...(nextState ? { nextState } : {}),
        ...(req.tools ? { tools: req.tools } : {}),
        maxNewTokens,
        sampling: { temperature: req.temperature ?? settings.temperature, topP: req.topP ?? settings.topP, topK: 0 },
        seed: req.seed ?? settings.seed * 1_000_003 + this.requests++,
        ...(req.stop.length ? { stop: req.stop } : {}),
      },
      signal,
    );
    const parse = settings.toolCallTags && req.tools !== undefined && req.toolChoice !== 'none';
    const message = replyMessage(served.reply.text, parse, `call_${id.slice(9, 21)}`);
    // The agent's next request repeats this conversation with the reply: that pairs it (serve-pairing.ts).
    if (req.done) deps.pairing.forget(session);
    else if (req.session === null) deps.pairing.remember(session, req.messages, message);
    const info: TurnInfo = { session, turn: served.turn, turnType, version: served.reply.version };
    const finish = finishReason(served.reply, message);
    const usage = { prompt_tokens: promptTokens, completion_tokens: served.reply.tokenIds.length, total_tokens: promptTokens + served.reply.tokenIds.length };
    const logprobs = req.logprobs ? logprobsOf(served) : null;
    if (!stream) {
      return {
        id,
        object: 'chat.completion',
        created,
        model: settings.modelId,
        choices: [{ index: 0, message: outgoing(message), logprobs, finish_reason: finish }],
        usage,
        session_id: session,
        nextstate: info,
      };
    }
    const delta: Record<string, unknown> = { content: message.content };
    if (message.tool_calls) delta.tool_calls = message.tool_calls.map((c, index) => ({ index, ...c }));
    stream.send({ ...head, choices: [{ index: 0, delta, logprobs, finish_reason: null }] });
    stream.send({ ...head, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }], session_id: session, nextstate: info });
    if (req.includeUsage) stream.send({ ...head, choices: [], usage });
    stream.done();
  }
}

function outgoing(m: ChatMessage): object {
  return m.tool_calls ? { role: 'assistant', content: m.content || null, tool_calls: m.tool_calls } : { role: 'assistant', content: m.content };
}

function finishReason(reply: PolicyReply, message: ChatMessage): string {
  if (message.tool_calls) return 'tool_calls';
  return reply.finishReason === 'length' ? 'length' : 'stop';
}

function logprobsOf(served: ServedReply): object {
  const r = served.reply;
  return {
    content: r.tokenIds.map((_, i) => {
      const token = r.tokenTexts[i] ?? '';
      return { token, logprob: r.logprobs[i], bytes: [...Buffer.from(token, 'utf8')], top_logprobs: [] };
    }),
  };
}
