import { describe, expect, it } from 'vitest';
import type { InteractionRecord, JudgeResultRecord, RunRecord, RuntimeEventRecord, SampleRecord, SessionEndRecord, ToolStepRecord } from '../rl/records';
import { interruptedTurns, lastResume, nextSessionIndex, resumeMessage, sessionIndexOf } from './resume-plan';

const interaction = (session: string, turn: number, turnType: 'main' | 'side' = 'main'): InteractionRecord => ({
  kind: 'interaction',
  version: 1,
  ts: 0,
  session,
  turn,
  turnType,
  messages: [{ role: 'user', content: 'q' }],
  response: 'a',
  tokenIds: [1],
  logprobs: [-1],
  startedAt: 0,
  finishedAt: 0,
});
const judged = (session: string, turn: number): JudgeResultRecord => ({
  kind: 'judge_result',
  version: 1,
  ts: 0,
  session,
  turn,
  judge: 'hint',
  score: 0,
  accepted: false,
  hint: null,
  teacherLogpCount: 0,
});
const sample = (session: string, turn: number, lossMask?: number[]): SampleRecord => ({
  kind: 'sample',
  version: 1,
  ts: 0,
  session,
  turn,
  trainable: true,
  promoted: false,
  reward: 1,
  advantages: { tokens: lossMask?.length ?? 1, mean: 1, min: 1, max: 1, meanAbs: 1, nonZero: 1 },
  perToken: lossMask ? lossMask.map(() => 1) : [1],
  ...(lossMask ? { lossMask } : {}),
});
const ended = (session: string, unjudgedTurn: number): SessionEndRecord => ({
  kind: 'session_end',
  version: 1,
  ts: 0,
  session,
  reason: 'explicit',
  turns: unjudgedTurn,
  mainTurns: unjudgedTurn,
  unjudgedTurn,
});
const toolStep = (session: string, turn: number): ToolStepRecord => ({
  kind: 'tool_step',
  version: 1,
  ts: 0,
  session,
  turn,
  group: session.split('.')[0],
  problem: 'p',
  stepIndex: turn - 1,
  final: false,
  toolResults: ['1'],
  outcome: 1,
  mode: 'integrated',
  votes: [1],
  raw: ['\\boxed{1}'],
  reward: 1,
  advantage: null,
});
const resumed = (step: number, interrupted: RuntimeEventRecord['interrupted']): RuntimeEventRecord => ({
  kind: 'runtime_event',
  version: step,
  ts: 0,
  step,
  event: 'run_resumed',
  message: 'resumed',
  interrupted,
});

/**
 * Sessions s0 to s4 of a personal run, stopped mid-step: s0 buffered its samples; s1 was judged
 * with no sample; s2 buffered its first turn's sample, and the stop came before its second's;
 * s3 was judged but its samples never reached the buffer; s4's first turn awaited its judge,
 * and its second never got a next state.
 */
const stopped: RunRecord[] = [
  interaction('student-work', 1, 'side'),
  interaction('s0', 1),
  interaction('s1', 1),
  interaction('s0', 2),
  judged('s0', 1),
  judged('s1', 1),
  judged('s0', 2),
  interaction('s1', 2),
  judged('s1', 2),
  sample('s0', 1),
  sample('s0', 2),
  interaction('s2', 1),
  interaction('s3', 1),
  interaction('s2', 2),
  judged('s2', 1),
  judged('s2', 2),
  sample('s2', 1),
  interaction('s3', 2),
  judged('s3', 1),
  judged('s3', 2),
  interaction('s4', 1),
  interaction('s4', 2),
  ended('s4', 2),
];

describe('session indices', () => {
  it("reads a loop's session names, a homework's earlier phases included, and nothing else", () => {
    expect(['s12', 's3.student', 'g4.r2', 'conv-1', 'student-work', 's1x', 'g1'].map(sessionIndexOf)).toEqual([12, 3, 4, null, null, null, null]);
    // A homework stopped in its first phase left no s7: the resumed run must not name a session s7 again.
    expect(nextSessionIndex([interaction('s2', 1), interaction('s7.student', 1)])).toBe(8);
  });
});

describe('the turns a resumed run leaves behind', () => {
  it('under a fixed schedule: the turns after the last buffered sample, judged or not', () => {
    expect(interruptedTurns(stopped, { fixed: true })).toEqual([
      { session: 's3', turns: [1, 2] },
      { session: 's2', turns: [2] },
      { session: 's4', turns: [1] },
    ]);
  });

  it('running free: the turns no judge settled', () => {
    expect(interruptedTurns(stopped, { fixed: false })).toEqual([{ session: 's4', turns: [1] }]);
  });

  it('never a turn the run goes on with, nor one an earlier resume marked', () => {
    expect(interruptedTurns(stopped, { fixed: true, goesOn: (session) => session !== 's3' })).toEqual([{ session: 's3', turns: [1, 2] }]);
    const again = [
      ...stopped,
      resumed(1, [
        { session: 's3', turns: [1, 2] },
        { session: 's2', turns: [2] },
      ]),
      interaction('s5', 1),
    ];
    expect(interruptedTurns(again, { fixed: true })).toEqual([
      { session: 's4', turns: [1] },
      { session: 's5', turns: [1] },
    ]);
  });

  it("tool-call groups: a trajectory's one sample settles its every step, a scored group not yet buffered is cut off", () => {
    const records: RunRecord[] = [
      ...[1, 2, 3].map((t) => interaction('g0.r0', t)),
      ...[1, 2, 3].map((t) => toolStep('g0.r0', t)),
      sample('g0.r0', 1, [1, 0, 1, 0, 1]),
      ...[1, 2].map((t) => interaction('g1.r0', t)),
      ...[1, 2].map((t) => toolStep('g1.r0', t)),
    ];
    expect(interruptedTurns(records, { fixed: true })).toEqual([{ session: 'g1.r0', turns: [1, 2] }]);
  });

  it('says in one line what went on and what was left behind', () => {
    const base = { step: 5, version: 5, samples: 3, dropped: 0, goesOn: null };
    expect(resumeMessage({ ...base, interrupted: [{ session: 's9', turns: [1, 2] }] })).toBe(
      'resumed at step 5 (v5) with 3 buffered samples; 2 turns of the interrupted step 6 kept, marked interrupted, never trained (1 session)',
    );
    expect(resumeMessage({ ...base, samples: 1, dropped: 1, interrupted: [] })).toBe(
      'resumed at step 5 (v5) with 1 buffered sample; 1 buffered sample left out (its interaction is missing from the log); no turn of the interrupted step 6 was left behind',
    );
    expect(resumeMessage({ ...base, goesOn: '1 turn waiting for their next state and 0 to judge again', interrupted: null })).toBe(
      'resumed at step 5 (v5) with 3 buffered samples, 1 turn waiting for their next state and 0 to judge again',
    );
  });

  it("finds the log's last resume", () => {
    expect(lastResume(stopped)).toBeUndefined();
    const second = resumed(2, []);
    expect(lastResume([resumed(1, []), ...stopped, second])).toBe(second);
  });
});
