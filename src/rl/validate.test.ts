import { describe, it, expect } from 'vitest';
import { RecordValidationError } from './errors';
import type { RunRecord } from './records';
import { RECORD_LIMITS } from './record-limits';
import { validateRecord } from './validate';
import { skippedStats } from '../../test/support/rl/stats';

const good: RunRecord[] = [
  {
    kind: 'interaction',
    version: 0,
    ts: 1000,
    session: 's1',
    turn: 1,
    turnType: 'main',
    messages: [
      { role: 'system', content: 'be kind' },
      { role: 'user', content: 'Solve 2+2' },
    ],
    response: '4',
    tokenIds: [19, 151645],
    logprobs: [-0.25, -0.001],
    startedAt: 990,
    finishedAt: 1000,
  },
  { kind: 'judge_vote', version: 0, ts: 1100, session: 's1', turn: 1, judge: 'binary', vote: 0, raw: '\\boxed{-1}', score: -1, hint: null },
  {
    kind: 'judge_vote',
    version: 0,
    ts: 1101,
    session: 's1',
    turn: 1,
    judge: 'hint',
    vote: 0,
    raw: '\\boxed{1}[HINT_START]Show steps.[HINT_END]',
    score: 1,
    hint: 'Show steps.',
    step: 3,
  },
  { kind: 'judge_result', version: 0, ts: 1200, session: 's1', turn: 1, judge: 'hint', score: 1, accepted: true, hint: 'Show steps.', teacherLogpCount: 2 },
  {
    kind: 'sample',
    version: 0,
    ts: 1300,
    session: 's1',
    turn: 1,
    trainable: true,
    promoted: false,
    reward: -1,
    advantages: { tokens: 2, mean: -1.25, min: -1.5, max: -1, meanAbs: 1.25, nonZero: 2 },
    perToken: [-1, -1.5],
    opdWeight: 1,
  },
  {
    kind: 'train_step',
    version: 0,
    ts: 1400,
    step: 0,
    samples: 16,
    stats: {
      loss: 0.5,
      policyLoss: 0.5,
      kl: 0,
      clipFracLow: 0,
      clipFracHigh: 0.01,
      entropy: 1.2,
      meanAbsAdv: 0.7,
      gradNorm: 3.1,
      tokens: 2048,
      stepMs: 812,
      logpGap: 0.002,
      opdGap: 0.002,
    },
    skipped: null,
    dropped: 3,
  },
  {
    kind: 'train_step',
    version: 1,
    ts: 1500,
    step: 1,
    samples: 16,
    stats: skippedStats,
    skipped: 'no trainable tokens',
  },
  {
    kind: 'evaluation',
    version: 1,
    ts: 1600,
    step: 1,
    name: 'personalization',
    scores: { mean: 0.25 },
    perProblem: [
      { id: 'gsm8k-0', score: 0.5, detail: 'too formal' },
      { id: 'gsm8k-1', score: null },
    ],
    failed: 1,
    problemSet: 'the first 2 of the GSM8K test split in dataset order',
  },
  { kind: 'version_boundary', version: 1, ts: 1450, step: 0, from: 0, to: 1 },
  { kind: 'session_end', version: 1, ts: 1700, session: 's1', reason: 'timeout', turns: 5, mainTurns: 3 },
  {
    kind: 'tool_step',
    version: 0,
    ts: 1750,
    session: 'g0.r1',
    turn: 2,
    group: 'g0',
    problem: 'gsm8k/test#0',
    stepIndex: 1,
    final: false,
    toolResults: ['72'],
    outcome: 1,
    mode: 'integrated',
    votes: [1, null, -1],
    raw: ['\\boxed{1}', 'no box', '\\boxed{-1}'],
    reward: 1,
    advantage: -0.5,
  },
  { kind: 'token_update', version: 0, ts: 1450, session: 's1', turn: 1, step: 1, before: [-0.25, -0.001], after: [-0.2, -0.002], advantages: [0.5, -0.25] },
  { kind: 'runtime_event', version: 1, ts: 1800, event: 'device_lost', message: 'GPU device lost: reloading the model' },
  {
    kind: 'runtime_event',
    version: 1,
    ts: 1850,
    step: 1,
    event: 'run_resumed',
    message: 'resumed at step 1 (v1) with 1 buffered sample; 3 turns of the interrupted step 2 kept, marked interrupted, never trained (2 sessions)',
    interrupted: [
      { session: 's4', turns: [1, 2] },
      { session: 's5', turns: [1] },
    ],
  },
  {
    kind: 'workspace_file',
    version: 1,
    ts: 1900,
    workspace: 's1',
    session: 's1.student',
    turn: 2,
    path: 'homework/0.txt',
    op: 'append',
    content: 'Problem:\nQ\n\nSolution:\n18',
  },
];

describe('validateRecord accepts well-formed records', () => {
  it.each(good.map((r) => [r.kind, r] as const))('%s', (_kind, record) => {
    const parsed = JSON.parse(JSON.stringify(record));
    const out = validateRecord(parsed, 'run.jsonl line 1');
    expect(out).toEqual(record);
    expect(out).not.toBe(parsed);
  });
});

type Mutation = (r: any) => void;
const byKind = (kind: RunRecord['kind']) => structuredClone(good.find((r) => r.kind === kind)!) as any;

describe('validateRecord rejects malformed records, naming the field', () => {
  const cases: [string, RunRecord['kind'], Mutation, string][] = [
    ['unknown kind', 'interaction', (r) => (r.kind = 'chat'), 'kind'],
    ['missing kind', 'interaction', (r) => delete r.kind, 'kind'],
    ['missing messages', 'interaction', (r) => delete r.messages, 'messages'],
    ['bad role', 'interaction', (r) => (r.messages[1].role = 'bot'), 'messages[1].role'],
    ['content not a string', 'interaction', (r) => (r.messages[0].content = 5), 'messages[0].content'],
    ['content over the limit', 'interaction', (r) => (r.messages[0].content = 'x'.repeat(RECORD_LIMITS.text + 1)), 'messages[0].content'],
    ['negative version', 'interaction', (r) => (r.version = -1), 'version'],
    ['fractional version', 'interaction', (r) => (r.version = 1.5), 'version'],
    ['ts as a string', 'interaction', (r) => (r.ts = 'now'), 'ts'],
    // Past what Date accepts: toISOString throws RangeError while the page renders it.
    ['ts of 1e300', 'runtime_event', (r) => (r.ts = 1e300), 'ts'],
    ['ts one past the last Date', 'interaction', (r) => (r.ts = 8.64e15 + 1), 'ts'],
    ['finishedAt past the last Date', 'interaction', (r) => (r.finishedAt = 1e300), 'finishedAt'],
    ['empty session', 'interaction', (r) => (r.session = ''), 'session'],
    ['session too long', 'interaction', (r) => (r.session = 's'.repeat(RECORD_LIMITS.id + 1)), 'session'],
    ['missing session where required', 'interaction', (r) => delete r.session, 'session'],
    ['turn 0', 'interaction', (r) => (r.turn = 0), 'turn'],
    ['bad turn type', 'interaction', (r) => (r.turnType = 'background'), 'turnType'],
    ['unknown field', 'interaction', (r) => (r.evil = true), 'evil'],
    ['token texts not matching the tokens', 'interaction', (r) => (r.tokenTexts = ['4']), 'tokenTexts'],
    ['a token text not a string', 'interaction', (r) => (r.tokenTexts = ['4', 7]), 'tokenTexts[1]'],
    ['teacher log-probs not matching their count', 'judge_result', (r) => ((r.teacherLogpCount = 2), (r.teacherLogp = [-1])), 'teacherLogp'],
    ['token update with unequal lengths', 'token_update', (r) => r.after.pop(), 'after'],
    ['token update with a NaN', 'token_update', (r) => (r.before[0] = 'NaN'), 'before[0]'],
    ['token update advantages not matching its tokens', 'token_update', (r) => r.advantages.pop(), 'advantages'],
    ['sample OPD weight not a number', 'sample', (r) => (r.opdWeight = 'one'), 'opdWeight'],
    ['negative drop count', 'train_step', (r) => (r.dropped = -1), 'dropped'],
    ['negative OPD gap', 'train_step', (r) => (r.stats.opdGap = -0.1), 'stats.opdGap'],
    ['unknown runtime event', 'runtime_event', (r) => (r.event = 'meltdown'), 'event'],
    ['interrupted turns on an event other than a resume', 'runtime_event', (r) => (r.interrupted = [{ session: 's1', turns: [1] }]), 'interrupted'],
    [
      'an interrupted turn 0',
      'runtime_event',
      (r) => ((r.event = 'run_resumed'), (r.interrupted = [{ session: 's1', turns: [0] }])),
      'interrupted[0].turns[0]',
    ],
    [
      'an interrupted turn without its session',
      'runtime_event',
      (r) => ((r.event = 'run_resumed'), (r.interrupted = [{ turns: [1] }])),
      'interrupted[0].session',
    ],
    ['negative token id', 'interaction', (r) => (r.tokenIds[1] = -1), 'tokenIds[1]'],
    ['null log-prob', 'interaction', (r) => (r.logprobs[0] = null), 'logprobs[0]'],
    ['log-probs and tokens of different length', 'interaction', (r) => r.logprobs.push(-1), 'logprobs'],
    ['finished before started', 'interaction', (r) => (r.finishedAt = 0), 'finishedAt'],
    ['vote score 2', 'judge_vote', (r) => (r.score = 2), 'score'],
    ['unknown judge', 'judge_vote', (r) => (r.judge = 'gpt'), 'judge'],
    ['hint too long', 'judge_vote', (r) => (r.hint = 'h'.repeat(RECORD_LIMITS.hint + 1)), 'hint'],
    ['accepted not boolean', 'judge_result', (r) => (r.accepted = 'yes'), 'accepted'],
    ['result score out of range', 'judge_result', (r) => (r.score = 3), 'score'],
    ['per-token length differs from summary', 'sample', (r) => r.perToken.push(0), 'perToken'],
    ['a loss mask that does not cover the tokens', 'sample', (r) => (r.lossMask = [1]), 'lossMask'],
    ['a loss mask entry other than 0 and 1', 'sample', (r) => (r.lossMask = [1, 0.5]), 'lossMask[1]'],
    ['an unknown trajectory fallback', 'sample', (r) => (r.trajectoryFallback = 'template'), 'trajectoryFallback'],
    ['clipped OPD teacher log-probs do not cover the tokens', 'sample', (r) => (r.opdClip = { clip: 1, teacherLogp: [-1] }), 'opdClip.teacherLogp'],
    ['negative OPD clip', 'sample', (r) => (r.opdClip = { clip: -1, teacherLogp: r.perToken.map(() => -1) }), 'opdClip.clip'],
    [
      'top-k selection winner out of range',
      'judge_result',
      (r) =>
        (r.selection = { rule: 'topk-sequence', k: 4, clip: 1, tokens: 2, winner: 1, candidates: [{ hint: 'Show each step.', overlap: 3, tokensWon: 2 }] }),
      'selection.winner',
    ],
    [
      'top-k selection with an unknown rule',
      'judge_result',
      (r) => (r.selection = { rule: 'longest', k: 4, clip: 1, tokens: 2, winner: 0, candidates: [] }),
      'selection.rule',
    ],
    ['summary field missing', 'sample', (r) => delete r.advantages.meanAbs, 'advantages.meanAbs'],
    ['clip fraction above 1', 'train_step', (r) => (r.stats.clipFracLow = 1.5), 'stats.clipFracLow'],
    ['stat missing', 'train_step', (r) => delete r.stats.entropy, 'stats.entropy'],
    ['empty skip reason', 'train_step', (r) => (r.skipped = ''), 'skipped'],
    ['missing step', 'train_step', (r) => delete r.step, 'step'],
    ['score not a number', 'evaluation', (r) => (r.scores.mean = 'high'), 'scores.mean'],
    ['empty problem id', 'evaluation', (r) => (r.perProblem[0].id = ''), 'perProblem[0].id'],
    ['more failed problems than problems', 'evaluation', (r) => (r.failed = 3), 'failed'],
    ['boundary going backwards', 'version_boundary', (r) => (r.to = 0), 'to'],
    ['bad end reason', 'session_end', (r) => (r.reason = 'crash'), 'reason'],
    ['workspace change neither a write nor an append', 'workspace_file', (r) => (r.op = 'delete'), 'op'],
    ['workspace file without a path', 'workspace_file', (r) => (r.path = ''), 'path'],
    ['workspace file changed in turn 0', 'workspace_file', (r) => (r.turn = 0), 'turn'],
    ['workspace file content not a string', 'workspace_file', (r) => (r.content = null), 'content'],
    ['tool step turn not stepIndex + 1', 'tool_step', (r) => (r.turn = 1), 'turn'],
    ['tool step vote of 0', 'tool_step', (r) => (r.votes[0] = 0), 'votes[0]'],
    ['tool step raw replies not matching the votes', 'tool_step', (r) => r.raw.pop(), 'raw'],
    ['tool step outcome 0', 'tool_step', (r) => (r.outcome = 0), 'outcome'],
    ['tool step votes in outcome mode', 'tool_step', (r) => (r.mode = 'outcome'), 'votes'],
    ['tool results on a final answer', 'tool_step', (r) => (r.final = true), 'toolResults'],
    ['tool step advantage not a number', 'tool_step', (r) => (r.advantage = 'high'), 'advantage'],
    ['more main turns than turns', 'session_end', (r) => (r.mainTurns = 9), 'mainTurns'],
  ];
  it.each(cases)('%s', (_name, kind, mutate, field) => {
    const record = byKind(kind);
    mutate(record);
    let error: unknown;
    try {
      validateRecord(record, 'run.jsonl line 7');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RecordValidationError);
    const e = error as RecordValidationError;
    expect(e.field).toBe(field);
    expect(e.where).toBe('run.jsonl line 7');
    expect(e.message).toContain(`run.jsonl line 7: field "${field}"`);
  });

  const notObjects: [string, unknown][] = [
    ['null', null],
    ['an array', [1]],
    ['a string', 'interaction'],
    ['a number', 3],
  ];
  it.each(notObjects)('%s', (_name, value) => {
    expect(() => validateRecord(value, 'x')).toThrow(RecordValidationError);
  });
});

describe('validateRecord on hostile input', () => {
  it('accepts every time Date can show, up to its last, and nothing past it', () => {
    const last = { ...byKind('runtime_event'), ts: 8.64e15 };
    expect(new Date(validateRecord(last, 'x').ts).toISOString()).toBe('+275760-09-13T00:00:00.000Z');
    for (const ts of [8.64e15 + 1, 1e300, Number.MAX_VALUE]) {
      expect(() => validateRecord({ ...last, ts }, 'x')).toThrow(/field "ts" must be a number in \[0, 8640000000000000\]/);
    }
  });

  it('keeps a "__proto__" score key as plain data', () => {
    const text = JSON.stringify(byKind('evaluation')).replace('"mean":0.25', '"__proto__":{"polluted":1}');
    expect(() => validateRecord(JSON.parse(text), 'x')).toThrow(RecordValidationError);
    const numeric = JSON.stringify(byKind('evaluation')).replace('"mean":0.25', '"__proto__":1');
    const out = validateRecord(JSON.parse(numeric), 'x');
    expect(out.kind === 'evaluation' && Object.hasOwn(out.scores, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out.kind === 'evaluation' ? out.scores : null)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('reads a sample with a per-token loss mask (a tool-call trajectory), and one without it as every run logged before', () => {
    const masked = { ...byKind('sample'), lossMask: [1, 0] };
    expect(validateRecord(masked, 'x')).toEqual(masked);
    const older = byKind('sample');
    expect(older).not.toHaveProperty('lossMask');
    expect(validateRecord(older, 'x')).toEqual(older);
  });

  it('reads a per-step sample that says why its trajectory did not become one sample', () => {
    for (const why of ['no-prompt-ids', 'prompt-mismatch']) {
      const fellBack = { ...byKind('sample'), trajectoryFallback: why };
      expect(validateRecord(fellBack, 'x')).toEqual(fellBack);
    }
  });

  it('refuses a top-level "__proto__" field', () => {
    const text = JSON.stringify(byKind('session_end')).replace('{', '{"__proto__":{"x":1},');
    expect(() => validateRecord(JSON.parse(text), 'x')).toThrow(/"__proto__"/);
  });

  it('refuses an array over the limit without walking it', () => {
    const r = byKind('sample');
    // Counts the entries read: the limit is checked on the length, before any entry is.
    let reads = 0;
    r.perToken = new Proxy(new Array(RECORD_LIMITS.tokens + 1).fill(0), {
      get: (target, key, receiver) => ((reads += typeof key === 'string' && /^\d+$/.test(key) ? 1 : 0), Reflect.get(target, key, receiver)),
    });
    r.advantages.tokens = r.perToken.length;
    expect(() => validateRecord(r, 'x')).toThrow(/limit is 1000000/);
    expect(reads).toBe(0);
  });
});
