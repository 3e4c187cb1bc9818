/**
 * A policy that lives on a server speaking the reference's session protocol: its slime or
 * Tinker server (openclaw-rl/openclaw_api_server.py, openclaw-tinker/), or `nextstate serve`.
 * Each generation is one POST /v1/chat/completions carrying X-Session-Id, X-Turn-Type and
 * X-Session-Done, so the server pairs every main turn with its next state, judges it and trains
 * on it. This side only generates: scoring, training and the adapter stay on the server.
 *
 * The reply is untrusted: its size is capped by the endpoint client, and its fields are checked
 * here before they reach a record.
 */
import { OpenAICompatibleGenerator } from '../generators/endpoint';
import { EndpointResponseError } from '../generators/endpoint-errors';
import { EngineError } from '../gpu/errors';
import type { FinishReason } from '../gpu/generate';
import type { PeftFiles } from '../gpu/peft';
import type { ToolCall } from '../rl/messages';
import { toolCallsAsText } from '../rl/tool-calls';
import { MAX_TOKEN_ID, RECORD_LIMITS } from '../rl/record-limits';
import type { PolicyReply, PolicyRequest, PolicyService, ScoreItem, ScoredTopK, SessionTag, TrainResult } from './policy-service';
import type { RemotePolicyConfig } from './run-config';

/** What only the server can do was asked of a remote policy here. */
export class RemotePolicyError extends EngineError {
  override name = 'RemotePolicyError';
  constructor(url: string, what: string) {
    super(
      `the policy runs on the server at ${url}, which trains it: it cannot ${what} here; do that on the server (nextstate serve's run file holds the adapter)`,
    );
  }
}

/**
 * Calls with no session of their own (the evaluation's answers) go as side turns of one session
 * that each call also ends: the server logs them and never trains on them, and no turn of theirs
 * stays open waiting for a next state.
 */
const SIDE_SESSION: Omit<SessionTag, 'id'> = { turnType: 'side', done: true };
const SIDE_SESSION_ID = 'side';
/** A policy server may take minutes per call under load (a batch on slime, a queue on Tinker). */
const TIMEOUT_MS = 600_000;

export interface RemotePolicyOptions {
  /** The key, resolved by the caller (config or environment); never stored beyond the client. */
  apiKey?: string;
  /**
   * Put before every session id: two runs (or a rerun) talking to one server must not share a
   * session "s0", or the server would pair one run's answer with the other's next message.
   */
  sessionPrefix?: string;
  fetch?: typeof fetch;
  now?: () => number;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export class RemotePolicyService implements PolicyService {
  readonly label: string;
  readonly sessionPrefix: string;
  private readonly client: OpenAICompatibleGenerator;
  private readonly now: () => number;
  /** The newest version a reply reported (nextstate serve does; servers that report none stay at 0). */
  private version = 0;

  constructor(
    private readonly config: Pick<RemotePolicyConfig, 'url' | 'model'>,
    options: RemotePolicyOptions = {},
  ) {
    this.sessionPrefix = options.sessionPrefix ?? `run-${crypto.randomUUID().slice(0, 8)}-`;
    this.label = `server: ${config.model} at ${config.url} (it judges and trains)`;
    this.now = options.now ?? Date.now;
    this.client = new OpenAICompatibleGenerator(
      { baseUrl: config.url, model: config.model, apiKey: options.apiKey, timeoutMs: TIMEOUT_MS, label: this.label },
      options.fetch ? { fetch: options.fetch } : {},
    );
  }

  servingVersion(): number {
    return this.version;
  }

  /** One HTTP call per request, all at once: the server batches them as it sees fit. */
  generate(requests: PolicyRequest[], signal?: AbortSignal): Promise<PolicyReply[]> {
    return Promise.all(requests.map((r) => this.generateOne(r, signal)));
  }

  private async generateOne(request: PolicyRequest, signal?: AbortSignal): Promise<PolicyReply> {
    const startedAt = this.now();
    const tag = request.session ?? { id: SIDE_SESSION_ID, ...SIDE_SESSION };
    const headers: Record<string, string> = { 'X-Session-Id': this.sessionPrefix + tag.id, 'X-Turn-Type': tag.turnType };
    if (tag.done) headers['X-Session-Done'] = 'true';
    const { temperature, topP } = request.sampling;
    // top-k has no field in the OpenAI API; the server samples with its own. The token ids and
    // their log-probs are asked for as vLLM's RL clients ask (return_token_ids), so the run file
    // records what the model read and wrote, as a local policy's does.
    const json = await this.client.complete(
      request.messages,
      { temperature, topP, maxNewTokens: request.maxNewTokens, seed: request.seed, stop: request.stop, signal },
      { headers, body: { ...(request.tools ? { tools: request.tools } : {}), logprobs: true, return_token_ids: true } },
    );
    const { text, finishReason, version, tokens } = this.readReply(json);
    if (version !== null) this.version = Math.max(this.version, version);
    // A server that sends no ids (one that ignores the field) leaves the reply without them.
    const ids = tokens ?? { tokenIds: [], logprobs: [], tokenTexts: [] };
    return { text, ...ids, version: version ?? this.version, finishReason, startedAt, finishedAt: this.now() };
  }

  /**
   * The reply's text, why it ended, (nextstate serve's `nextstate.version`) the version that
   * wrote it, and its tokens where the server sent their ids and log-probs.
   */
  private readReply(json: unknown): { text: string; finishReason: FinishReason; version: number | null; tokens: ReplyTokens | null } {
    const bad = (problem: string) => new EndpointResponseError(`The policy server ${this.config.url} (model "${this.config.model}")`, problem);
    const choice = isObject(json) && Array.isArray(json.choices) ? json.choices[0] : undefined;
    if (!isObject(choice) || !isObject(choice.message)) throw bad('no choices[0].message');
    const content = choice.message.content ?? '';
    if (typeof content !== 'string') throw bad('choices[0].message.content is not a string');
    if (content.length > RECORD_LIMITS.text) throw bad(`the reply has ${content.length} characters; the limit is ${RECORD_LIMITS.text}`);
    const info = isObject(json) && isObject(json.nextstate) ? json.nextstate.version : undefined;
    const version = Number.isSafeInteger(info) && (info as number) >= 0 ? (info as number) : null;
    // A server that parses tool calls out of the text (nextstate serve, vLLM) sends them apart:
    // they go back into the text as the model wrote them, where the workspace reads them.
    const calls = readToolCalls(choice.message.tool_calls);
    if (calls === null) throw bad('choices[0].message.tool_calls is not a list of function calls with a name and string arguments');
    const text = calls.length ? [content, toolCallsAsText(calls)].filter(Boolean).join('\n') : content;
    if (text.length > RECORD_LIMITS.text) throw bad(`the reply has ${text.length} characters; the limit is ${RECORD_LIMITS.text}`);
    const vocab = isObject(json) && isObject(json.nextstate) ? json.nextstate.vocabSize : undefined;
    const vocabSize = Number.isSafeInteger(vocab) && (vocab as number) > 0 ? (vocab as number) : null;
    const tokens = readTokens(json as Json, choice, vocabSize, bad);
    return { text, finishReason: choice.finish_reason === 'length' ? 'length' : 'stop', version, tokens };
  }

  score(_items: ScoreItem[]): Promise<number[][]> {
    return Promise.reject(new RemotePolicyError(this.config.url, 'score completions for a teacher'));
  }

  scoreTopK(): Promise<ScoredTopK[]> {
    return Promise.reject(new RemotePolicyError(this.config.url, 'score top-k tokens for hint selection'));
  }

  train(): Promise<TrainResult> {
    return Promise.reject(new RemotePolicyError(this.config.url, 'train'));
  }

  exportAdapter(): Promise<PeftFiles> {
    return Promise.reject(new RemotePolicyError(this.config.url, 'export its adapter'));
  }

  restore(): Promise<void> {
    return Promise.reject(new RemotePolicyError(this.config.url, 'continue from a saved adapter'));
  }
}

type ReplyTokens = Pick<PolicyReply, 'tokenIds' | 'logprobs' | 'tokenTexts' | 'promptIds'>;

/** Untrusted token ids: a list of at most RECORD_LIMITS.tokens integers below the vocabulary. */
function readIds(value: unknown, field: string, vocabSize: number | null, bad: (problem: string) => Error): number[] {
  if (!Array.isArray(value)) throw bad(`${field} is not a list of token ids`);
  if (value.length > RECORD_LIMITS.tokens) throw bad(`${field} has ${value.length} ids; the limit is ${RECORD_LIMITS.tokens}`);
  // A server that does not say its vocabulary is held to what a record can hold.
  const limit = vocabSize ?? MAX_TOKEN_ID + 1;
  const at = value.findIndex((id) => !Number.isSafeInteger(id) || id < 0 || id >= limit);
  if (at >= 0) {
    const below = vocabSize ? `the vocabulary size it reports, ${vocabSize}` : String(limit);
    throw bad(`${field}[${at}] is ${JSON.stringify(value[at])}, not a token id: an integer from 0 below ${below}`);
  }
  return value as number[];
}

/**
 * The reply's tokens from vLLM's fields (`choices[0].token_ids`, `prompt_token_ids` on the
 * response or the choice) and OpenAI's logprobs. null where the server sent no ids, or ids
 * without the log-probs a record keeps beside each one.
 */
function readTokens(json: Json, choice: Json, vocabSize: number | null, bad: (problem: string) => Error): ReplyTokens | null {
  const given = (v: unknown) => v !== undefined && v !== null;
  if (!given(choice.token_ids)) return null;
  const tokenIds = readIds(choice.token_ids, 'choices[0].token_ids', vocabSize, bad);
  const content = isObject(choice.logprobs) ? choice.logprobs.content : undefined;
  if (!given(content)) return null;
  if (!Array.isArray(content) || content.length !== tokenIds.length) {
    const n = Array.isArray(content) ? `${content.length} tokens` : 'no list';
    throw bad(`choices[0].token_ids has ${tokenIds.length} ids but choices[0].logprobs.content has ${n}; a reply's ids and log-probs go together`);
  }
  const logprobs: number[] = [];
  const tokenTexts: string[] = [];
  for (const [i, t] of content.entries()) {
    const logprob = isObject(t) ? t.logprob : undefined;
    if (typeof logprob !== 'number' || !Number.isFinite(logprob)) throw bad(`choices[0].logprobs.content[${i}].logprob is not a finite number`);
    const token = isObject(t) ? t.token : undefined;
    if (typeof token !== 'string' || token.length > RECORD_LIMITS.id * 4) throw bad(`choices[0].logprobs.content[${i}].token is not a token's text`);
    logprobs.push(logprob);
    tokenTexts.push(token);
  }
  const [prompt, promptField] = given(json.prompt_token_ids)
    ? [json.prompt_token_ids, 'prompt_token_ids']
    : [choice.prompt_token_ids, 'choices[0].prompt_token_ids'];
  const promptIds = given(prompt) ? readIds(prompt, promptField, vocabSize, bad) : undefined;
  return { tokenIds, logprobs, tokenTexts, ...(promptIds ? { promptIds } : {}) };
}

/** The calls of an untrusted `tool_calls` field: [] when absent, null when it is not a list of calls. */
function readToolCalls(value: unknown): ToolCall[] | null {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > RECORD_LIMITS.toolCalls) return null;
  const calls: ToolCall[] = [];
  for (const c of value) {
    const fn = isObject(c) ? c.function : undefined;
    if (!isObject(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') return null;
    calls.push({ id: typeof c.id === 'string' ? c.id : '', type: 'function', function: { name: fn.name, arguments: fn.arguments } });
  }
  return calls;
}
