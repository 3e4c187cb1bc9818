/**
 * A `nextstate serve` record feed as the lab's watch tests script it: interaction records of one
 * session, the server's events, and their server-sent-events text.
 */
import { makePreset } from '../../../src/rl/presets';
import type { RunRecord } from '../../../src/rl/records';

export const WATCH_ROOT = 'http://127.0.0.1:30000';

/** Main turn `turn` of session s1, a valid interaction record. */
export const interaction = (turn: number): RunRecord => ({
  kind: 'interaction',
  version: 0,
  ts: 1_700_000_000_000,
  session: 's1',
  turn,
  turnType: 'main',
  messages: [{ role: 'user', content: `turn ${turn}` }],
  response: 'ok',
  tokenIds: [1],
  logprobs: [-0.1],
  startedAt: 1_699_999_999_000,
  finishedAt: 1_700_000_000_000,
});

/** The events as one response body of the feed. */
export const sse = (...events: object[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');

/** The feed's `run` event of the server run started at `created`. */
export const runEvent = (created: number, label = `serve tiny (${created})`) => ({ type: 'run', label, created, config: { preset: makePreset('combined') } });

/** Records `from` … `from + count - 1`, as one `records` event. */
export const records = (from: number, count: number) => ({ type: 'records', from, records: Array.from({ length: count }, (_, i) => interaction(from + i)) });
