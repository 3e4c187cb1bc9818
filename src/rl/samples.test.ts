import { describe, it, expect } from 'vitest';
import { LengthMismatchError } from './errors';
import { SampleBuffer } from './buffer';
import type { MethodName } from './presets';
import { assembleSample, sampleRecord, type PolicyResponse, type TurnJudgement } from './samples';
import type { ClosedTurn } from './sessions';
import { validateRecord } from './validate';

const turn = (judged: boolean): ClosedTurn<PolicyResponse> => ({
  session: 's',
  turn: 3,
  turnType: 'main',
  version: 2,
  messages: [{ role: 'user', content: 'q' }],
  response: { text: 'ab', tokenIds: [5, 6], logprobs: [-0.5, -0.25] },
  at: 10,
  nextState: judged ? { role: 'user', content: 'redo' } : null,
  closedBy: judged ? 'next-request' : 'session-end',
  closedAt: 20,
});

describe('assembleSample', () => {
  const w = { binary: 1, opd: 1 };
  const cases: [string, MethodName, boolean, TurnJudgement, number[] | null, number | null][] = [
    ['binary: reward on every token', 'binary', true, { reward: -1, opd: null }, [-1, -1], -1],
    ['binary ignores OPD', 'binary', true, { reward: 1, opd: [5, 5] }, [1, 1], 1],
    ['binary, unjudged: zeros', 'binary', false, { reward: null, opd: null }, [0, 0], null],
    ['opd with a hint', 'opd', true, { reward: 1, opd: [0.5, -0.25] }, [0.5, -0.25], null],
    ['opd without a hint: no sample', 'opd', true, { reward: 1, opd: null }, null, null],
    ['combined with a hint', 'combined', true, { reward: -1, opd: [0.5, -0.25] }, [-0.5, -1.25], -1],
    ['combined without a hint', 'combined', true, { reward: 1, opd: null }, [1, 1], 1],
    // The reference's combine server submits nothing for a turn with neither signal.
    ['combined without a hint and r = 0: no sample', 'combined', true, { reward: 0, opd: null }, null, null],
    ['combined, unjudged: no sample', 'combined', false, { reward: null, opd: null }, null, null],
    ['combined with a hint and r = 0', 'combined', true, { reward: 0, opd: [0.5, -0.25] }, [0.5, -0.25], 0],
  ];
  it.each(cases)('%s', (_name, method, judged, judgement, advantages, reward) => {
    const sample = assembleSample(turn(judged), judgement, method, w);
    if (advantages === null) {
      expect(sample).toBeNull();
      return;
    }
    expect(sample).toMatchObject({ session: 's', turn: 3, version: 2, advantages, reward, judged });
  });

  it('carries w_opd exactly where the advantages hold an OPD term, for the trainer to re-base', () => {
    const weights = { binary: 1, opd: 0.5 };
    expect(assembleSample(turn(true), { reward: 1, opd: [1, 1] }, 'combined', weights)!.opdWeight).toBe(0.5);
    expect(assembleSample(turn(true), { reward: 1, opd: [1, 1] }, 'opd', weights)!.opdWeight).toBe(0.5);
    // Without a hint the rollout is the teacher (the reference's combine server): A^OPD = 0 as
    // judged, and the trainer's re-basing makes it w_opd * (rollout - old).
    const unhinted = assembleSample(turn(true), { reward: 1, opd: null }, 'combined', weights)!;
    expect(unhinted).toMatchObject({ advantages: [1, 1], opdWeight: 0.5 });
    expect(unhinted.opdClip).toBeUndefined();
    expect(assembleSample(turn(true), { reward: 1, opd: [1, 1] }, 'binary', weights)!.opdWeight).toBe(0);
  });

  it('refuses OPD advantages that do not cover the response', () => {
    expect(() => assembleSample(turn(true), { reward: 0, opd: [1] }, 'combined', w)).toThrow(LengthMismatchError);
  });

  it('makes a valid sample record', () => {
    const sample = assembleSample(turn(true), { reward: -1, opd: [0.5, -0.25] }, 'combined', w)!;
    const record = sampleRecord({ ...sample, trainable: true, promoted: false }, 30);
    expect(record).toEqual({
      kind: 'sample',
      version: 2,
      ts: 30,
      session: 's',
      turn: 3,
      trainable: true,
      promoted: false,
      reward: -1,
      advantages: { tokens: 2, mean: -0.875, min: -1.25, max: -0.5, meanAbs: 0.875, nonZero: 2 },
      perToken: [-0.5, -1.25],
      opdWeight: 1,
    });
    expect(validateRecord(JSON.parse(JSON.stringify(record)), 'test')).toEqual(record);
  });

  it('carries a clipped OPD term with its teacher log-probs into the sample and its record (top-k selection)', () => {
    const judgement: TurnJudgement = { reward: 1, opd: [1, -0.5], opdClip: { clip: 1, teacherLogp: [0.5, -0.75] } };
    const sample = assembleSample(turn(true), judgement, 'combined', w)!;
    expect(sample.opdClip).toEqual({ clip: 1, teacherLogp: [0.5, -0.75] });
    const record = sampleRecord({ ...sample, trainable: true, promoted: false }, 30);
    expect(record.opdClip).toEqual({ clip: 1, teacherLogp: [0.5, -0.75] });
    expect(validateRecord(JSON.parse(JSON.stringify(record)), 'test')).toEqual(record);
    // Binary keeps no OPD term, so nothing to clip.
    expect(assembleSample(turn(true), judgement, 'binary', w)!.opdClip).toBeUndefined();
  });

  it('carries the top-k OPD term beside advantages that keep only the binary part, into a valid record', () => {
    const opdTopK = {
      clip: 1,
      ids: [
        [5, 7],
        [6, 2],
      ],
      teacherLogp: [
        [-0.1, -2],
        [-0.3, -1.5],
      ],
    };
    const judgement: TurnJudgement = { reward: -1, opd: [0.5, -0.25], opdTopK };
    const sample = assembleSample(turn(true), judgement, 'combined', { binary: 1, opd: 0.5 })!;
    expect(sample).toMatchObject({ advantages: [-1, -1], opdWeight: 0, opdTopK: { ...opdTopK, weight: 0.5 } });
    opdTopK.ids[0][0] = 99;
    expect(sample.opdTopK!.ids[0][0]).toBe(5);
    const record = sampleRecord({ ...sample, trainable: true, promoted: false }, 30);
    expect(record.opdTopK).toEqual(sample.opdTopK);
    expect(record).not.toHaveProperty('opdWeight');
    expect(validateRecord(JSON.parse(JSON.stringify(record)), 'test')).toEqual(record);
    const bad = { ...record, opdTopK: { ...record.opdTopK!, teacherLogp: [[-0.1], [-0.3, -1.5]] } };
    expect(() => validateRecord(JSON.parse(JSON.stringify(bad)), 'test')).toThrow(/opdTopK\.teacherLogp/);
    // Without a hint there is no OPD term of either kind.
    expect(assembleSample(turn(true), { reward: 1, opd: null, opdTopK }, 'combined', w)!.opdTopK).toBeUndefined();
    expect(() => assembleSample(turn(true), { ...judgement, opdTopK: { ...opdTopK, ids: [[1]] } }, 'combined', w)).toThrow(LengthMismatchError);
  });

  it('carries the reverse-KL term and its form into the sample and a valid record, with sets of the whole vocabulary', () => {
    const every = Array.from({ length: 100 }, (_, i) => i);
    const opdTopK = { clip: 0, term: 'reverse-kl' as const, ids: [every, every], teacherLogp: [every.map(() => -4.6), every.map(() => -4.6)] };
    const sample = assembleSample(turn(true), { reward: null, opd: [0.5, -0.25], opdTopK }, 'opd', { binary: 0, opd: 1 })!;
    expect(sample).toMatchObject({ advantages: [0, 0], opdWeight: 0, opdTopK: { ...opdTopK, weight: 1 } });
    const record = sampleRecord({ ...sample, trainable: true, promoted: false }, 30);
    expect(record.opdTopK).toEqual(sample.opdTopK);
    expect(validateRecord(JSON.parse(JSON.stringify(record)), 'test')).toEqual(record);
    // More than 64 ids per set is the whole vocabulary of the reverse KL only.
    const { term: _, ...untermed } = record.opdTopK!;
    expect(() => validateRecord(JSON.parse(JSON.stringify({ ...record, opdTopK: untermed })), 'test')).toThrow(/opdTopK\.ids.*more than 64 only/);
    expect(() => validateRecord(JSON.parse(JSON.stringify({ ...record, opdTopK: { ...record.opdTopK, term: 'jensen-shannon' } })), 'test')).toThrow(
      /opdTopK\.term/,
    );
  });

  it('makes every hinted OPD sample of a session trainable under the top-k term, whose advantages are all zero', () => {
    // Method "opd" with the top-k term: the advantages keep only w_binary * r = 0, and the term
    // travels beside them. The buffer's zero-advantage rule must not read that as "nothing to learn".
    const opdTopK = {
      clip: 1,
      ids: [
        [5, 7],
        [6, 2],
      ],
      teacherLogp: [
        [-0.1, -2],
        [-0.3, -1.5],
      ],
    };
    const buffer = new SampleBuffer<NonNullable<ReturnType<typeof assembleSample>>>({ batchSize: 4 });
    const tagged = [3, 4, 5, 6].map((n) => {
      const sample = assembleSample({ ...turn(true), turn: n }, { reward: null, opd: [0.5, -0.25], opdTopK }, 'opd', { binary: 0, opd: 1 })!;
      expect(sample.advantages).toEqual([0, 0]);
      return buffer.add(sample).sample;
    });
    expect(tagged.map((x) => x.trainable)).toEqual([true, true, true, true]);
    expect(tagged.map((x) => x.promoted)).toEqual([false, false, false, false]);
    expect(buffer.stats()).toMatchObject({ zeroAdvantage: 0, masked: 0, promoted: 0 });
  });
});
