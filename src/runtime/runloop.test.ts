/**
 * Headless runs of the whole method in Node on the CPU engine with rules user, judge and
 * evaluator: the storyteller on real pretrained weights learns its user's preference, and the
 * student scenario's records fit together exactly.
 */
import { describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { of, runHeadless } from '../../test/support/runtime/headless';
import type { EvaluationRecord, InteractionRecord, JudgeResultRecord, JudgeVoteRecord, SampleRecord, SessionEndRecord, TrainStepRecord } from '../rl/records';
import { configForArm, exampleConfig, type RunConfig } from './run-config';
import type { TrainedArm } from './arms';

/**
 * The gain asked of OPD over each seed's own step-0 score on the held-out evaluation openings:
 * 0.15 is more than half a missing wish fewer in every story. This build measures +0.208, +0.167
 * and +0.208 on seeds 1-3 (+0.192 [+0.156, +0.227] over the README's ten seeds).
 */
const OPD_GAIN = 0.15;
/**
 * How much less Binary RL must gain than OPD on the same seeds: it measures +0.014 against OPD's
 * +0.194 on seeds 1-3 (the README's ten seeds: OPD − Binary +0.152 [+0.100, +0.202]).
 */
const BINARY_MARGIN = 0.1;

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const gain = (runs: [number, number][]) => mean(runs.map(([before, after]) => after - before));

/**
 * A child nothing was tuned on, with a name the demo model never saw in fine-tuning: one of the
 * README's wish combinations, where Combined measures 0.208 -> 0.333 on seed 1 (+0.125).
 */
const OTHER_CHILD = { subject: 'bunny', name: 'Hazel', favourite: 'flower' };
const OTHER_CHILD_ARM: TrainedArm = 'combined';
const OTHER_CHILD_GAIN = 0.1;

/**
 * The step-0 and step-16 personalization scores of one 16-step storyteller run: the config and
 * schedule of `nextstate reproduce`, so these are runs of the README's table.
 */
async function storyRun(arm: TrainedArm, seed: number, scenario: Partial<RunConfig['scenario']> = {}): Promise<[number, number]> {
  const example = configForArm(exampleConfig('storyteller'), arm);
  const config: RunConfig = {
    ...example,
    seed,
    scenario: { ...example.scenario, ...scenario } as RunConfig['scenario'],
    schedule: { ...example.schedule, steps: 16, evalEvery: 8 },
  };
  const { result, records } = await runHeadless(config);
  expect(result).toMatchObject({ status: 'finished', step: 16, version: 16 });
  const evals = of(records, 'evaluation') as EvaluationRecord[];
  expect(evals.map((e) => e.step)).toEqual([0, 8, 16]);
  // Scored on the evaluation openings, never on a training one.
  expect(evals[2].problemSet).toMatch(/evaluation story openings \(held out/);
  console.log(`storyteller ${arm} seed ${seed} ${JSON.stringify(scenario)}: personalization ${evals.map((e) => e.scores.score.toFixed(3)).join(' -> ')}`);
  return [evals[0].scores.score, evals[2].scores.score];
}

describe('storyteller on the demo model, rules user/judge/evaluator, held-out openings and hint wordings', () => {
  // The example config as `nextstate run --example storyteller` prints it, over three fixed seeds,
  // each against its own step-0 score; deterministic on the CPU engine. These are runs of the
  // README's reproduction (same config, seeds and schedule), whose ten seeds order the arms.
  it('OPD gains at least OPD_GAIN on every seed from a base of at most 0.3, and Binary RL gains BINARY_MARGIN less', async () => {
    const opd: [number, number][] = [];
    const binary: [number, number][] = [];
    for (const seed of [1, 2, 3]) {
      opd.push(await storyRun('opd', seed));
      binary.push(await storyRun('binary', seed));
    }
    expect(mean(opd.map((s) => s[0]))).toBeLessThanOrEqual(0.3);
    for (const [before, after] of opd) expect(after - before).toBeGreaterThanOrEqual(OPD_GAIN);
    expect(gain(binary)).toBeLessThanOrEqual(gain(opd) - BINARY_MARGIN);
  }, 1_200_000);

  it('Combined learns for a pet, name and thing other than the defaults, by at least OTHER_CHILD_GAIN', async () => {
    const [before, after] = await storyRun(OTHER_CHILD_ARM, 1, OTHER_CHILD);
    expect(before).toBeLessThanOrEqual(0.3);
    expect(after - before).toBeGreaterThanOrEqual(OTHER_CHILD_GAIN);
  }, 600_000);
});

describe('student scenario end to end on the tiny fixture (2 steps)', () => {
  it('records sessions, pairings, votes, hints, samples and versions that fit together', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const config: RunConfig = {
      ...exampleConfig('student', dir),
      problems: { source: 'builtin', count: 12 },
      schedule: { concurrentSessions: 4, steps: 2, evalEvery: 2, evalProblems: 2, evalVotes: 1 },
    };
    config.preset.batch.size = 4;
    config.sampling.policy.maxNewTokens = 8;
    const { result, records } = await runHeadless(config);
    expect(result).toMatchObject({ status: 'finished', step: 2, version: 2 });

    const interactions = of(records, 'interaction') as InteractionRecord[];
    const votes = of(records, 'judge_vote') as JudgeVoteRecord[];
    const results = of(records, 'judge_result') as JudgeResultRecord[];
    const samples = of(records, 'sample') as SampleRecord[];
    const steps = of(records, 'train_step') as TrainStepRecord[];
    const ends = of(records, 'session_end') as SessionEndRecord[];

    // Each session's turns are numbered 1, 2, ... and its first request is the problem.
    const bySession = new Map<string, InteractionRecord[]>();
    for (const i of interactions) bySession.set(i.session, [...(bySession.get(i.session) ?? []), i]);
    for (const [session, turns] of bySession) {
      expect(turns.map((t) => t.turn)).toEqual(turns.map((_, i) => i + 1));
      expect(turns[0].messages).toHaveLength(1);
      // Turn t+1's prompt extends turn t's prompt with t's answer and the user's reply.
      for (let t = 1; t < turns.length; t++) {
        expect(turns[t].messages.slice(0, -2)).toEqual(turns[t - 1].messages);
        expect(turns[t].messages.at(-2)).toEqual({ role: 'assistant', content: turns[t - 1].response });
      }
      expect(session).toMatch(/^s\d+$/);
    }
    for (const e of ends) expect(e.mainTurns).toBe(bySession.get(e.session)!.length);

    // Combined: one binary vote and one hint vote per judged turn, each with a result.
    const key = (r: { session: string; turn: number }) => `${r.session}#${r.turn}`;
    const judged = new Set(votes.map(key));
    for (const k of judged) {
      expect(
        votes
          .filter((v) => key(v) === k)
          .map((v) => v.judge)
          .sort(),
      ).toEqual(['binary', 'hint']);
      expect(
        results
          .filter((r) => key(r) === k)
          .map((r) => r.judge)
          .sort(),
      ).toEqual(['binary', 'hint']);
    }
    // The rules judge reads the student's complaints: rewrite requests are -1.
    expect(results.filter((r) => r.judge === 'binary').some((r) => r.score === -1)).toBe(true);
    // An accepted hint yields teacher log-probs for every response token.
    const byTurn = new Map(interactions.map((i) => [key(i), i]));
    for (const r of results.filter((x) => x.judge === 'hint' && x.accepted)) {
      expect(r.hint!.length).toBeGreaterThan(10);
      expect(r.teacherLogpCount).toBe(byTurn.get(key(r))!.tokenIds.length);
      expect(r.teacherLogp).toHaveLength(r.teacherLogpCount);
    }
    expect(interactions.every((i) => i.tokenTexts!.length === i.tokenIds.length)).toBe(true);
    // Samples: per-token advantages for each response token, tagged with the generating version.
    for (const s of samples) {
      const i = byTurn.get(key(s))!;
      expect(s.perToken).toHaveLength(i.tokenIds.length);
      expect(s.version).toBe(i.version);
    }
    // Two steps of 4 samples, and a version boundary after each.
    expect(steps.map((s) => [s.step, s.samples, s.version])).toEqual([
      [1, 4, 0],
      [2, 4, 1],
    ]);
    expect(steps.every((s) => s.skipped === null && s.stats.gradNorm! > 0)).toBe(true);
    expect(of(records, 'version_boundary').map((b) => [b.from, b.to])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    // Each trained sample reports how the step moved its tokens.
    const updates = of(records, 'token_update');
    expect(updates.length).toBeGreaterThan(0);
    for (const u of updates) {
      expect(u.before).toHaveLength(byTurn.get(key(u))!.tokenIds.length);
      expect(u.after).toHaveLength(u.before.length);
    }
    expect(updates.some((u) => u.after.some((x, t) => Math.abs(x - u.before[t]) > 1e-6))).toBe(true);
    // Records are in commit order: no interaction of version 2 before the second step.
    const secondStep = records.indexOf(steps[1]);
    expect(records.slice(0, secondStep).some((r) => r.kind === 'interaction' && r.version === 2)).toBe(false);
    expect((of(records, 'evaluation') as EvaluationRecord[]).map((e) => e.step)).toEqual([0, 2]);
  }, 300_000);
});

describe('teacher scenario', () => {
  it('has the policy write each student attempt once, as a logged side turn the teacher then grades', async () => {
    const { dir } = await tinyModel({ family: 'qwen3' });
    const config: RunConfig = {
      ...exampleConfig('teacher', dir),
      problems: { source: 'builtin', count: 3 },
      schedule: { concurrentSessions: 2, steps: 1, evalEvery: 0, evalProblems: 1, evalVotes: 1 },
    };
    config.preset.batch.size = 2;
    config.sampling.policy.maxNewTokens = 6;
    const { records } = await runHeadless(config);
    const interactions = of(records, 'interaction') as InteractionRecord[];
    const attempts = interactions.filter((i) => i.turnType === 'side');
    expect(attempts.map((a) => [a.session, a.turn])).toEqual([
      ['student-work', 1],
      ['student-work', 2],
      ['student-work', 3],
    ]);
    // The teacher's first message quotes the policy's attempt at that problem.
    const firstTurns = interactions.filter((i) => i.turnType === 'main' && i.turn === 1);
    expect(firstTurns.length).toBeGreaterThan(0);
    for (const t of firstTurns) expect(attempts.some((a) => t.messages[0].content.includes(`Student's work:\n${a.response}\n`))).toBe(true);
    // Side turns are never judged or trained on.
    expect(records.some((r) => (r.kind === 'sample' || r.kind === 'judge_vote') && r.session === 'student-work')).toBe(false);
  }, 300_000);
});
