/**
 * POST /v1/chat/completions on the served run loop: the checked request goes to its session
 * (by header, by body field, or paired by its messages), through ServeLoop.answer, and back in
 * OpenAI's shape, as one JSON or as server-sent events that carry the reply token by token
 * (serve-stream.ts) and end once its turn is committed. With vLLM's `return_token_ids` the
 * prompt's and the reply's ids go back too, as vLLM sends them.
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
import { ServeStoppedError, ServeTrainingError, type ServeLoop, type ServedReply } from '../runtime/serve-loop';
import type { SessionPairing } from '../runtime/serve-pairing';
import { ApiError } from './serve-errors';
import type { ChatHandler, EventStream } from './serve-http';
import { checkPromptBudget, parseChatRequest } from './serve-openai';
import { ReadableReplyStream, type ReplyPiece, type StreamTokenizer } from './serve-stream';
import { byteTokenBytes, readReply } from '../rl/readable-text';
import { replyMessage } from '../rl/tool-calls';
import type { AnyRunConfig } from '../runtime/run-config';
import type { RunRecord } from '../rl/records';

/** /healthz's `trainer`: whether steps train on the trainer thread, and if not, why. */
export interface TrainerPlace {
  thread: boolean;
  why?: string;
}

/** What the endpoint reads of the run's journal (the run's RunJournal, src/runtime/run-journal.ts). */
export interface ServedRunFile {
  readonly header: { config: AnyRunConfig; label: string; created: number };
  follow(fromSeq: number, listener: (records: readonly RunRecord[], firstSeq: number) => void): () => void;
}

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
  /** The model's vocabulary: every token id is below it. */
  vocabSize: number;
}

export interface ChatDependencies {
  loop: ServeLoop;
  pairing: SessionPairing;
  /** The prompt's token ids for a conversation, as the policy renders it. */
  promptIds: (messages: ChatMessage[], tools?: readonly object[]) => number[];
  /** The policy's tokenizer: a streamed reply is decoded as its tokens come. */
  tokenizer: StreamTokenizer;
  /** A new session's name, for a request that names none and extends none. */
  newSession: () => string;
  /** The run's records, for watchers (GET /v1/nextstate/records). */
  runFile: ServedRunFile;
  /** Where steps train, and why not on the trainer thread (placeSteps). */
  trainer: () => TrainerPlace;
  now?: () => number;
}

/** What the served turn was, for clients that want it (the reference's session_id, and more). */
interface TurnInfo {
  session: string;
  turn: number;
  turnType: TurnType;
  version: number;
  vocabSize?: number;
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
    const { loop } = this.deps;
    const s = loop.snapshot();
    const step = loop.stepInFlight();
    return {
      ok: true,
      status: s.status,
      step: s.step,
      version: s.version,
      sessions: s.sessionsStarted,
      bufferedSamples: s.bufferedSamples,
      // Whether chat requests are answered meanwhile: with a trainer thread they are.
      training: step && { step: step.step, since: new Date(step.since).toISOString(), servingMeanwhile: loop.policy.trainsBeside === true },
      trainer: this.deps.trainer(),
    };
  }

  /** The run (its config, label and start), then its records in commits as they land: what the lab charts. */
  records(from: number, stream: EventStream, signal: AbortSignal): void {
    const { config, label, created } = this.deps.runFile.header;
    stream.send({ type: 'run', label, created, config });
    const stop = this.deps.runFile.follow(from, (records, firstSeq) => stream.send({ type: 'records', from: firstSeq, records }));
    signal.addEventListener('abort', stop, { once: true });
  }

  /** ServeLoop.answer, with a stopping server and a step that holds the policy as 503 (the agent may retry). */
  private async answer(...args: Parameters<ServeLoop['answer']>): Promise<ServedReply> {
    try {
      return await this.deps.loop.answer(...args);
    } catch (e) {
      if (e instanceof ServeStoppedError) throw new ApiError(503, e.message, 'server_error', 'shutting_down');
      if (e instanceof ServeTrainingError) throw busy(e);
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
    checkPromptBudget(req, settings.maxPositions);
    // Refused before a stream opens, so that the refusal is a 503 a client retries.
    const refused = deps.loop.refusal();
    if (refused) throw busy(refused);
    const promptIds = deps.promptIds(req.messages, req.tools);
    const promptTokens = promptIds.length;
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
    const parse = settings.toolCallTags && req.tools !== undefined && req.toolChoice !== 'none';
    const stream = req.stream ? open() : null;
    const head = { id, object: 'chat.completion.chunk', created, model: settings.modelId };
    // Each piece of text as it becomes final, with its tokens: the client reads the reply as it is written.
    const chunk = (piece: ReplyPiece) => ({
      ...head,
      choices: [
        {
          index: 0,
          delta: piece.content ? { content: piece.content } : {},
          logprobs: req.logprobs ? logprobsOf(piece) : null,
          finish_reason: null,
          ...(req.returnTokenIds ? { token_ids: piece.tokenIds } : {}),
        },
      ],
    });
    const live = stream ? new ReadableReplyStream(deps.tokenizer, { stops: req.stop, toolCalls: parse }, (piece) => stream.send(chunk(piece))) : null;
    stream?.send({
      ...head,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
      ...(req.returnTokenIds ? { prompt_token_ids: promptIds } : {}),
    });
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
        ...(live ? { onToken: (tokenId: number, logprob: number) => live.token(tokenId, logprob) } : {}),
      },
      signal,
    );
    const written = replyMessage(served.reply.text, parse, `call_${id.slice(9, 21)}`);
    const message = servedMessage(written, served.reply.tokenTexts);
    // The agent's next request repeats this conversation with the reply: that pairs it (serve-pairing.ts).
    if (req.done) deps.pairing.forget(session);
    else if (req.session === null) deps.pairing.remember(session, req.messages, message);
    const info: TurnInfo = {
      session,
      turn: served.turn,
      turnType,
      version: served.reply.version,
      // The vocabulary the returned ids index, for a client that checks them (remote-policy.ts).
      ...(req.returnTokenIds ? { vocabSize: settings.vocabSize } : {}),
    };
    const finish = finishReason(served.reply, message);
    const usage = { prompt_tokens: promptTokens, completion_tokens: served.reply.tokenIds.length, total_tokens: promptTokens + served.reply.tokenIds.length };
    if (!live || !stream) {
      return {
        id,
        object: 'chat.completion',
        created,
        model: settings.modelId,
        choices: [
          {
            index: 0,
            message: outgoing(message),
            logprobs: req.logprobs ? logprobsOf(served.reply) : null,
            finish_reason: finish,
            ...(req.returnTokenIds ? { token_ids: served.reply.tokenIds } : {}),
          },
        ],
        ...(req.returnTokenIds ? { prompt_token_ids: promptIds } : {}),
        usage,
        session_id: session,
        nextstate: info,
      };
    }
    const rest = live.finish(written.content);
    if (rest.content || rest.tokenIds.length) stream.send(chunk(rest));
    // Each call whole, once the reply is parsed: OpenAI's shape for a call's first and only delta.
    message.tool_calls?.forEach((call, index) =>
      stream.send({ ...head, choices: [{ index: 0, delta: { tool_calls: [{ index, ...call }] }, logprobs: null, finish_reason: null }] }),
    );
    stream.send({ ...head, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }], session_id: session, nextstate: info });
    if (req.includeUsage) stream.send({ ...head, choices: [], usage });
    stream.done();
  }
}

/** 503 with Retry-After, as the reference's server answers during a weight update. */
function busy(e: ServeTrainingError): ApiError {
  return new ApiError(503, e.message, 'server_error', 'training', null, { 'retry-after': String(e.retryAfterS) });
}

function outgoing(m: ChatMessage): object {
  return m.tool_calls ? { role: 'assistant', content: m.content || null, tool_calls: m.tool_calls } : { role: 'assistant', content: m.content };
}

function finishReason(reply: PolicyReply, message: ChatMessage): string {
  if (message.tool_calls) return 'tool_calls';
  return reply.finishReason === 'length' ? 'length' : 'stop';
}

/**
 * A reply as it goes out, from the message its text makes (replyMessage): its prose as a person
 * reads it (src/rl/readable-text.ts), so an agent shows no "�" and its terminal gets no control
 * byte; a call's arguments stay as written. The run file keeps the text as decoded with the
 * tokens, and a resumed server pairs a client's next request by this message, as it went out.
 */
export function servedMessage(written: ChatMessage, tokenTexts: readonly string[] | undefined): ChatMessage {
  return { ...written, content: readReply(written.content, tokenTexts) };
}

/**
 * OpenAI's logprobs of tokens, each with its own text as records keep it (a byte token in byte
 * notation, `<0xE2>`) and the bytes it stands for.
 */
function logprobsOf(tokens: Pick<PolicyReply, 'tokenIds' | 'logprobs' | 'tokenTexts'>): object {
  return {
    content: tokens.tokenIds.map((_, i) => {
      const token = tokens.tokenTexts[i] ?? '';
      const bytes = byteTokenBytes(token) ?? [...Buffer.from(token, 'utf8')];
      return { token, logprob: tokens.logprobs[i], bytes, top_logprobs: [] };
    }),
  };
}
