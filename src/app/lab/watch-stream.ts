/**
 * Reading a live `nextstate serve` run: the `#/watch?url=` link, the server address it names,
 * and the server-sent events of `GET /v1/nextstate/records?from=SEQ` (a `run` event with the
 * run's config, then `records` events, one per commit). Everything from the server is untrusted:
 * each record goes through validateRecord, the config through the store's parseStoredConfig,
 * and events, records and characters are capped.
 */
import { validateRecord } from '../../rl/validate';
import type { RunRecord } from '../../rl/records';
import { DEFAULT_MAX_LINE_CHARS, parseStoredConfig, type StoredConfig } from '../../storage/index';
import { isLoopback } from './shared-link';

export class WatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WatchError';
  }
}

export interface WatchLimits {
  /** Characters of one event (one commit's records): a few record lines' worth. */
  maxEventChars: number;
  /** Records kept in all; the watch stops at this many, so a server cannot fill the tab. */
  maxRecords: number;
}

export const WATCH_LIMITS: WatchLimits = { maxEventChars: 4 * DEFAULT_MAX_LINE_CHARS, maxRecords: 200_000 };

/** The server address a `#/watch?url=…` hash names ('' when it names none); null for any other hash. */
export function watchAddress(hash: string): string | null {
  const m = /^#\/watch\?(.*)$/.exec(hash);
  if (!m) return null;
  return new URLSearchParams(m[1]).get('url') ?? '';
}

/** The hash that watches the server at `server`. */
export function watchHash(server: string): string {
  return `#/watch?${new URLSearchParams({ url: server })}`;
}

/**
 * The server's root (scheme, host, port and any path prefix, without `/v1`), from what a person
 * pastes: `http://127.0.0.1:30000`, `…/v1`, or `…/v1/` all name the same server.
 *
 * @throws WatchError for an address that is not a URL, or is plain http to another machine
 */
export function serverRoot(address: string): string {
  if (!address) throw new WatchError('The link names no server: it must end in #/watch?url= and the address nextstate serve printed.');
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new WatchError(`"${address}" is not an address: give the one nextstate serve printed, such as http://127.0.0.1:30000.`);
  }
  // Records carry whole conversations: over plain http only from this machine.
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
    throw new WatchError(`${url.href} is neither https nor this machine: watch a remote server through https (or an SSH tunnel to 127.0.0.1).`);
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
  return `${url.origin}${path}`;
}

/** The record feed of the server at `root`, from record `from` (1-based) on. */
export function recordsUrl(root: string, from: number): string {
  return `${root}/v1/nextstate/records?from=${from}`;
}

/** The run a `run` event describes: what the views read of it, checked. */
export interface WatchedRunHeader {
  label: string;
  created: number;
  config: StoredConfig;
}

export type WatchEvent = { type: 'run'; run: WatchedRunHeader } | { type: 'records'; from: number; records: RunRecord[] };

/**
 * One event's `data` as a WatchEvent.
 *
 * @throws WatchError for anything but a well-formed `run` or `records` event (the message names the field)
 * @throws RecordValidationError for a record that fails validateRecord
 */
export function parseWatchEvent(data: string): WatchEvent {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new WatchError('The server sent an event that is not JSON: is this address a nextstate serve server?');
  }
  const event = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (event.type === 'run') {
    const label = typeof event.label === 'string' && event.label.trim() ? event.label.slice(0, 256) : 'served run';
    const created = typeof event.created === 'number' && Number.isFinite(event.created) ? event.created : 0;
    let config: StoredConfig;
    try {
      config = parseStoredConfig(event.config);
    } catch (e) {
      throw new WatchError(`The server's run config is not one the lab reads (${(e as Error).message}); update the lab or the server.`);
    }
    return { type: 'run', run: { label, created, config } };
  }
  if (event.type === 'records') {
    const from = event.from;
    if (!Number.isSafeInteger(from) || (from as number) < 1) throw new WatchError('The server sent records without a valid "from": update nextstate.');
    if (!Array.isArray(event.records)) throw new WatchError('The server sent a records event without a records list: update nextstate.');
    const records = event.records.map((r, i) => validateRecord(r, `record ${(from as number) + i} from the server`));
    return { type: 'records', from: from as number, records };
  }
  throw new WatchError(`The server sent an event of type ${JSON.stringify(event.type ?? null)}: is this address a nextstate serve server?`);
}

/**
 * Splits a server-sent event stream into the `data` of each event. Comment lines (keep-alives)
 * and other fields are skipped; `[DONE]` is left to the caller.
 */
export class EventSplitter {
  private buffer = '';

  constructor(private readonly maxEventChars: number) {}

  /**
   * The events completed by `text`.
   *
   * @throws WatchError when one event outgrows maxEventChars
   */
  push(text: string): string[] {
    // SSE allows CRLF and CR line ends; nextstate writes LF, proxies may not.
    this.buffer += text.replace(/\r\n?/g, '\n');
    const out: string[] = [];
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
      if (data.length) out.push(data.join('\n'));
    }
    if (this.buffer.length > this.maxEventChars)
      throw new WatchError(`The server sent an event of more than ${this.maxEventChars} characters, more than the lab holds; inspect the run file instead.`);
    return out;
  }
}

/**
 * Reads a record feed to its end (or until `signal` fires), calling `onEvent` for each event in
 * order, and awaiting it before the next: what it keeps is kept before the next event is read.
 *
 * @throws WatchError, RecordValidationError (see parseWatchEvent and EventSplitter), and what onEvent throws
 */
export async function readWatchStream(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: WatchEvent) => void | Promise<void>,
  limits: Pick<WatchLimits, 'maxEventChars'> = WATCH_LIMITS,
  signal?: AbortSignal,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const events = new EventSplitter(limits.maxEventChars);
  // Cancelling ends a pending read, whether or not the body itself heeds the fetch's signal.
  const cancel = () => void reader.cancel().catch(() => {});
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    while (!signal?.aborted) {
      const { done, value } = await reader.read();
      if (done) return;
      for (const data of events.push(decoder.decode(value, { stream: true }))) {
        if (data === '[DONE]' || signal?.aborted) return;
        await onEvent(parseWatchEvent(data));
      }
    }
  } finally {
    signal?.removeEventListener('abort', cancel);
    cancel();
  }
}
