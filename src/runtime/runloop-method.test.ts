/**
 * What the run loop hands the trainer in a Combined run, against the reference: a turn with
 * neither a hint nor a nonzero reward is dropped and counted, the OPD term is re-based on the
 * policy version the step trains, and an ended session is let go once its turns are buffered.
 */
import { describe, expect, it, vi } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { of, plainSentencesConfig, runHeadless } from '../../test/support/runtime/headless';
import { SampleBuffer } from '../rl/buffer';
import type { ChatMessage } from '../rl/messages';
import { topKSelectPreset } from '../rl/presets';
import type { RunRecord } from '../rl/records';
import type { TextGenerator } from '../generators/generator';
import { BUILT_IN_PROBLEMS } from '../sims/problems/index';
import { exampleConfig, type RunConfig } from './run-config';
const key = (r: { session: string; turn: number }) => `${r.session}#${r.turn}`;

/** Judges that decide from the judged answer alone, so both agree on which turns are empty. */
function splitJudge(mode: 'binary' | 'hint'): TextGenerator {
  return {
    kind: 'rules',
    label: `scripted ${mode} judge`,
    async generate(messages: ChatMessage[]) {
      const action = /## Assistant output \(turn t\)\n([\s\S]*?)\n\n## Next state/.exec(messages[1].content)?.[1] ?? '';
      const empty = action.length % 2 === 0;
      if (mode === 'binary') return empty ? 'No clear signal.\n\\boxed{0}' : 'A redo request.\n\\boxed{-1}';
      return empty ? 'Nothing to learn.\n\\boxed{-1}' : '[HINT_START]Write the steps as plain sentences.[HINT_END]\n\\boxed{1}';
    },
  };
}

describe('combined run loop on the tiny fixture (3 steps)', () => {
  it('drops empty turns and counts them, trains OPD against the trained policy, and forgets ended sessions', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    // Short conversations, so that sessions end while the run goes on.
    const config = plainSentencesConfig(dir, { concurrentSessions: 4, steps: 3, batchSize: 3, maxNewTokens: 7 });
    const records: RunRecord[] = [];
    const forgotten: { session: string; at: number }[] = [];
    const forget = SampleBuffer.prototype.forgetSession;
    const spy = vi.spyOn(SampleBuffer.prototype, 'forgetSession').mockImplementation(function (this: SampleBuffer<never>, session: string) {
      forgotten.push({ session, at: records.length });
      forget.call(this, session);
    });
    try {
      const user: TextGenerator = { kind: 'rules', label: 'scripted user', generate: async () => 'Please redo it in plain sentences.' };
      const { result } = await runHeadless(config, { user, judge: splitJudge('binary'), hintJudge: splitJudge('hint') }, records);
      expect(result).toMatchObject({ status: 'finished', step: 3 });
    } finally {
      spy.mockRestore();
    }

    const results = of(records, 'judge_result');
    const samples = of(records, 'sample');
    const steps = of(records, 'train_step');
    const sampled = new Set(samples.map(key));
    // Defect 3: a judged turn with r = 0 and no hint never becomes a sample, and the steps count the drops.
    const empty = results.filter((r) => r.judge === 'binary' && r.score === 0).map(key);
    expect(empty.length).toBeGreaterThan(0);
    for (const k of empty) expect(sampled.has(k), k).toBe(false);
    const mainTurns = of(records, 'interaction').filter((i) => i.turnType === 'main').length;
    const dropped = steps.reduce((n, s) => n + s.dropped!, 0);
    expect(dropped).toBeGreaterThan(0);
    expect(dropped).toBeLessThanOrEqual(mainTurns - samples.length);

    // Defect 4: each trained OPD token's advantage is w_b * r + w_opd * (teacher - old), with
    // old the trainer's log-prob under the version it trains, not the rollout's.
    const teacher = new Map(results.filter((r) => r.judge === 'hint' && r.accepted).map((r) => [key(r), r.teacherLogp!]));
    const byKey = new Map(samples.map((s) => [key(s), s]));
    const { binary: wb, opd: wo } = config.preset.advantage.weights;
    const updates = of(records, 'token_update');
    expect(updates.length).toBeGreaterThan(0);
    let rebased = 0;
    for (const u of updates) {
      const sample = byKey.get(key(u))!;
      const t = teacher.get(key(u))!;
      expect(sample.opdWeight).toBe(wo);
      u.advantages!.forEach((a, i) => expect(a).toBeCloseTo(wb * sample.reward! + wo * (t[i] - u.before[i]), 4));
      if (u.advantages!.some((a, i) => Math.abs(a - sample.perToken[i]) > 1e-3)) rebased++;
    }
    // Samples of version 0 trained at step 2 or 3: their rollout and the trained policy differ.
    expect(rebased).toBeGreaterThan(0);
    expect(steps.some((s) => s.stats.opdGap! > 1e-3)).toBe(true);

    // Defect 7: an ended session is forgotten once, after the last of its sample records.
    const ended = new Set(of(records, 'session_end').map((e) => e.session));
    expect(forgotten.length).toBeGreaterThan(0);
    expect(new Set(forgotten.map((f) => f.session)).size).toBe(forgotten.length);
    for (const f of forgotten) {
      expect(ended.has(f.session), f.session).toBe(true);
      const last = records.findLastIndex((r) => r.kind === 'sample' && r.session === f.session);
      expect(last).toBeLessThan(f.at);
    }
    // Sessions that ended before the first step had long finished judging by the last one.
    const firstStep = records.indexOf(steps[0]);
    const endedEarly = of(records.slice(0, firstStep), 'session_end').map((e) => e.session);
    for (const s of endedEarly)
      expect(
        forgotten.some((f) => f.session === s),
        s,
      ).toBe(true);
  }, 300_000);
});

describe('the personalization evaluation record', () => {
  it('leaves a problem whose evaluator votes all fail out of the score, counts it, and names the set', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const config: RunConfig = {
      ...exampleConfig('student', dir),
      problems: { source: 'builtin', count: 12 },
      schedule: { concurrentSessions: 2, steps: 1, evalEvery: 1, evalProblems: 3, evalVotes: 2 },
    };
    config.preset.batch.size = 2;
    config.sampling.policy.maxNewTokens = 5;
    // The evaluator cannot answer in format for the first problem.
    const evaluator: TextGenerator = {
      kind: 'rules',
      label: 'scripted evaluator',
      generate: async (messages) => (messages.some((m) => m.content.includes(BUILT_IN_PROBLEMS[0].question)) ? 'I am not sure.' : 'Fine.\n\\boxed{0.5}'),
    };
    const { records } = await runHeadless(config, { evaluator });
    const evals = of(records, 'evaluation');
    expect(evals.map((e) => e.step)).toEqual([0, 1]);
    for (const e of evals) {
      expect(e.scores).toEqual({ score: 0.5 });
      expect(e.failed).toBe(1);
      expect(e.perProblem.map((p) => [p.id, p.score])).toEqual([
        ['builtin#0', null],
        ['builtin#1', 0.5],
        ['builtin#2', 0.5],
      ]);
      expect(e.problemSet).toBe('the first 3 built-in problems, not trained on (training uses the problems after them)');
    }
  }, 120_000);
});

describe('OPD with top-k hint selection on the tiny fixture (1 step)', () => {
  it('records the candidates and the winner, and trains w_opd * clip(teacher - old, 1)', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const config: RunConfig = {
      ...exampleConfig('student', dir, 'opd'),
      problems: { source: 'builtin', count: 12 },
      schedule: { concurrentSessions: 2, steps: 1, evalEvery: 0, evalProblems: 1, evalVotes: 1 },
    };
    // The sampled-token term under top-k selection (the preset's own term is the top-k one).
    config.preset = topKSelectPreset('opd', { batch: { size: 2 }, advantage: { opdTerm: 'sampled-token' } });
    config.sampling.policy.maxNewTokens = 6;
    // Three different hints per turn (one per vote) and a repeat of the first, which is not a new candidate.
    const wording = ['Write every step as a plain sentence, please.', 'Use plain sentences.', 'Say the answer first, then why.'];
    let n = 0;
    const hintJudge: TextGenerator = {
      kind: 'rules',
      label: 'scripted hint judge',
      generate: async () => `[HINT_START]${wording[n++ % 3]}[HINT_END]\n\\boxed{1}`,
    };
    const user: TextGenerator = { kind: 'rules', label: 'scripted user', generate: async () => 'Please redo it in plain sentences.' };
    const { result, records } = await runHeadless(config, { user, judge: hintJudge, hintJudge });
    expect(result).toMatchObject({ status: 'finished', step: 1 });

    const results = of(records, 'judge_result').filter((r) => r.judge === 'hint' && r.accepted);
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) {
      const sel = r.selection!;
      expect(sel).toMatchObject({ rule: 'topk-sequence', k: 4, clip: 1 });
      // Shortest first, every one of the three once.
      expect(sel.candidates.map((c) => c.hint)).toEqual([...wording].sort((a, b) => a.length - b.length));
      const best = Math.max(...sel.candidates.map((c) => c.overlap));
      expect(sel.candidates[sel.winner].overlap).toBe(best);
      expect(sel.candidates.findIndex((c) => c.overlap === best)).toBe(sel.winner);
      for (const c of sel.candidates) expect(c.overlap).toBeLessThanOrEqual(4 * sel.tokens);
      expect(r.hint).toBe(sel.candidates[sel.winner].hint);
    }
    const teacher = new Map(results.map((r) => [key(r), r.teacherLogp!]));
    const samples = new Map(of(records, 'sample').map((s) => [key(s), s]));
    const updates = of(records, 'token_update');
    expect(updates.length).toBeGreaterThan(0);
    for (const u of updates) {
      const s = samples.get(key(u))!;
      const t = teacher.get(key(u))!;
      expect(s.opdClip).toEqual({ clip: 1, teacherLogp: t });
      s.perToken.forEach((a) => expect(Math.abs(a)).toBeLessThanOrEqual(1));
      u.advantages!.forEach((a, i) => expect(a).toBeCloseTo(Math.min(1, Math.max(-1, t[i] - u.before[i])), 4));
    }
  }, 300_000);
});
