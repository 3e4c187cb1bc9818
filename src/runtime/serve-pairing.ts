/**
 * Which session a request without a session id belongs to. An agent that sends no session
 * headers (upstream OpenClaw) still sends the whole conversation every time: its next request is
 * the previous request's messages, the reply the server gave, and what came after (the user's
 * next message, a tool result). So a request whose messages extend a session's last request plus
 * its reply is that session's next turn; anything else starts a new session.
 *
 * System messages are left out of the comparison: agents rebuild their system prompt on every
 * request (the date, the workspace, the skills loaded), while the conversation itself only grows.
 * Tool call ids are left out too, since clients may renumber them; names and arguments count.
 * An agent may also drop what it appended to the end of a request (TRANSIENT_TAIL).
 */
import { Sha256 } from '../gpu/sha256';
import type { ChatMessage } from '../rl/messages';

/** What a message contributes to the key: role, trimmed text and calls, without ids. */
function canonical(m: ChatMessage): string {
  const calls = (m.tool_calls ?? []).map((c) => [c.function.name, normalizedArguments(c.function.arguments)]);
  return JSON.stringify([m.role, m.content.trim(), calls]);
}

/** Arguments as parsed JSON written back, so spacing and key quoting do not matter; raw text otherwise. */
function normalizedArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text.trim();
  }
}

/**
 * keys[k]: the key of the conversation's first k non-system messages (keys[0]: the empty one),
 * and at[k]: where the k-th of them is in `messages`.
 */
function prefixKeys(messages: readonly ChatMessage[]): { keys: string[]; at: number[] } {
  const keys = [''];
  const at = [-1];
  messages.forEach((m, i) => {
    if (m.role === 'system') return;
    keys.push(new Sha256().updateText(`${keys[keys.length - 1]}\n${canonical(m)}`).hex());
    at.push(i);
  });
  return { keys, at };
}

/**
 * Trailing user messages a request may have that the agent does not keep in its history: OpenClaw
 * appends its runtime context (exec sessions, subagents) after the user's message on every request
 * and sends it again, fresh, after the next one. The next request extends the conversation without them.
 */
const TRANSIENT_TAIL = 2;

export interface PairingOptions {
  /** Sessions remembered at most; the least recently extended is forgotten first. */
  maxSessions?: number;
}

/** The session a request continues, and where in its messages the reply it answers is. */
export interface Paired {
  session: string;
  /** Index in the request's messages of the server's reply; what follows it is the next state. */
  replyAt: number;
}

export class SessionPairing {
  /** Key of (last request, or it without its transient tail, + reply) -> session. */
  private readonly byKey = new Map<string, string>();
  /** A Map keeps insertion order: the least recently extended session comes first. */
  private readonly keysOf = new Map<string, string[]>();
  private readonly maxSessions: number;

  constructor(options: PairingOptions = {}) {
    this.maxSessions = options.maxSessions ?? 10_000;
  }

  /** The session whose last request plus reply the messages extend (the longest such), or null. */
  match(messages: readonly ChatMessage[]): Paired | null {
    const { keys, at } = prefixKeys(messages);
    for (let k = keys.length - 1; k > 0; k--) {
      const session = this.byKey.get(keys[k]);
      if (session !== undefined) return { session, replyAt: at[k] };
    }
    return null;
  }

  /** After answering: the session's next request will extend `messages` (or them less a transient tail) plus `reply`. */
  remember(session: string, messages: readonly ChatMessage[], reply: ChatMessage): void {
    this.forget(session);
    const keys: string[] = [];
    for (let drop = 0; drop <= TRANSIENT_TAIL && drop < messages.length; drop++) {
      if (drop > 0 && messages[messages.length - drop].role !== 'user') break;
      const kept = messages.slice(0, messages.length - drop);
      if (!kept.some((m) => m.role !== 'system')) break;
      const { keys: chain } = prefixKeys([...kept, reply]);
      keys.push(chain[chain.length - 1]);
    }
    for (const key of keys) {
      // Two sessions with the same conversation so far (two identical replies): the newer one wins.
      const other = this.byKey.get(key);
      if (other !== undefined && other !== session) this.forget(other);
      this.byKey.set(key, session);
    }
    this.keysOf.set(session, keys);
    while (this.keysOf.size > this.maxSessions) this.forget(this.keysOf.keys().next().value!);
  }

  forget(session: string): void {
    for (const key of this.keysOf.get(session) ?? []) if (this.byKey.get(key) === session) this.byKey.delete(key);
    this.keysOf.delete(session);
  }

  get size(): number {
    return this.keysOf.size;
  }
}
