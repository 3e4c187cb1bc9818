// The size limits of records, apart from their checkers (record-shapes.ts) so that the modules whose
// shapes records hold (messages.ts) can check with them without importing validate.ts.

/**
 * Size limits for imported records. Generous for real runs (a 100 kB answer is fine) but
 * bounded, so a hostile file cannot make the app hold gigabytes per record.
 */
export const RECORD_LIMITS = {
  /** session ids, problem ids, evaluation and metric names */
  id: 256,
  /** message content, responses, raw judge text */
  text: 1_000_000,
  hint: 20_000,
  /** skip reasons, per-problem details */
  note: 20_000,
  messages: 10_000,
  /** tool calls per message, tools per prompt */
  toolCalls: 256,
  /** token ids, log-probs, per-token advantages */
  tokens: 1_000_000,
  problems: 100_000,
  metrics: 256,
  /** sessions a resume marks interrupted, and turns of one session */
  sessions: 100_000,
  turns: 100_000,
} as const;

/** The largest token id a record holds. */
export const MAX_TOKEN_ID = 2 ** 31 - 1;
