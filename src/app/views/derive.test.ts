import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../rl/records';
import { beforeAfter, evalSeries, WISH_RATES, wishesBeforeAfter, wishRatesOf } from './derive-evaluations';
import { candidateViews, conversations } from './derive-conversations';
import { fmt, fmtSigned, hintVoteView } from './format';
import { stepSeries } from '../../storage/step-series';
import { tokenTable } from './derive-tokens';
import { storyEvaluationScores } from '../../sims/rules/story-score';
import { normaliseChild } from '../../sims/scenarios/storyteller';
import { LOG } from '../../../test/support/views/derive-log';

describe('stepSeries', () => {
  const series = stepSeries(LOG);

  it('has one point per train step, skipped ones included', () => {
    expect(series.map((p) => [p.step, p.version, p.samples, p.skipped])).toEqual([
      [1, 0, 2, null],
      [2, 1, 0, 'no trainable samples'],
    ]);
  });

  it.each([
    // field, step 1, step 2
    ['meanReward', 0.5, null], // (1 + 0) / 2 from the token_update samples; step 2 trained none
    ['votePos', 2 / 4, null], // votes 1, 1, -1, 0 (the failed vote is left out)
    ['voteNeg', 1 / 4, null],
    ['voteZero', 1 / 4, null],
    ['opdAcceptance', 1 / 2, null], // s0 accepted, s1 not
    ['meanAbsAdv', 0.75, null],
    ['loss', 0.5, null],
    ['kl', 0.01, null],
    ['clipFracLow', 0.1, null],
    ['clipFracHigh', 0.2, null],
    ['entropy', 1.5, null],
    ['logpGap', 0.003, null],
    ['opdGap', 0.002, null],
    ['dropped', 2, null],
    ['genTokensPerSec', 6 / 5, 4 / 2], // 3+1+2 tokens over 1000..6000 ms; 4 tokens over 6000..8000
    ['trainTokensPerSec', 10, null], // 5 tokens / 0.5 s; skipped step has no time
  ] as const)('%s = %s, %s', (field, one, two) => {
    expect(series[0][field]).toBeCloseTo(one as number, 12);
    if (two === null) expect(series[1][field]).toBeNull();
    else expect(series[1][field]).toBeCloseTo(two, 12);
  });

  it('falls back to the window’s trainable samples without token_update records', () => {
    const noUpdates = LOG.filter((r) => r.kind !== 'token_update');
    expect(stepSeries(noUpdates)[0].meanReward).toBeCloseTo(0.5, 12);
  });

  it('is empty before the first step', () => {
    expect(stepSeries(LOG.slice(0, 10))).toEqual([]);
  });
});

describe('evalSeries', () => {
  it('takes the named evaluations with the first as baseline', () => {
    expect(evalSeries(LOG)).toEqual({
      points: [
        { step: 0, version: 0, ts: 1000, score: 0.2, failed: null, problems: 2, wishes: null },
        { step: 2, version: 1, ts: 9000, score: 0.6, failed: 1, problems: 2, wishes: null },
      ],
      baseline: 0.2,
    });
    expect(evalSeries(LOG, 'other').baseline).toBe(9);
    expect(evalSeries([])).toEqual({ points: [], baseline: null });
  });

  it('counts train steps for an evaluation without a step', () => {
    const log = LOG.map((r) => (r.kind === 'evaluation' && r.ts === 9000 ? { ...r, step: undefined } : r));
    expect(evalSeries(log).points[1].step).toBe(2);
  });
});

/** A storyteller's evaluation after `step` steps, with wish rates as storyEvaluationScores writes them. */
function storyEvaluation(step: number, rates: Record<string, number>): RunRecord {
  return { kind: 'evaluation', version: step, ts: 1000 + step, step, name: 'personalization', scores: { score: 0.5, keywords: 0.3, ...rates }, perProblem: [] };
}

describe('wish rates', () => {
  it('lists the five wishes and the story rate, with the name as the one no other child shares', () => {
    expect(WISH_RATES.map((w) => [w.key, w.title])).toEqual([
      ['wish:pet', 'pet'],
      ['wish:name', 'name'],
      ['wish:favourite', 'favourite'],
      ['wish:sleep', 'sleep'],
      ['wish:gentle', 'gentle'],
      ['story', 'stories'],
    ]);
    expect(WISH_RATES.filter((w) => w.own).map((w) => w.key)).toEqual(['wish:name']);
    // The keys are those the storyteller's evaluation writes, every one of them.
    const child = normaliseChild({ subject: 'dog', name: 'Max', favourite: 'ball' });
    const written = storyEvaluationScores(child, [{ question: 'Once upon a time, there was a little dog.', answer: 'Max ball happy sleep' }]);
    expect(wishRatesOf(written)).toEqual(WISH_RATES.map(() => 0));
  });

  it('reads an evaluation’s rates in that order, and none from one without them', () => {
    expect(wishRatesOf({ score: 0.4, 'wish:name': 0.25, story: 1, keywords: 0.9 })).toEqual([null, 0.25, null, null, null, 1]);
    expect(wishRatesOf({ score: 0.4 })).toBeNull();
    expect(wishRatesOf({ score: 0.4, 'wish:pet': NaN })).toBeNull();
    const run = [storyEvaluation(0, { 'wish:pet': 0.5, story: 0.75 }), ...LOG];
    expect(evalSeries(run).points.map((p) => p.wishes)).toEqual([[0.5, null, null, null, null, 0.75], null, null]);
  });

  it('gives the first and the latest evaluation’s rates', () => {
    const before = { 'wish:pet': 0.5, 'wish:name': 0, 'wish:favourite': 0.25, 'wish:sleep': 0.125, 'wish:gentle': 0.75, story: 0.875 };
    const middle = { ...before, 'wish:name': 0.5 };
    const now = { ...before, 'wish:name': 0.625, 'wish:pet': 1, story: 1 };
    const w = wishesBeforeAfter([storyEvaluation(0, before), storyEvaluation(2, middle), storyEvaluation(4, now)])!;
    expect(w.before).toEqual({ step: 0, version: 0 });
    expect(w.now).toEqual({ step: 4, version: 4 });
    expect(w.rows.map((r) => [r.title, r.before, r.now])).toEqual([
      ['pet', 0.5, 1],
      ['name', 0, 0.625],
      ['favourite', 0.25, 0.25],
      ['sleep', 0.125, 0.125],
      ['gentle', 0.75, 0.75],
      ['stories', 0.875, 1],
    ]);
    expect(w.rows.find((r) => r.own)!.key).toBe('wish:name');
  });

  it('has no later rates before a second evaluation, and none at all without wish rates', () => {
    const w = wishesBeforeAfter([storyEvaluation(0, { 'wish:name': 0.25 })])!;
    expect(w.now).toBeNull();
    expect(w.rows[1]).toMatchObject({ before: 0.25, now: null });
    expect(wishesBeforeAfter(LOG)).toBeNull();
    expect(wishesBeforeAfter([])).toBeNull();
  });
});

describe('conversations', () => {
  const convs = conversations(LOG);

  it('groups turns by session in order, with the session end', () => {
    expect(convs.map((s) => [s.session, s.turns.map((t) => `${t.turn}${t.turnType[0]}`), s.end?.reason ?? null])).toEqual([
      ['s0', ['1m', '2s', '3m'], null],
      ['s1', ['1m'], 'timeout'],
    ]);
  });

  it('attaches votes, results, samples and training steps to their turn', () => {
    const t = convs[0].turns[0];
    expect(t.prompt).toEqual({ role: 'user', content: 'Say hi' });
    expect(t.binaryVotes.map((v) => v.score)).toEqual([1, 1, -1]);
    expect(t.hintVotes.map((v) => v.hint)).toEqual(['Be brief please']);
    expect(t.binary?.score).toBe(1);
    expect(t.hint?.accepted).toBe(true);
    expect(t.sample?.reward).toBe(1);
    expect(t.trainedAt).toEqual([1]);
    expect(t.judged).toBe(true);
    expect(convs[0].turns[1].judged).toBe(false);
    expect(convs[1].turns[0].binaryVotes.map((v) => v.score)).toEqual([0, null]);
  });

  it('marks a judged turn with no usable hint and r = 0 that has no sample as dropped', () => {
    // s1#1: hint rejected, r_final 0; this log (from before the drop) still has its sample.
    expect(convs[1].turns[0].dropped).toBe(false);
    const now = conversations(LOG.filter((r) => !(r.kind === 'sample' && r.session === 's1')));
    expect(now[1].turns[0].dropped).toBe(true);
    expect(now[0].turns.map((t) => t.dropped)).toEqual([false, false, false]);
  });

  it("marks the turns a resume listed as the interrupted step's, and no others", () => {
    expect(convs.flatMap((s) => s.turns.map((t) => t.interruptedStep))).toEqual([null, null, null, null]);
    const marker: RunRecord = {
      kind: 'runtime_event',
      version: 1,
      ts: 9,
      step: 1,
      event: 'run_resumed',
      message: 'resumed at step 1 (v1) with 0 buffered samples; 1 turn of the interrupted step 2 kept, marked interrupted, never trained (1 session)',
      interrupted: [{ session: 's0', turns: [3] }],
    };
    const after = conversations([...LOG, marker]);
    expect(after.map((s) => s.turns.map((t) => [t.turn, t.interruptedStep]))).toEqual([
      [
        [1, null],
        [2, null],
        [3, 2],
      ],
      [[1, null]],
    ]);
  });
});

describe('candidateViews', () => {
  it('lists the top-k candidates with their mean overlap per token, the winner marked', () => {
    const views = candidateViews({
      rule: 'topk-sequence',
      k: 4,
      clip: 1,
      tokens: 5,
      winner: 1,
      candidates: [
        { hint: 'Show each step.', overlap: 12, tokensWon: 0 },
        { hint: 'Write every step as a sentence.', overlap: 17, tokensWon: 5 },
      ],
    });
    expect(views).toEqual([
      { hint: 'Show each step.', overlap: 12, perToken: 2.4, tokensWon: 0, winner: false },
      { hint: 'Write every step as a sentence.', overlap: 17, perToken: 3.4, tokensWon: 5, winner: true },
    ]);
  });
});

describe('beforeAfter', () => {
  it('pairs each baseline answer with the latest one', () => {
    expect(beforeAfter(LOG)).toEqual([
      {
        id: 'p1',
        prompt: null,
        of: 2,
        baseline: { id: 'p1', text: '<b>old</b>', score: 0, version: 0, step: 0, evalScore: 0.2, evalFailed: null },
        latest: { id: 'p1', text: 'new', score: 1, version: 1, step: 2, evalScore: 0.6, evalFailed: 1 },
      },
      {
        id: 'p2',
        prompt: null,
        of: 2,
        baseline: { id: 'p2', text: 'x', score: 0.5, version: 0, step: 0, evalScore: 0.2, evalFailed: null },
        latest: null,
      },
    ]);
    expect(beforeAfter([])).toEqual([]);
  });
});

describe('fmt', () => {
  it.each([
    [fmt(0.5), '0.500'],
    [fmt(-0.5, 2), '\u22120.50'],
    [fmt(-0.0001), '0.000'],
    [fmt(null), '–'],
    [fmt(NaN), '–'],
    [fmtSigned(0.5), '+0.500'],
    [fmtSigned(-0.5), '\u22120.500'],
    [fmtSigned(0), '0.000'],
  ])('%s', (got, want) => {
    expect(got).toBe(want);
  });
});

describe('the recorded run (test/fixtures/recorded-run.jsonl)', () => {
  const records = readFileSync(new URL('../../../test/fixtures/recorded-run.jsonl', import.meta.url), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RunRecord);

  it('gives the per-step values worked out from its records', () => {
    const s = stepSeries(records);
    expect(s.map((p) => p.step)).toEqual([1, 2]);
    // Step 1 trained s1/1 (+1) and s0/1, s2/1, s3/1 (-1); step 2 trained four -1 turns.
    expect(s.map((p) => p.meanReward)).toEqual([-0.5, -1]);
    expect(s.map((p) => p.votePos)).toEqual([0.25, 0]);
    expect(s.map((p) => p.opdAcceptance)).toEqual([0.75, 1]);
    expect(s[0].loss).toBeCloseTo(0.5883, 4);
    expect(evalSeries(records).points.map((p) => p.step)).toEqual([0, 2]);
  });

  it('has token tables whose combined advantage is r + (teacher - student)', () => {
    const t = tokenTable(records, 's0', 1, { epsLow: 0.2, epsHigh: 0.28 })!;
    expect(t.rows.length).toBe(48);
    expect(t.trainedAt).toBe(1);
    for (const r of t.rows) expect(r.combined!).toBeCloseTo(r.binary! + r.opd!, 5);
    expect(t.rows.map((r) => r.display).join('')).toBe(t.response);
  });
});

describe('hintVoteView', () => {
  it('shows a hint judge that found nothing as neutral, not as a penalty', () => {
    expect([1, -1, null].map(hintVoteView)).toEqual([
      { text: 'hint', cls: 'pos' },
      { text: 'no hint', cls: 'zero' },
      { text: 'failed', cls: 'none' },
    ]);
  });
});
