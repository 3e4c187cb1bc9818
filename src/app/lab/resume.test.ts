import { describe, expect, it } from 'vitest';
import type { InteractionRecord, RunRecord, SampleRecord } from '../../rl/records';
import type { ResumePoint } from '../../storage/index';
import { nextSessionIndex, resumePlan } from './resume';

const interaction = (session: string, turn: number, tokens: number[]): InteractionRecord => ({
  kind: 'interaction',
  version: 1,
  ts: 0,
  session,
  turn,
  turnType: 'main',
  messages: [{ role: 'user', content: `q ${session}` }],
  response: 'a',
  tokenIds: tokens,
  logprobs: tokens.map(() => -1),
  startedAt: 0,
  finishedAt: 0,
});
const sample = (session: string, turn: number, perToken: number[], trainable = true): SampleRecord => ({
  kind: 'sample',
  version: 1,
  ts: 0,
  session,
  turn,
  trainable,
  promoted: false,
  reward: 1,
  advantages: { tokens: perToken.length, mean: 1, min: 1, max: 1, meanAbs: 1, nonZero: perToken.length },
  perToken,
});

/** A log saved through step `lastStep` at version `lastStep`, with `buffered` samples not yet trained on. */
const savedAt = (lastStep: number, throughSeq: number, buffered: ResumePoint['buffered']): ResumePoint => ({
  lastStep,
  nextStep: lastStep + 1,
  version: lastStep,
  adapter: null,
  throughSeq,
  buffered,
});

describe('resume plan', () => {
  it('numbers new sessions after the highest one in the log', () => {
    const records: RunRecord[] = [interaction('s0', 1, [1]), interaction('s11', 1, [1]), interaction('s3', 2, [1])];
    expect(nextSessionIndex(records)).toBe(12);
    expect(nextSessionIndex([])).toBe(0);
  });

  it('rebuilds waiting samples from their sample record and interaction, keeping the loss mask', () => {
    const a = interaction('s2', 1, [5, 6]);
    const point = savedAt(3, 40, [
      { sample: { seq: 41, record: sample('s2', 1, [0.5, 0.5], false) }, interaction: { seq: 30, record: a } },
      { sample: { seq: 42, record: sample('s2', 2, [1]) }, interaction: null },
    ]);
    const plan = resumePlan(point, [a]);
    expect(plan).toMatchObject({ step: 3, version: 3, sessionsStarted: 3, dropped: 1 });
    expect(plan.samples).toEqual([
      {
        session: 's2',
        turn: 1,
        version: 1,
        messages: a.messages,
        response: { text: 'a', tokenIds: [5, 6], logprobs: [-1, -1] },
        nextState: null,
        reward: 1,
        advantages: [0.5, 0.5],
        opdWeight: 0,
        judged: true,
        trainable: false,
        promoted: false,
      },
    ]);
  });

  it('keeps the OPD weight a sample was logged with, so the trainer re-bases it again', () => {
    const a = interaction('s0', 1, [5, 6]);
    const point = savedAt(1, 9, [{ sample: { seq: 8, record: { ...sample('s0', 1, [0.5, 0.5]), opdWeight: 0.5 } }, interaction: { seq: 7, record: a } }]);
    expect(resumePlan(point, [a]).samples.map((s) => s.opdWeight)).toEqual([0.5]);
  });

  it('keeps a clipped OPD term and its teacher log-probs, so the trainer clips it again', () => {
    const a = interaction('s0', 1, [5, 6]);
    const opdClip = { clip: 1, teacherLogp: [-0.5, -2] };
    const point = savedAt(1, 9, [{ sample: { seq: 8, record: { ...sample('s0', 1, [0.5, -1]), opdWeight: 1, opdClip } }, interaction: { seq: 7, record: a } }]);
    expect(resumePlan(point, [a]).samples.map((s) => s.opdClip)).toEqual([opdClip]);
  });

  it('starts from step 0 when no step was saved', () => {
    const point: ResumePoint = { lastStep: null, nextStep: 0, version: 0, adapter: null, throughSeq: 0, buffered: [] };
    expect(resumePlan(point, [])).toMatchObject({ step: 0, version: 0, sessionsStarted: 0, samples: [] });
  });
});
