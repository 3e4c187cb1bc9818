/**
 * The OpenAI chat-completions request as `nextstate serve` reads it: untrusted JSON checked
 * field by field, with the limits the run file's records have, into what the run loop takes.
 * Fields a client may send that do not change the answer (user, metadata, store, ...) are
 * ignored; fields whose meaning the server cannot honour (n > 1, top_logprobs) are refused with
 * a 400 that says so, rather than answered differently from what was asked.
 */
import { overrun, overrunMessage, promptBudget, promptParts } from '../gpu/prompt-budget';
import type { ChatMessage, ToolCall } from '../rl/messages';
import { TURN_TYPES, type TurnType } from '../rl/sessions';
import { RECORD_LIMITS } from '../rl/record-limits';
import { ApiError, invalidField } from './serve-errors';

/** The toggles a client may send for the reference's session protocol, as headers or body fields. */
export interface SessionFields {
  /** null: none given; the server pairs the request by its messages. */
  session: string | null;
  /** null: none given (see turnTypeOf). */
  turnType: TurnType | null;
  done: boolean;
}

const TOOL_CHOICE_WORDS = ['none', 'auto', 'required'] as const;
export type ToolChoice = (typeof TOOL_CHOICE_WORDS)[number] | { name: string };

export interface ChatRequest extends SessionFields {
  model: string | null;
  messages: ChatMessage[];
  tools?: object[];
  toolChoice: ToolChoice;
  /** max_completion_tokens, else max_tokens; null: the server's default. */
  maxTokens: number | null;
  temperature: number | null;
  topP: number | null;
  seed: number | null;
  stop: string[];
  stream: boolean;
  includeUsage: boolean;
  logprobs: boolean;
  /** vLLM's `return_token_ids`: the prompt's and the reply's token ids go back with it (for RL clients). */
  returnTokenIds: boolean;
}

const MAX_STOP = 4;
const MAX_STOP_CHARS = 256;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function text(v: unknown, param: string, max: number = RECORD_LIMITS.text): string {
  if (typeof v !== 'string') throw invalidField(param, `must be a string, got ${kindOf(v)}`);
  if (v.length > max) throw invalidField(param, `has ${v.length} characters; the limit is ${max}`);
  return v;
}

function kindOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

function optionalNumber(body: Json, key: string, ok: (x: number) => boolean, rule: string): number | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !ok(v)) throw invalidField(key, `must be ${rule}, got ${JSON.stringify(v)}`);
  return v;
}

/** String content, or an array of text parts joined by newlines; image or audio parts are refused. */
function content(v: unknown, param: string, role: string): string {
  if (v === undefined || v === null) {
    if (role === 'assistant') return '';
    throw invalidField(param, 'is missing; give the message text as a string or an array of text parts');
  }
  if (typeof v === 'string') return text(v, param);
  if (!Array.isArray(v)) throw invalidField(param, `must be a string or an array of text parts, got ${kindOf(v)}`);
  if (v.length > RECORD_LIMITS.messages) throw invalidField(param, `has ${v.length} parts; the limit is ${RECORD_LIMITS.messages}`);
  const parts = v.map((p, i) => {
    if (!isObject(p) || p.type !== 'text')
      throw invalidField(`${param}[${i}]`, 'must be a text part {"type": "text", "text": ...}; this server serves a text-only model');
    return text(p.text, `${param}[${i}].text`);
  });
  return text(parts.join('\n'), param);
}

function toolCalls(v: unknown, param: string): ToolCall[] {
  if (!Array.isArray(v)) throw invalidField(param, `must be an array, got ${kindOf(v)}`);
  if (v.length > RECORD_LIMITS.toolCalls) throw invalidField(param, `has ${v.length} calls; the limit is ${RECORD_LIMITS.toolCalls}`);
  return v.map((c, i) => {
    const at = `${param}[${i}]`;
    if (!isObject(c) || !isObject(c.function)) throw invalidField(at, 'must be {"id", "type": "function", "function": {"name", "arguments"}}');
    const args = c.function.arguments;
    return {
      id: c.id === undefined ? `call_${i}` : text(c.id, `${at}.id`, RECORD_LIMITS.id),
      type: 'function',
      function: {
        name: text(c.function.name, `${at}.function.name`, RECORD_LIMITS.id),
        // Some clients send the arguments as an object; the template wants the JSON text.
        arguments: text(isObject(args) ? JSON.stringify(args) : (args ?? ''), `${at}.function.arguments`),
      },
    };
  });
}

const ROLES: Record<string, ChatMessage['role']> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant', tool: 'tool' };

function message(v: unknown, i: number): ChatMessage {
  const param = `messages[${i}]`;
  if (!isObject(v)) throw invalidField(param, `must be an object, got ${kindOf(v)}`);
  const role = typeof v.role === 'string' ? ROLES[v.role] : undefined;
  if (!role) throw invalidField(`${param}.role`, `must be system, developer, user, assistant or tool, got ${JSON.stringify(v.role)}`);
  const m: ChatMessage = { role, content: content(v.content, `${param}.content`, role) };
  if (role === 'assistant' && v.tool_calls !== undefined && v.tool_calls !== null) {
    const calls = toolCalls(v.tool_calls, `${param}.tool_calls`);
    if (calls.length) m.tool_calls = calls;
  }
  if (role === 'tool' && v.tool_call_id !== undefined) m.tool_call_id = text(v.tool_call_id, `${param}.tool_call_id`, RECORD_LIMITS.id);
  return m;
}

function tools(v: unknown): object[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalidField('tools', `must be an array, got ${kindOf(v)}`);
  if (v.length > RECORD_LIMITS.toolCalls) throw invalidField('tools', `has ${v.length} tools; the limit is ${RECORD_LIMITS.toolCalls}`);
  v.forEach((t, i) => {
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function) || typeof t.function.name !== 'string') {
      throw invalidField(`tools[${i}]`, 'must be {"type": "function", "function": {"name", "description", "parameters"}}');
    }
  });
  return v.length ? (v as object[]) : undefined;
}

function toolChoice(v: unknown): ToolChoice {
  if (v === undefined || v === null) return 'auto';
  if (TOOL_CHOICE_WORDS.includes(v as (typeof TOOL_CHOICE_WORDS)[number])) return v as (typeof TOOL_CHOICE_WORDS)[number];
  if (isObject(v) && isObject(v.function) && typeof v.function.name === 'string')
    return { name: text(v.function.name, 'tool_choice.function.name', RECORD_LIMITS.id) };
  throw invalidField('tool_choice', `must be ${TOOL_CHOICE_WORDS.map((w) => JSON.stringify(w)).join(', ')} or {"type": "function", "function": {"name"}}`);
}

function stop(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length > MAX_STOP) throw invalidField('stop', `must be a string or an array of at most ${MAX_STOP} strings`);
  return list.map((s, i) => text(s, `stop[${i}]`, MAX_STOP_CHARS)).filter((s) => s.length > 0);
}

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on']);

/** X-Session-Done and session_done: the reference's spellings of yes. */
export function truthy(v: unknown): boolean {
  return v === true || (typeof v === 'string' && TRUE_WORDS.has(v.trim().toLowerCase())) || v === 1;
}

function turnType(v: unknown, param: string): TurnType | null {
  if (v === undefined || v === null || v === '') return null;
  const t = typeof v === 'string' ? v.trim().toLowerCase() : v;
  if (!TURN_TYPES.includes(t as TurnType))
    throw invalidField(param, `must be ${TURN_TYPES.map((w) => JSON.stringify(w)).join(' or ')}, got ${JSON.stringify(v)}`);
  return t as TurnType;
}

function sessionId(v: unknown, param: string): string | null {
  if (v === undefined || v === null || v === '') return null;
  return text(typeof v === 'number' ? String(v) : v, param, RECORD_LIMITS.id);
}

/** The session fields of the headers, each overriding the body's (the reference reads headers first). */
export function sessionFields(headers: Record<string, string | string[] | undefined>, body: Json): SessionFields {
  const header = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  return {
    session: sessionId(header('x-session-id'), 'X-Session-Id') ?? sessionId(body.session_id, 'session_id'),
    turnType: turnType(header('x-turn-type'), 'X-Turn-Type') ?? turnType(body.turn_type, 'turn_type'),
    done: truthy(header('x-session-done')) || truthy(body.session_done),
  };
}

/**
 * The request, checked.
 *
 * @throws ApiError (400) naming the first field that is wrong
 */
export function parseChatRequest(body: unknown, headers: Record<string, string | string[] | undefined>): ChatRequest {
  if (!isObject(body)) throw invalidField('(body)', `must be a JSON object, got ${kindOf(body)}`);
  const raw = body.messages;
  if (!Array.isArray(raw) || raw.length === 0) throw invalidField('messages', 'must be a non-empty array of {"role", "content"}');
  if (raw.length > RECORD_LIMITS.messages) throw invalidField('messages', `has ${raw.length} messages; the limit is ${RECORD_LIMITS.messages}`);
  const n = optionalNumber(body, 'n', Number.isInteger, 'an integer');
  if (n !== null && n !== 1) throw invalidField('n', 'must be 1: the server trains on each answer it gives, one per request');
  const top = optionalNumber(body, 'top_logprobs', Number.isInteger, 'an integer');
  if (top) throw invalidField('top_logprobs', 'is not supported (sampling keeps only the chosen tokens); ask for logprobs alone');
  const positive = (x: number) => Number.isInteger(x) && x > 0;
  const streamOptions = body.stream_options;
  return {
    model: body.model === undefined || body.model === null ? null : text(body.model, 'model', RECORD_LIMITS.id),
    messages: raw.map(message),
    tools: tools(body.tools),
    toolChoice: toolChoice(body.tool_choice),
    maxTokens:
      optionalNumber(body, 'max_completion_tokens', positive, 'a positive integer') ?? optionalNumber(body, 'max_tokens', positive, 'a positive integer'),
    temperature: optionalNumber(body, 'temperature', (x) => x >= 0 && x <= 2, 'between 0 and 2'),
    topP: optionalNumber(body, 'top_p', (x) => x > 0 && x <= 1, 'above 0 and at most 1'),
    seed: optionalNumber(body, 'seed', Number.isSafeInteger, 'an integer'),
    stop: stop(body.stop),
    stream: body.stream === true,
    includeUsage: isObject(streamOptions) && streamOptions.include_usage === true,
    logprobs: body.logprobs === true,
    returnTokenIds: body.return_token_ids === true,
    ...sessionFields(headers, body),
  };
}

/**
 * Refuses a request whose text the model's positions cannot hold, counted before it is rendered
 * or tokenized (prompt-budget.ts): every part the chat template renders, and the stop strings.
 *
 * @throws ApiError (400) naming the part that passes the budget, and the budget
 */
export function checkPromptBudget(req: ChatRequest, positions: number): void {
  const over = overrun(promptParts(req.messages, req.tools, req.stop), promptBudget(positions));
  if (over) throw new ApiError(400, overrunMessage(over, positions), 'invalid_request_error', 'context_length_exceeded', over.field);
}
