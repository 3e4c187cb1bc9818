/**
 * Headless runs of the whole method in Node on the CPU engine with rules user, judge and
 * evaluator: the student and teacher scenarios' records fit together exactly. The storyteller's
 * learning claims are in the learning-*.test.ts files beside this one.
 */
import { describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { of, runHeadless } from '../../test/support/runtime/headless';
import type {
  EvaluationRecord,
  InteractionRecord,
  JudgeResultRecord,
  JudgeVoteRecord,
  RunRecord,
  SampleRecord,
  SessionEndRecord,
  TrainStepRecord,
} from '../rl/records';
import { recordedStudentWork } from './resume-plan';
import { exampleConfig, type RunConfig } from './run-config';

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

    // Resumed, the run grades the attempts its log holds instead of drawing new ones from the trained policy.
    const logged = recordedStudentWork(
      records.map((r) => (r.kind === 'interaction' && r.turnType === 'side' ? { ...r, response: `logged attempt ${r.turn}` } : r)),
    );
    const resumed: RunRecord[] = [];
    await runHeadless(config, {}, resumed, { resume: { step: 0, version: 0, sessionsStarted: 0, studentWork: logged } });
    const again = of(resumed, 'interaction') as InteractionRecord[];
    expect(again.filter((i) => i.turnType === 'side')).toEqual([]);
    const graded = again.filter((i) => i.turnType === 'main' && i.turn === 1);
    expect(graded.length).toBeGreaterThan(0);
    for (const t of graded) expect(t.messages[0].content).toMatch(/Student's work:\nlogged attempt [123]\n/);
  }, 300_000);
});
