/**
 * A session's last reply under the reference's runners (preset session.lastTurn "unjudged"):
 * they send nothing after it, so it is never judged and never a sample; the lab's default
 * judges it against the user's final word.
 */
import { describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { of, plainSentencesConfig, plainSentencesUser, runHeadless } from '../../test/support/runtime/headless';
import type { RunRecord } from '../rl/records';

const key = (r: { session: string; turn: number }) => `${r.session}#${r.turn}`;

describe('the last turn on the tiny fixture (1 step)', () => {
  it('"unjudged": the last reply of every ended session gets no vote and no sample, the ones before it do', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const config = plainSentencesConfig(dir, { concurrentSessions: 2, steps: 1, batchSize: 3, maxNewTokens: 5 });
    config.preset.session.lastTurn = 'unjudged';
    const records: RunRecord[] = [];
    const user = plainSentencesUser;
    const { result } = await runHeadless(config, { user }, records);
    expect(result).toMatchObject({ status: 'finished', step: 1 });

    const ended = of(records, 'session_end');
    expect(ended.length).toBeGreaterThan(0);
    const last = new Set(ended.map((e) => `${e.session}#${e.mainTurns}`));
    const voted = new Set(of(records, 'judge_vote').map(key));
    const sampled = new Set(of(records, 'sample').map(key));
    for (const k of last) {
      expect(voted.has(k), k).toBe(false);
      expect(sampled.has(k), k).toBe(false);
    }
    // Turn 1 of an ended session had its next state (turn 2's request) and was judged.
    for (const e of ended) expect(voted.has(`${e.session}#1`), e.session).toBe(true);
  }, 60_000);
});
