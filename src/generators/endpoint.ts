import type { ChatMessage } from '../rl/messages';
import { abortableSleep } from './abortable-sleep';
import {
  EndpointAuthError,
  EndpointHttpError,
  EndpointNetworkError,
  EndpointNotFoundError,
  EndpointResponseError,
  EndpointTimeoutError,
} from './endpoint-errors';
import type { GenerateOptions, TextGenerator } from './generator';
import { BodyTooLargeError, readBodyText } from '../models/read-body';

/** An OpenAI-compatible chat-completions endpoint: OpenAI, vLLM, SGLang, Ollama, LM Studio. */
export interface EndpointConfig {
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  /** Held in memory only; never serialised, logged or put in an error message. */
  apiKey?: string;
  /** Per attempt. */
  timeoutMs?: number;
  /** Further attempts after the first, for 429, 5xx, network failures and timeouts. */
  maxRetries?: number;
  /** First backoff delay; doubles with each retry unless the server sends Retry-After. */
  retryBaseMs?: number;
  label?: string;
}

/** What may be shown, stored or exported about an endpoint. */
export interface EndpointDescription {
  baseUrl: string;
  model: string;
  timeoutMs: number;
  maxRetries: number;
  retryBaseMs: number;
  label: string;
  hasApiKey: boolean;
}

/** What a caller adds to one completion request beyond the chat fields. */
export interface CompletionExtras {
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
}

export interface EndpointDeps {
  fetch?: typeof fetch;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const DEFAULTS = { timeoutMs: 120_000, maxRetries: 3, retryBaseMs: 1_000 };
/** A server asking for a longer pause than this is waited on for this long, then retried. */
const MAX_DELAY_MS = 60_000;
/** Server error bodies are quoted only this far, enough for their message. */
const DETAIL_CHARS = 300;
/** A chat completion is kilobytes; a body past this is not one, and is not read further. */
export const MAX_RESPONSE_BYTES = 16_000_000;
/** Of an error body, only enough for its message is read. */
const MAX_DETAIL_BYTES = 64_000;

export function describeEndpoint(config: EndpointConfig): EndpointDescription {
  return {
    baseUrl: config.baseUrl,
    model: config.model,
    timeoutMs: config.timeoutMs ?? DEFAULTS.timeoutMs,
    maxRetries: config.maxRetries ?? DEFAULTS.maxRetries,
    retryBaseMs: config.retryBaseMs ?? DEFAULTS.retryBaseMs,
    label: config.label ?? `${config.model} @ ${config.baseUrl}`,
    hasApiKey: Boolean(config.apiKey),
  };
}

export class OpenAICompatibleGenerator implements TextGenerator {
  readonly kind = 'endpoint' as const;
  readonly label: string;
  readonly #config: EndpointDescription;
  // A private field: not enumerable, not in JSON, not shown by structured clone or inspect.
  readonly #apiKey: string;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(config: EndpointConfig, deps: EndpointDeps = {}) {
    this.#config = describeEndpoint(config);
    this.#apiKey = config.apiKey ?? '';
    this.label = this.#config.label;
    // Bound so that a browser's fetch is not called with the generator as `this`.
    this.#fetch = deps.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#sleep = deps.sleep ?? abortableSleep;
  }

  toJSON(): EndpointDescription {
    return { ...this.#config };
  }

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    return this.#content(await this.complete(messages, opts));
  }

  /**
   * One chat completion as the server sent it (parsed JSON, not yet checked), with retries.
   * `extra` adds request headers and body fields: a policy server's session protocol
   * (remote-policy.ts) rides on this same client.
   */
  async complete(messages: ChatMessage[], opts: GenerateOptions = {}, extra: CompletionExtras = {}): Promise<unknown> {
    const { maxRetries, retryBaseMs } = this.#config;
    const body = JSON.stringify({ ...this.#requestBody(messages, opts), ...extra.body });
    for (let attempt = 0; ; attempt++) {
      const canRetry = attempt < maxRetries;
      const backoff = Math.min(retryBaseMs * 2 ** attempt, MAX_DELAY_MS);
      let sent: { response: Response; text: string };
      try {
        sent = await this.#post(body, opts.signal, extra.headers);
      } catch (error) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (!canRetry || error instanceof EndpointResponseError) throw error;
        await this.#sleep(backoff, opts.signal);
        continue;
      }
      const { response, text } = sent;
      if (response.ok) return this.#json(text);
      if (response.status === 401 || response.status === 403) {
        throw new EndpointAuthError(this.#where(), response.status);
      }
      if (response.status === 404) {
        throw new EndpointNotFoundError(this.#where(), this.#detail(text));
      }
      const retryable = response.status === 429 || response.status >= 500;
      if (!retryable || !canRetry) {
        throw new EndpointHttpError(this.#where(), response.status, this.#detail(text), attempt + 1);
      }
      await this.#sleep(retryAfterMs(response) ?? backoff, opts.signal);
    }
  }

  #requestBody(messages: ChatMessage[], opts: GenerateOptions) {
    return {
      model: this.#config.model,
      messages: messages.map(({ role, content }) => ({ role, content })),
      stream: false,
      ...(opts.temperature !== undefined && { temperature: opts.temperature }),
      ...(opts.topP !== undefined && { top_p: opts.topP }),
      ...(opts.maxNewTokens !== undefined && { max_tokens: opts.maxNewTokens }),
      ...(opts.seed !== undefined && { seed: opts.seed }),
      ...(opts.stop?.length && { stop: opts.stop }),
    };
  }

  /**
   * One attempt, body included: the timeout covers a server that sends its headers and then
   * stalls. A timeout or a network failure becomes an EndpointError, a caller abort does not.
   * The body of a success is read up to MAX_RESPONSE_BYTES; of a failure, enough to quote.
   */
  async #post(body: string, signal?: AbortSignal, extraHeaders: Record<string, string> = {}): Promise<{ response: Response; text: string }> {
    const timeout = AbortSignal.timeout(this.#config.timeoutMs);
    const headers: Record<string, string> = { ...extraHeaders, 'Content-Type': 'application/json' };
    if (this.#apiKey) headers.Authorization = `Bearer ${this.#apiKey}`;
    try {
      const response = await this.#fetch(`${this.#config.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
        method: 'POST',
        headers,
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      // An error body only serves the message: a part of it will do, and none if it fails.
      const text = response.ok
        ? await readBodyText(response, { maxBytes: MAX_RESPONSE_BYTES })
        : await readBodyText(response, { maxBytes: MAX_DETAIL_BYTES, truncate: true }).catch(() => '');
      return { response, text };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof BodyTooLargeError) {
        throw new EndpointResponseError(this.#where(), `the body is larger than ${Math.round(error.limit / 1_000_000)} MB`);
      }
      if (timeout.aborted) throw new EndpointTimeoutError(this.#where(), this.#config.timeoutMs);
      throw new EndpointNetworkError(this.#where(), this.#redact(describeCause(error)));
    }
  }

  #json(text: string): unknown {
    try {
      return JSON.parse(text);
    } catch {
      throw new EndpointResponseError(this.#where(), `body is not JSON: ${this.#redact(text.slice(0, 80))}`);
    }
  }

  #content(json: unknown): string {
    const content = (json as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
    // Reasoning servers may send null content when everything went into reasoning_content.
    if (content === null) return '';
    if (typeof content !== 'string') {
      throw new EndpointResponseError(this.#where(), 'no string at choices[0].message.content');
    }
    return content;
  }

  #detail(text: string): string {
    let detail = text;
    try {
      const message = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message;
      if (typeof message === 'string') detail = message;
    } catch {
      // Not JSON: quote the raw text.
    }
    return this.#redact(detail.replace(/\s+/g, ' ').trim().slice(0, DETAIL_CHARS));
  }

  /** Servers sometimes echo the request; the key must not travel on in our messages. */
  #redact(text: string): string {
    return this.#apiKey ? text.split(this.#apiKey).join('[redacted]') : text;
  }

  #where(): string {
    return `The endpoint ${this.#config.baseUrl} (model "${this.#config.model}")`;
  }
}

/** Retry-After in seconds or as an HTTP date, capped; undefined when absent or unreadable. */
function retryAfterMs(response: Response): number | undefined {
  const value = response.headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now();
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), MAX_DELAY_MS);
}

function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `${error.message}: ${code}` : error.message;
}
