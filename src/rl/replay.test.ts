import { describe, it, expect } from 'vitest';
import { opdAdvantages } from './advantages';
import { parseBoxedScore } from './boxed';
import { SampleBuffer, type Batch } from './buffer';
import { appendHint, parseHintVote, selectBestHint } from './hints';
import { buildBinaryJudgePrompt, buildHintJudgePrompt } from './judge';
import type { ChatMessage } from './messages';
import { makePreset, type MethodName } from './presets';
import type { RunRecord } from './records';
import { assembleSample, sampleRecord, type PolicyResponse, type TrainingSample } from './samples';
import { SessionTracker, type ClosedTurn, type TurnRequest } from './sessions';
import { validateRecord } from './validate';
import { majorityVote } from './votes';

/**
 * Three sessions, interleaved, with side turns, one explicit end, two timeouts and a late
 * reply, replayed through SessionTracker, the judges' parsing, assembleSample and
 * SampleBuffer with the combined preset (one vote per judge, weights 1/1, batch of 4), and
 * with the binary preset, whose zero-advantage turns stay in the batch under the loss mask.
 */

const sys: ChatMessage = { role: 'system', content: 'You are a tutor.' };
const u = (content: string): ChatMessage => ({ role: 'user', content });
const a = (content: string): ChatMessage => ({ role: 'assistant', content });
const tool = (content: string): ChatMessage => ({ role: 'tool', content });
const resp = (text: string, tokenIds: number[], logprobs: number[]): PolicyResponse => ({ text, tokenIds, logprobs });

interface Step {
  t: number;
  request?: TurnRequest;
  response?: PolicyResponse;
  sweep?: true;
  end?: string;
}

const HINT = 'Show every step in plain sentences.';

const script: Step[] = [
  { t: 0, request: { session: 'alice', turnType: 'main', version: 0, messages: [sys, u('Solve 2+2')] }, response: resp('4.', [11, 12], [-0.25, -0.5]) },
  { t: 10, request: { session: 'bob', turnType: 'main', version: 0, messages: [u('Plan my day')] }, response: resp('Gym at 9.', [21, 22, 23], [-1, -1, -1]) },
  { t: 20, request: { session: 'alice', turnType: 'side', version: 0, messages: [sys, u('Summarize memory')] }, response: resp('memo', [99], [-0.5]) },
  {
    t: 30,
    request: { session: 'alice', turnType: 'main', version: 0, messages: [sys, u('Solve 2+2'), a('4.'), u('Show the steps please, no lists')] },
    response: resp('Two plus two is four.', [13, 14, 15], [-0.5, -0.5, -0.5]),
  },
  { t: 40, request: { session: 'carol', turnType: 'main', version: 0, messages: [u('Grade this essay')] }, response: resp('B+', [31], [-2]) },
  {
    t: 50,
    request: { session: 'bob', turnType: 'main', version: 1, messages: [u('Plan my day'), a('Gym at 9.'), tool('calendar: ok')] },
    response: resp('Booked.', [24, 25], [-0.125, -0.125]),
  },
  { t: 60, request: { session: 'carol', turnType: 'side', version: 1, messages: [u('background lookup')] }, response: resp('x', [98], [-1]) },
  {
    t: 70,
    request: {
      session: 'alice',
      turnType: 'main',
      version: 1,
      done: true,
      messages: [sys, u('Solve 2+2'), a('4.'), u('Show the steps please, no lists'), a('Two plus two is four.'), u('Thanks, HOMEWORK_DONE')],
    },
    response: resp('Glad to help.', [16], [-0.25]),
  },
  { t: 2000, sweep: true },
  {
    t: 2100,
    request: { session: 'carol', turnType: 'main', version: 1, messages: [u('Grade this essay'), a('B+'), u('late reply')] },
    response: resp('Thanks.', [32, 33], [-0.5, -0.5]),
  },
  { t: 2200, end: 'carol' },
];

/** Scripted judge answers per turn key; turns not listed are never judged (no next state). */
const judgeScript: Record<string, { binary: string; hint: string; teacherLogp?: number[] }> = {
  'alice#1': {
    binary: 'The user asks for a redo. \\boxed{-1}',
    hint: `\\boxed{1}\n[HINT_START] ${HINT} [HINT_END]`,
    teacherLogp: [-0.125, -1],
  },
  'bob#1': { binary: 'Tool succeeded but unclear. \\boxed{ 0 }', hint: '\\boxed{-1}' },
  'alice#3': { binary: '\\boxed{0}', hint: '\\boxed{1} [HINT_START]ok[HINT_END]' },
};

function replay(method: MethodName) {
  let now = 0;
  const preset = makePreset(method, { batch: { size: 4 }, session: { idleTimeoutMs: 1000 } });
  const tracker = new SessionTracker<PolicyResponse>({ idleTimeoutMs: preset.session.idleTimeoutMs, now: () => now });
  const buffer = new SampleBuffer<TrainingSample>({ batchSize: preset.batch.size, zeroAdvantage: preset.batch.zeroAdvantage });
  const closed: ClosedTurn<PolicyResponse>[] = [];
  const batches: Batch<TrainingSample>[] = [];
  const records: RunRecord[] = [];
  const teacherContexts: Record<string, ChatMessage[]> = {};
  const judgePrompts: string[] = [];
  const ended: string[] = [];
  const dropped: string[] = [];

  const handle = (turns: ClosedTurn<PolicyResponse>[]) => {
    for (const turn of turns) {
      closed.push(turn);
      const key = `${turn.session}#${turn.turn}`;
      let reward: number | null = null;
      let opd: number[] | null = null;
      const judged = judgeScript[key];
      if (turn.nextState) {
        expect(judged, `turn ${key} has a next state but no scripted judge answer`).toBeDefined();
        judgePrompts.push(buildBinaryJudgePrompt(turn.response.text, turn.nextState)[1].content);
        judgePrompts.push(buildHintJudgePrompt(turn.response.text, turn.nextState)[1].content);
        const score = parseBoxedScore(judged.binary);
        reward = majorityVote([score]);
        records.push({
          kind: 'judge_vote',
          version: turn.version,
          ts: now,
          session: turn.session,
          turn: turn.turn,
          judge: 'binary',
          vote: 0,
          raw: judged.binary,
          score,
          hint: null,
        });
        const vote = parseHintVote(judged.hint);
        records.push({
          kind: 'judge_vote',
          version: turn.version,
          ts: now,
          session: turn.session,
          turn: turn.turn,
          judge: 'hint',
          vote: 0,
          raw: judged.hint,
          ...vote,
        });
        const hint = selectBestHint([vote], preset.judge.minHintChars);
        if (hint !== null) {
          teacherContexts[key] = appendHint(turn.messages, hint, preset.advantage.teacherContext);
          opd = opdAdvantages(judged.teacherLogp!, [...turn.response.logprobs]);
        }
        records.push({
          kind: 'judge_result',
          version: turn.version,
          ts: now,
          session: turn.session,
          turn: turn.turn,
          judge: 'binary',
          score: reward,
          accepted: reward !== 0,
          hint: null,
          teacherLogpCount: 0,
        });
        records.push({
          kind: 'judge_result',
          version: turn.version,
          ts: now,
          session: turn.session,
          turn: turn.turn,
          judge: 'hint',
          score: hint ? 1 : 0,
          accepted: hint !== null,
          hint,
          teacherLogpCount: opd?.length ?? 0,
        });
      } else {
        expect(judged, `turn ${key} has no next state but a scripted judge answer`).toBeUndefined();
      }
      const sample = assembleSample(turn, { reward, opd }, preset.method, preset.advantage.weights);
      if (!sample) {
        dropped.push(key);
        continue;
      }
      const added = buffer.add(sample);
      records.push(sampleRecord(added.sample, now));
      if (added.batch) batches.push(added.batch);
    }
  };

  for (const step of script) {
    now = step.t;
    if (step.request) {
      const result = tracker.observe(step.request, step.response!);
      const { turn } = result;
      records.push({
        kind: 'interaction',
        version: turn.version,
        ts: now,
        session: turn.session,
        turn: turn.turn,
        turnType: turn.turnType,
        messages: turn.messages,
        response: turn.response.text,
        tokenIds: [...turn.response.tokenIds],
        logprobs: [...turn.response.logprobs],
        startedAt: now,
        finishedAt: now,
      });
      handle(result.closed);
      ended.push(...result.ended.map((e) => `${e.session}:${e.reason}`));
    }
    if (step.sweep) {
      const events = tracker.sweep();
      handle(events.closed);
      ended.push(...events.ended.map((e) => `${e.session}:${e.reason}`));
    }
    if (step.end) {
      const events = tracker.endSession(step.end);
      handle(events.closed);
      ended.push(...events.ended.map((e) => `${e.session}:${e.reason}`));
    }
  }
  const last = buffer.flush();
  if (last) batches.push(last);
  return { closed, batches, records, teacherContexts, judgePrompts, ended, buffer, dropped };
}

describe('replay of a scripted three-session conversation', () => {
  const run = replay('combined');

  it('pairs each main turn with the right next state, in closing order', () => {
    expect(run.closed.map((c) => [`${c.session}#${c.turn}`, c.version, c.nextState, c.closedBy, c.closedAt])).toEqual([
      ['alice#1', 0, u('Show the steps please, no lists'), 'next-request', 30],
      ['bob#1', 0, tool('calendar: ok'), 'next-request', 50],
      ['alice#3', 0, u('Thanks, HOMEWORK_DONE'), 'next-request', 70],
      ['alice#4', 1, null, 'session-end', 70],
      ['bob#2', 1, null, 'timeout', 2000],
      ['carol#1', 0, null, 'timeout', 2000],
      ['carol#3', 1, null, 'session-end', 2200],
    ]);
    expect(run.ended).toEqual(['alice:explicit', 'bob:timeout', 'carol:timeout', 'carol:explicit']);
  });

  it('never turns side turns into samples, and drops the turns with neither a hint nor a nonzero r', () => {
    const sampled = run.batches.flatMap((b) => b.samples.map((s) => `${s.session}#${s.turn}`));
    expect(sampled).toEqual(['alice#1']);
    // bob#1 and alice#3 judged 0 without a usable hint; the others closed without a next state.
    expect(run.dropped).toEqual(['bob#1', 'alice#3', 'alice#4', 'bob#2', 'carol#1', 'carol#3']);
    expect([...sampled, ...run.dropped]).not.toContain('alice#2');
    expect([...sampled, ...run.dropped]).not.toContain('carol#2');
  });

  it('builds the exact samples: advantages, the OPD weight and versions', () => {
    const rows = run.batches.map((b) => ({
      index: b.index,
      versions: b.versions,
      trainable: b.trainable,
      samples: b.samples.map((s) => [`${s.session}#${s.turn}`, s.version, s.reward, s.advantages, s.opdWeight, s.judged, s.trainable, s.promoted]),
    }));
    expect(rows).toEqual([
      {
        index: 0,
        versions: [0],
        trainable: 1,
        // r = -1; OPD = teacher - student = [-0.125 + 0.25, -1 + 0.5] = [0.125, -0.5]
        samples: [['alice#1', 0, -1, [-0.875, -1.5], 1, true, true, false]],
      },
    ]);
    expect(run.buffer.stats()).toEqual({ added: 1, zeroAdvantage: 0, promoted: 0, masked: 0, batches: 1 });
  });

  it('conditions the teacher on the hint appended to the last user message', () => {
    expect(run.teacherContexts).toEqual({
      'alice#1': [sys, u(`Solve 2+2\n\n[user's hint / instruction]\n${HINT}`)],
    });
  });

  it('shows the judges the role of each next state', () => {
    expect(run.judgePrompts.filter((p) => p.includes('role: tool'))).toHaveLength(2);
    expect(run.judgePrompts.filter((p) => p.includes('role: user'))).toHaveLength(4);
  });

  it('writes records that pass the validator, each tagged with its version', () => {
    for (const [i, record] of run.records.entries()) {
      expect(validateRecord(JSON.parse(JSON.stringify(record)), `record ${i}`)).toEqual(record);
    }
    const interactions = run.records.filter((r) => r.kind === 'interaction');
    expect(interactions.map((r) => `${r.session}#${r.turn}:${r.turnType}@v${r.version}`)).toEqual([
      'alice#1:main@v0',
      'bob#1:main@v0',
      'alice#2:side@v0',
      'alice#3:main@v0',
      'carol#1:main@v0',
      'bob#2:main@v1',
      'carol#2:side@v1',
      'alice#4:main@v1',
      'carol#3:main@v1',
    ]);
    const samples = run.records.filter((r) => r.kind === 'sample');
    expect(samples.map((r) => `${r.session}#${r.turn}@v${r.version}:${r.trainable}`)).toEqual(['alice#1@v0:true']);
    expect(samples[0]).toMatchObject({
      reward: -1,
      advantages: { tokens: 2, mean: -1.1875, min: -1.5, max: -0.875, meanAbs: 1.1875, nonZero: 2 },
      perToken: [-0.875, -1.5],
      opdWeight: 1,
    });
    const results = run.records.filter((r) => r.kind === 'judge_result');
    expect(results.map((r) => `${r.session}#${r.turn}:${r.judge}=${r.score}/${r.accepted}`)).toEqual([
      'alice#1:binary=-1/true',
      'alice#1:hint=1/true',
      'bob#1:binary=0/false',
      'bob#1:hint=0/false',
      'alice#3:binary=0/false',
      'alice#3:hint=0/false',
    ]);
  });
});

describe('replay of the same conversation with the binary preset', () => {
  const run = replay('binary');

  it('builds the exact samples: advantages, masks, promotions and versions', () => {
    expect(run.dropped).toEqual([]);
    const rows = run.batches.map((b) => ({
      index: b.index,
      versions: b.versions,
      trainable: b.trainable,
      samples: b.samples.map((s) => [`${s.session}#${s.turn}`, s.version, s.reward, s.advantages, s.judged, s.trainable, s.promoted]),
    }));
    expect(rows).toEqual([
      {
        index: 0,
        versions: [0, 1],
        trainable: 2,
        samples: [
          // r = -1 on every token; the binary method ignores the hint
          ['alice#1', 0, -1, [-1, -1], true, true, false],
          // judged 0, bob has nothing trainable yet: promoted
          ['bob#1', 0, 0, [0, 0, 0], true, true, true],
          // judged 0, alice already has a trainable sample: masked
          ['alice#3', 0, 0, [0, 0, 0], true, false, false],
          // session ended before a next state
          ['alice#4', 1, null, [0], false, false, false],
        ],
      },
      {
        index: 1,
        versions: [0, 1],
        trainable: 0,
        samples: [
          ['bob#2', 1, null, [0, 0], false, false, false],
          ['carol#1', 0, null, [0], false, false, false],
          ['carol#3', 1, null, [0, 0], false, false, false],
        ],
      },
    ]);
    expect(run.buffer.stats()).toEqual({ added: 7, zeroAdvantage: 6, promoted: 1, masked: 5, batches: 2 });
  });

  it('writes sample records that pass the validator, with their loss masks', () => {
    const samples = run.records.filter((r) => r.kind === 'sample');
    for (const [i, record] of samples.entries()) expect(validateRecord(JSON.parse(JSON.stringify(record)), `sample ${i}`)).toEqual(record);
    expect(samples.map((r) => `${r.session}#${r.turn}@v${r.version}:${r.trainable}`)).toEqual([
      'alice#1@v0:true',
      'bob#1@v0:true',
      'alice#3@v0:false',
      'alice#4@v1:false',
      'bob#2@v1:false',
      'carol#1@v0:false',
      'carol#3@v1:false',
    ]);
    expect(samples.some((r) => r.opdWeight !== undefined)).toBe(false);
  });
});
