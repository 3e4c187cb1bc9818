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

/** keys[k]: the key of the conversation's first k non-system messages (keys[0]: the empty one). */
function prefixKeys(messages: readonly ChatMessage[]): string[] {
  const keys = [''];
  for (const m of messages) {
    if (m.role === 'system') continue;
    keys.push(new Sha256().updateText(`${keys[keys.length - 1]}\n${canonical(m)}`).hex());
  }
  return keys;
}

export interface PairingOptions {
  /** Sessions remembered at most; the least recently extended is forgotten first. */
  maxSessions?: number;
}

export class SessionPairing {
  /** Key of (last request + reply) -> session; a Map keeps insertion order, oldest first. */
  private readonly byKey = new Map<string, string>();
  private readonly keyOf = new Map<string, string>();
  private readonly maxSessions: number;

  constructor(options: PairingOptions = {}) {
    this.maxSessions = options.maxSessions ?? 10_000;
  }

  /** The session whose last request plus reply the messages extend (the longest such), or null. */
  match(messages: readonly ChatMessage[]): string | null {
    const keys = prefixKeys(messages);
    for (let k = keys.length - 1; k > 0; k--) {
      const session = this.byKey.get(keys[k]);
      if (session !== undefined) return session;
    }
    return null;
  }

  /** After answering: the session's next request will extend `messages` plus `reply`. */
  remember(session: string, messages: readonly ChatMessage[], reply: ChatMessage): void {
    this.forget(session);
    const keys = prefixKeys([...messages, reply]);
    const key = keys[keys.length - 1];
    // Two sessions with the same conversation so far (two identical replies): the newer one wins.
    const other = this.byKey.get(key);
    if (other !== undefined) this.keyOf.delete(other);
    this.byKey.set(key, session);
    this.keyOf.set(session, key);
    while (this.keyOf.size > this.maxSessions) this.forget(this.keyOf.keys().next().value!);
  }

  forget(session: string): void {
    const key = this.keyOf.get(session);
    if (key === undefined) return;
    this.keyOf.delete(session);
    if (this.byKey.get(key) === session) this.byKey.delete(key);
  }

  get size(): number {
    return this.keyOf.size;
  }
}
