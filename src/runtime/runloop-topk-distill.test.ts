/**
 * A Combined run whose OPD term is the top-k distillation term (preset advantage.opdTerm
 * "topk-distill") on the tiny fixture: the judged samples carry the student's top-4 set at every
 * response token with the teacher's log-probs over it, and the engine trains on them.
 */
import { describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { of, plainSentencesConfig, plainSentencesUser, runHeadless } from '../../test/support/runtime/headless';
import type { RunRecord } from '../rl/records';
import type { TextGenerator } from '../generators/generator';

describe('top-k OPD term in a run on the tiny fixture (1 step)', () => {
  it('records each hinted sample with its top-4 sets and the teacher over them, and trains', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const config = plainSentencesConfig(dir, { concurrentSessions: 2, steps: 1, batchSize: 2, maxNewTokens: 5 });
    config.preset.advantage.opdTerm = 'topk-distill';
    const user = plainSentencesUser;
    const hintJudge: TextGenerator = {
      kind: 'rules',
      label: 'scripted hint judge',
      generate: async () => '[HINT_START]Write the steps as plain sentences.[HINT_END]\n\\boxed{1}',
    };
    const records: RunRecord[] = [];
    const { result } = await runHeadless(config, { user, hintJudge }, records);
    expect(result).toMatchObject({ status: 'finished', step: 1 });
    const samples = of(records, 'sample');
    const topk = samples.filter((s) => s.opdTopK);
    expect(topk.length).toBeGreaterThan(0);
    for (const s of topk) {
      expect(s.opdTopK!.ids).toHaveLength(s.perToken.length);
      for (const [t, set] of s.opdTopK!.ids.entries()) {
        expect(set).toHaveLength(4);
        expect(new Set(set).size).toBe(4);
        for (const lp of s.opdTopK!.teacherLogp[t]) expect(lp).toBeLessThan(0);
      }
      // The advantages keep the binary part alone: the same reward on every token.
      expect(new Set(s.perToken).size).toBe(1);
    }
    const [step] = of(records, 'train_step');
    expect(step.skipped).toBeNull();
    expect(step.stats.gradNorm).toBeGreaterThan(0);
  }, 60_000);
});
