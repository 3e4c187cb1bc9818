/**
 * An OPD run whose OPD term is a KL over the teacher's top-8 with a tail bin (preset
 * advantage.opdTerm "reverse-kl" or "forward-kl") on the tiny fixture. Method "opd" keeps no binary part, so
 * every hinted sample's advantages are all zero and the term alone teaches it: the buffer must
 * still train every one (not one per session), and the run file must read back.
 */
import { describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { of, plainSentencesUser, runHeadless } from '../../test/support/runtime/headless';
import type { RunRecord } from '../rl/records';
import { parsePreset } from '../rl/presets';
import type { TextGenerator } from '../generators/generator';
import { exampleConfig, type RunConfig } from './run-config';

describe('KL OPD terms in an OPD run on the tiny fixture (2 steps)', () => {
  it.each([
    ['reverse-kl', 'reverseKl'],
    ['forward-kl', 'forwardKl'],
  ] as const)(
    '%s: trains every hinted sample on the teacher top-8 with a tail, and writes records an import accepts',
    async (term, key) => {
      const { dir } = await tinyModel({ family: 'qwen3' });
      const example = exampleConfig('student', dir, 'opd');
      const config: RunConfig = {
        ...example,
        scenario: { id: 'custom', persona: 'A student who wants plain sentences.', preference: 'Plain sentences.', maxTurns: 3 },
        problems: { source: 'builtin', count: 12 },
        schedule: { concurrentSessions: 1, steps: 2, evalEvery: 0, evalProblems: 1, evalVotes: 1 },
      };
      config.preset = parsePreset({ ...config.preset, advantage: { ...config.preset.advantage, opdTerm: term, [key]: { k: 8, tail: true } } });
      config.preset.batch.size = 2;
      config.sampling.policy.maxNewTokens = 5;
      const hintJudge: TextGenerator = {
        kind: 'rules',
        label: 'scripted hint judge',
        generate: async () => '[HINT_START]Write the steps as plain sentences.[HINT_END]\n\\boxed{1}',
      };
      const records: RunRecord[] = [];
      const { result } = await runHeadless(config, { user: plainSentencesUser, hintJudge }, records);
      expect(result).toMatchObject({ status: 'finished', step: 2 });
      const samples = of(records, 'sample');
      expect(samples.length).toBeGreaterThanOrEqual(4);
      // One session at a time, two or more samples each: the zero-advantage rule would have masked all but the first.
      expect(new Set(samples.map((s) => s.session)).size).toBeLessThan(samples.length);
      for (const s of samples) {
        expect(s).toMatchObject({ trainable: true, promoted: false });
        expect(s.perToken.every((a) => a === 0)).toBe(true);
        expect(s.opdTopK).toMatchObject({ weight: 1, clip: 0, term: `${term}-tail` });
        expect(s.opdTopK!.ids).toHaveLength(s.perToken.length);
        for (const [t, set] of s.opdTopK!.ids.entries()) {
          expect(new Set(set).size).toBe(8);
          // The teacher's own top-8, most likely first.
          const lp = s.opdTopK!.teacherLogp[t];
          expect([...lp].sort((a, b) => b - a)).toEqual(lp);
        }
      }
      const steps = of(records, 'train_step');
      expect(steps).toHaveLength(2);
      for (const step of steps) {
        expect(step.skipped).toBeNull();
        expect(step.stats.gradNorm).toBeGreaterThan(0);
        expect(step.stats.loss).toBeGreaterThan(0);
      }
    },
    120_000,
  );
});
