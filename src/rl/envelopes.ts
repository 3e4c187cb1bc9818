/**
 * What an agent adds around the person's words before sending them on. The judges must read
 * what the person wrote: OpenClaw stamps every user message with `[Sat 2026-12-05 10:13 UTC] `,
 * so a reply "no, her name is Juniper" no longer starts with "no", and a hint written from it
 * quotes the clock. The server strips these before a judge sees a next state; the policy's own
 * prompt keeps them, since that is what the policy read.
 *
 * The shapes are those of openclaw@2026.9.6 (test/fixtures/openclaw-envelopes.json says where
 * each comes from). A message may carry several: a queued message holds two of the person's
 * messages, and each part may have its own stamp, so every pattern is matched at any line start.
 */

/** One piece of a client's envelope: every match of `pattern` is removed. */
export interface ClientEnvelope {
  client: string;
  part: string;
  /** Global and multiline: matched at every line start. */
  pattern: RegExp;
}

/** Every envelope the server strips. OpenClaw's is the one it knows of. */
export const CLIENT_ENVELOPES: readonly ClientEnvelope[] = [
  {
    client: 'openclaw',
    part: 'timestamp',
    // `[Sat 2026-12-05 10:13 UTC] ` on an agent's message; `[Signal Alice +1555 2026-01-18 00:19 PST] `
    // on a channel's. OpenClaw itself takes a leading bracket holding a date and a time for an envelope.
    pattern: /^\[[^\]\n]*\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}[^\]\n]*\][ \t]*/gm,
  },
  {
    client: 'openclaw',
    part: 'queued-message marker',
    // A message the agent never answered, put in front of the next one: both are the person's words.
    pattern: /^\[Queued user message[^\]\n]*\][ \t]*(?:\r?\n|$)/gm,
  },
  {
    client: 'openclaw',
    part: 'inbound metadata block',
    // A channel's label line ("Conversation info: ⟦openclaw:ctx⟧", earlier "Sender (untrusted
    // metadata):") and its fenced JSON, with the blank lines after it.
    pattern: /^[^\n]*(?:⟦openclaw:ctx⟧|\(untrusted metadata\):)[ \t]*\r?\n```json\r?\n[\s\S]*?\r?\n```[ \t]*(?:\r?\n[ \t]*)*(?=\S|$)/gm,
  },
];

/**
 * The person's words in `text`: every envelope removed (until none is left, since removing one
 * may bring another to a line start) and the rest trimmed; `text` itself where it has none.
 */
export function stripEnvelope(text: string, envelopes: readonly ClientEnvelope[] = CLIENT_ENVELOPES): string {
  let out = text;
  for (let before = ''; before !== out;) {
    before = out;
    for (const e of envelopes) out = out.replace(e.pattern, '');
  }
  return out === text ? text : out.trim();
}
