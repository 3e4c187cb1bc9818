import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RunRecord, TrainStats } from '../../rl/records';
import { advantageOf, advantageRange, alignTokenTexts, tokenTable } from './derive-tokens';
import { beforeAfter, evalSeries } from './derive-evaluations';
import { clipState } from '../../rl/ppo';
import { candidateViews, conversations } from './derive-conversations';
import { fmt, fmtSigned } from './format';
import { stepSeries } from './derive-steps';
import { skippedStats } from '../../../test/support/rl/stats';

const stats = (over: Partial<TrainStats> = {}): TrainStats => ({
  loss: 0.5,
  policyLoss: 0.5,
  kl: 0.01,
  clipFracLow: 0.1,
  clipFracHigh: 0.2,
  entropy: 1.5,
  meanAbsAdv: 0.75,
  gradNorm: 2,
  tokens: 5,
  stepMs: 500,
  logpGap: 0.003,
  ...over,
});

/**
 * A hand-written log: two sessions, one side turn, one trained step and one skipped step.
 * Every expected number below is computed by hand from it.
 */
const LOG: RunRecord[] = [
  {
    kind: 'evaluation',
    version: 0,
    ts: 1000,
    step: 0,
    name: 'personalization',
    scores: { score: 0.2 },
    perProblem: [
      { id: 'p1', score: 0, detail: '<b>old</b>' },
      { id: 'p2', score: 0.5, detail: 'x' },
    ],
  },
  { kind: 'evaluation', version: 0, ts: 1001, step: 0, name: 'other', scores: { score: 9 }, perProblem: [] },
  {
    kind: 'interaction',
    version: 0,
    ts: 2000,
    session: 's0',
    turn: 1,
    turnType: 'main',
    messages: [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'Say hi' },
    ],
    response: 'Hi, there',
    tokenIds: [10, 11, 12],
    logprobs: [-1, -2, -0.5],
    tokenTexts: ['Hi', ',', 'there'],
    startedAt: 1000,
    finishedAt: 2000,
  },
  {
    kind: 'interaction',
    version: 0,
    ts: 3000,
    session: 's0',
    turn: 2,
    turnType: 'side',
    messages: [{ role: 'user', content: 'remember' }],
    response: 'ok',
    tokenIds: [5],
    logprobs: [-0.1],
    startedAt: 1500,
    finishedAt: 3000,
  },
  {
    kind: 'interaction',
    version: 0,
    ts: 4000,
    session: 's1',
    turn: 1,
    turnType: 'main',
    messages: [{ role: 'user', content: 'Q' }],
    response: 'ab',
    tokenIds: [1, 2],
    logprobs: [-1, -1],
    tokenTexts: ['a', 'b'],
    startedAt: 2000,
    finishedAt: 4000,
  },
  { kind: 'judge_vote', version: 0, ts: 4100, session: 's0', turn: 1, judge: 'binary', vote: 0, raw: 'good \\boxed{1}', score: 1, hint: null },
  { kind: 'judge_vote', version: 0, ts: 4100, session: 's0', turn: 1, judge: 'binary', vote: 1, raw: '\\boxed{1}', score: 1, hint: null },
  { kind: 'judge_vote', version: 0, ts: 4100, session: 's0', turn: 1, judge: 'binary', vote: 2, raw: '\\boxed{-1}', score: -1, hint: null },
  { kind: 'judge_vote', version: 0, ts: 4100, session: 's1', turn: 1, judge: 'binary', vote: 0, raw: '\\boxed{0}', score: 0, hint: null },
  { kind: 'judge_vote', version: 0, ts: 4100, session: 's1', turn: 1, judge: 'binary', vote: 1, raw: 'no box', score: null, hint: null },
  {
    kind: 'judge_vote',
    version: 0,
    ts: 4100,
    session: 's0',
    turn: 1,
    judge: 'hint',
    vote: 0,
    raw: '[HINT_START]Be brief please[HINT_END] \\boxed{1}',
    score: 1,
    hint: 'Be brief please',
  },
  { kind: 'judge_result', version: 0, ts: 4200, session: 's0', turn: 1, judge: 'binary', score: 1, accepted: true, hint: null, teacherLogpCount: 0 },
  {
    kind: 'judge_result',
    version: 0,
    ts: 4200,
    session: 's0',
    turn: 1,
    judge: 'hint',
    score: 1,
    accepted: true,
    hint: 'Be brief please',
    teacherLogpCount: 3,
    teacherLogp: [-0.5, -2.5, -0.5],
  },
  { kind: 'judge_result', version: 0, ts: 4200, session: 's1', turn: 1, judge: 'binary', score: 0, accepted: false, hint: null, teacherLogpCount: 0 },
  { kind: 'judge_result', version: 0, ts: 4200, session: 's1', turn: 1, judge: 'hint', score: 0, accepted: false, hint: null, teacherLogpCount: 0 },
  {
    kind: 'sample',
    version: 0,
    ts: 4300,
    session: 's0',
    turn: 1,
    trainable: true,
    promoted: false,
    reward: 1,
    advantages: { tokens: 3, mean: 1, min: 0.5, max: 1.5, meanAbs: 1, nonZero: 3 },
    perToken: [1.5, 0.5, 1],
  },
  {
    kind: 'sample',
    version: 0,
    ts: 4300,
    session: 's1',
    turn: 1,
    trainable: true,
    promoted: true,
    reward: 0,
    advantages: { tokens: 2, mean: 0, min: 0, max: 0, meanAbs: 0, nonZero: 0 },
    perToken: [0, 0],
  },
  { kind: 'train_step', version: 0, ts: 6000, step: 1, samples: 2, stats: stats({ opdGap: 0.002 }), skipped: null, dropped: 2 },
  { kind: 'token_update', version: 0, ts: 6000, session: 's0', turn: 1, step: 1, before: [-1, -2, -0.5], after: [-0.5, -2.1, -0.5] },
  { kind: 'token_update', version: 0, ts: 6000, session: 's1', turn: 1, step: 1, before: [-1, -1], after: [-1, -1] },
  { kind: 'version_boundary', version: 1, ts: 6000, step: 1, from: 0, to: 1 },
  {
    kind: 'interaction',
    version: 1,
    ts: 7000,
    session: 's0',
    turn: 3,
    turnType: 'main',
    messages: [{ role: 'user', content: 'Again' }],
    response: 'wxyz',
    tokenIds: [1, 2, 3, 4],
    logprobs: [-1, -1, -1, -1],
    startedAt: 6500,
    finishedAt: 7000,
  },
  { kind: 'train_step', version: 1, ts: 8000, step: 2, samples: 0, stats: skippedStats, skipped: 'no trainable samples' },
  {
    kind: 'evaluation',
    version: 1,
    ts: 9000,
    step: 2,
    name: 'personalization',
    scores: { score: 0.6 },
    perProblem: [
      { id: 'p1', score: 1, detail: 'new' },
      { id: 'p3', score: null, detail: 'unparsed' },
    ],
    failed: 1,
  },
  { kind: 'session_end', version: 1, ts: 9500, session: 's1', reason: 'timeout', turns: 1, mainTurns: 1 },
];

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
        { step: 0, version: 0, ts: 1000, score: 0.2, failed: null, problems: 2 },
        { step: 2, version: 1, ts: 9000, score: 0.6, failed: 1, problems: 2 },
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

describe('tokenTable', () => {
  const table = tokenTable(LOG, 's0', 1, { epsLow: 0.2, epsHigh: 0.28 })!;

  it('describes the turn', () => {
    expect(table).toMatchObject({
      turnType: 'main',
      version: 0,
      rFinal: 1,
      hint: 'Be brief please',
      hintAccepted: true,
      trainable: true,
      trainedAt: 1,
    });
  });

  it.each([
    // index, display, student, teacher, opd, binary, combined, ratio, clip
    [0, 'Hi', -1, -0.5, 0.5, 1, 1.5, Math.exp(0.5), 'high'], // A > 0, 1.6487 > 1.28
    [1, ',', -2, -2.5, -0.5, 1, 0.5, Math.exp(-0.1), 'none'], // A > 0, ratio went down
    [2, ' there', -0.5, -0.5, 0, 1, 1, 1, 'none'],
  ] as const)('token %i', (i, display, student, teacher, opd, binary, combined, ratio, clip) => {
    const r = table.rows[i];
    expect(r.display).toBe(display);
    expect(r.student).toBe(student);
    expect(r.teacher).toBe(teacher);
    expect(r.opd).toBeCloseTo(opd, 12);
    expect(r.binary).toBe(binary);
    expect(r.combined).toBe(combined);
    expect(r.ratio).toBeCloseTo(ratio, 12);
    expect(r.clip).toBe(clip);
  });

  it('uses w_binary and leaves missing signals null', () => {
    const t = tokenTable(LOG, 's0', 1, { epsLow: 0.2, epsHigh: 0.28, weights: { binary: 0.5, opd: 1 } })!;
    expect(t.rows[0].binary).toBe(0.5);
    const untrained = tokenTable(LOG, 's0', 3, { epsLow: 0.2, epsHigh: 0.28 })!;
    expect(untrained.rows[0]).toMatchObject({ text: '#1', teacher: null, opd: null, binary: null, combined: null, ratio: null, clip: null });
    expect(untrained.trainedAt).toBeNull();
    const rejected = tokenTable(LOG, 's1', 1, { epsLow: 0.2, epsHigh: 0.28 })!;
    expect(rejected.rows.map((r) => [r.teacher, r.binary, r.combined, r.clip])).toEqual([
      [null, 0, 0, 'none'],
      [null, 0, 0, 'none'],
    ]);
    expect(tokenTable(LOG, 'nope', 1, { epsLow: 0.2, epsHigh: 0.28 })).toBeNull();
  });

  it('shows what the step trained: the logged advantages, OPD re-based on the old policy', () => {
    // The trainer's old log-probs were below the rollout's, so A_OPD grew by as much.
    const rebased = LOG.map((r) =>
      r.kind === 'token_update' && r.session === 's0' ? { ...r, before: [-1.25, -2.25, -0.625], advantages: [1.75, 0.75, 1.125] } : r,
    );
    const t = tokenTable(rebased, 's0', 1, { epsLow: 0.2, epsHigh: 0.28 })!;
    expect(t.rows.map((r) => r.combined)).toEqual([1.5, 0.5, 1]);
    expect(t.rows.map((r) => r.trained)).toEqual([1.75, 0.75, 1.125]);
    expect(t.rows.map((r) => r.opd)).toEqual([0.5, -0.5, 0]);
    expect(t.rows.map((r) => r.opdTrained)).toEqual([0.75, -0.25, 0.125]);
    expect(t.rows.map((r) => advantageOf(r, 'combined'))).toEqual([1.75, 0.75, 1.125]);
    // Ratios exp(after - before): 2.01 (clipped high), 1.16 and 1.13 (inside the band).
    expect(t.rows.map((r) => r.clip)).toEqual(['high', 'none', 'none']);
    // A log without the field trained perToken, and OPD against the rollout.
    expect(table.rows.map((r) => [r.trained, r.opdTrained])).toEqual([
      [1.5, 0.5],
      [0.5, -0.5],
      [1, 0],
    ]);
  });

  it('shows a clipped A_OPD (top-k hint selection) as judged and as trained', () => {
    const clipped = LOG.map((r): RunRecord => {
      if (r.kind === 'judge_result' && r.judge === 'hint' && r.session === 's0') return { ...r, teacherLogp: [0.5, -4.5, -0.5] };
      if (r.kind === 'sample' && r.session === 's0') return { ...r, perToken: [2, 0, 1], opdWeight: 1, opdClip: { clip: 1, teacherLogp: [0.5, -4.5, -0.5] } };
      if (r.kind === 'token_update' && r.session === 's0') return { ...r, before: [-1.25, -2.25, -0.625], advantages: [2, 0, 1.125] };
      return r;
    });
    const t = tokenTable(clipped, 's0', 1, { epsLow: 0.2, epsHigh: 0.28 })!;
    // Teacher minus rollout: 1.5, -2.5, 0 -> clipped 1, -1, 0; minus the trainer's old: 1.75, -2.25, 0.125 -> 1, -1, 0.125.
    expect(t.rows.map((r) => r.opd)).toEqual([1, -1, 0]);
    expect(t.rows.map((r) => r.opdTrained)).toEqual([1, -1, 0.125]);
    expect(t.opdClip).toBe(1);
    expect(table.opdClip).toBe(0);
  });

  it('gives the advantage and the scale of each kind', () => {
    expect(table.rows.map((r) => advantageOf(r, 'opd'))).toEqual([0.5, -0.5, 0]);
    expect(advantageRange(table.rows, 'opd')).toBe(0.5);
    expect(advantageRange(table.rows, 'combined')).toBe(1.5);
    expect(advantageRange(table.rows, 'binary')).toBe(1);
  });
});

describe('clipState', () => {
  it.each([
    [1, 1.3, 'high'],
    [1, 1.28, 'none'], // the band's edge is inside
    [1, 0.5, 'none'], // moved against a positive advantage: not clipped
    [-1, 0.79, 'low'],
    [-1, 0.8, 'none'],
    [-1, 1.5, 'none'],
    [0, 2, 'none'],
  ] as const)('A=%s ratio=%s -> %s', (a, ratio, want) => {
    expect(clipState(a, ratio, 0.2, 0.28)).toBe(want);
  });
});

describe('alignTokenTexts', () => {
  it.each([
    ['The dog liked', ['The', 'do', 'g', 'li', 'ked'], ['The', ' do', 'g', ' li', 'ked']],
    ['a\nb', ['a', 'b'], ['a', '\nb']],
    ['a b', ['a', '<0x0A>', 'b'], ['a', '<0x0A>', 'b']], // unmatched: the rest keep their texts
    ['heard Raches', ['he', 'ar', 'd', '', 'R', 'aches'], ['he', 'ar', 'd', ' ', 'R', 'aches']], // a lone '▁' piece
    ['', [], []],
  ])('%j', (response, texts, want) => {
    expect(alignTokenTexts(response, texts)).toEqual(want);
  });
});

describe('beforeAfter', () => {
  it('pairs each baseline answer with the latest one', () => {
    expect(beforeAfter(LOG)).toEqual([
      {
        id: 'p1',
        baseline: { id: 'p1', text: '<b>old</b>', score: 0, version: 0, step: 0, evalScore: 0.2, evalFailed: null },
        latest: { id: 'p1', text: 'new', score: 1, version: 1, step: 2, evalScore: 0.6, evalFailed: 1 },
      },
      { id: 'p2', baseline: { id: 'p2', text: 'x', score: 0.5, version: 0, step: 0, evalScore: 0.2, evalFailed: null }, latest: null },
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
