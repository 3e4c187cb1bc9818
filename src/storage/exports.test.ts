import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../rl';
import { recordsJsonl, SampleJoiner, toJsonl, trainingSampleRowChecker, trainingSamples } from './exports';
import { sampleRun, turnRecords } from '../../test/support/storage/fixtures';

describe('trainingSamples', () => {
  it('joins every sample with its main-turn interaction into TRL-style rows', () => {
    const { rows, unmatched } = trainingSamples(sampleRun());
    expect(unmatched).toEqual([]);
    expect(rows.map((r) => `${r.session}#${r.turn}@v${r.policy_version}`)).toEqual(['alice#1@v0', 'bob#1@v0', 'alice#2@v1', 'bob#2@v1', 'alice#3@v2']);
    expect(rows[0]).toEqual({
      prompt: [
        { role: 'system', content: 'You are a tutor.' },
        { role: 'user', content: 'Solve 2+2 Two plus two is four.' },
      ],
      completion: [{ role: 'assistant', content: 'Two plus two is four.' }],
      reward: 1,
      advantages: [1, 1.5],
      policy_version: 0,
      trainable: true,
      loss_mask: [1, 1],
      completion_ids: [11, 12],
      rollout_log_probs: [-0.25, -0.5],
      session: 'alice',
      turn: 1,
    });
  });

  it('writes rows that their one definition (the row checker) accepts as they are', () => {
    const withTools = trainingSamples(sampleRun(), { tools: [{ type: 'function', function: { name: 'read' } }] }).rows;
    for (const row of [...trainingSamples(sampleRun()).rows, ...withTools]) expect(trainingSampleRowChecker(JSON.parse(JSON.stringify(row)), '')).toEqual(row);
  });

  it('carries the prompt ids the policy read, and the loss mask per token', () => {
    const records = turnRecords('p', 1, 0, 1).map((r) =>
      r.kind === 'interaction' ? { ...r, promptIds: [1, 7, 9] } : r.kind === 'sample' ? { ...r, trainable: false } : r,
    );
    const [row] = trainingSamples(records).rows;
    expect(row).toMatchObject({ prompt_ids: [1, 7, 9], completion_ids: [11, 12], loss_mask: [0, 0], trainable: false });
    expect(trainingSamples(sampleRun()).rows.every((r) => !('prompt_ids' in r))).toBe(true);
  });

  it("gives a sample with an OPD term its teacher's log-probs: the hint judge's, or the rollout's where no hint was accepted", () => {
    const withTeacher = turnRecords('t', 1, 0, 1).map((r) =>
      r.kind === 'judge_result' && r.judge === 'hint' ? { ...r, teacherLogp: [-0.1, -0.2] } : r.kind === 'sample' ? { ...r, opdWeight: 1 } : r,
    );
    expect(trainingSamples(withTeacher).rows[0].teacher_log_probs).toEqual([-0.1, -0.2]);
    const noHint = turnRecords('u', 1, 0, 1).map((r) =>
      r.kind === 'judge_result' && r.judge === 'hint'
        ? { ...r, accepted: false, hint: null, teacherLogpCount: 0 }
        : r.kind === 'sample'
          ? { ...r, opdWeight: 1 }
          : r,
    );
    expect(trainingSamples(noHint).rows[0].teacher_log_probs).toEqual([-0.25, -0.5]);
    expect(trainingSamples(sampleRun()).rows.every((r) => !('teacher_log_probs' in r))).toBe(true);
  });

  it('carries the top-k OPD term', () => {
    const opdTopK = {
      weight: 1,
      clip: 1,
      ids: [
        [11, 3],
        [12, 4],
      ],
      teacherLogp: [
        [-0.1, -2],
        [-0.3, -1],
      ],
    };
    const records = turnRecords('k', 1, 0, 1).map((r) => (r.kind === 'sample' ? { ...r, opdTopK } : r));
    expect(trainingSamples(records).rows[0].opd_topk).toEqual({ weight: 1, clip: 1, ids: opdTopK.ids, teacher_logprobs: opdTopK.teacherLogp });
    // The reverse-KL term keeps its form.
    const reverseKl = turnRecords('k', 1, 0, 1).map((r) =>
      r.kind === 'sample' ? { ...r, opdTopK: { ...opdTopK, clip: 0, term: 'reverse-kl-tail' as const } } : r,
    );
    expect(trainingSamples(reverseKl).rows[0].opd_topk).toMatchObject({ clip: 0, term: 'reverse-kl-tail' });
  });

  it('never uses side turns and can keep only trainable samples', () => {
    const side = turnRecords('carol', 1, 0, 5).map((r) => (r.kind === 'interaction' ? { ...r, turnType: 'side' as const } : r));
    const masked = turnRecords('dave', 1, 0, 6).map((r) => (r.kind === 'sample' ? { ...r, trainable: false } : r));
    const { rows, unmatched } = trainingSamples([...side, ...masked], { trainableOnly: true });
    expect(rows).toEqual([]);
    expect(unmatched).toEqual(['carol#1']);
    expect(trainingSamples(masked).rows.map((r) => r.trainable)).toEqual([false]);
  });

  it('reports samples whose interaction came later or never', () => {
    const [interaction, ...rest] = turnRecords('eve', 2, 0, 1);
    expect(trainingSamples([...rest, interaction]).unmatched).toEqual(['eve#2']);
  });

  it('adds the tools the prompts were rendered with, as copies, only when given', () => {
    const tool = { type: 'function', function: { name: 'calculator', parameters: { type: 'object' } } };
    const { rows } = trainingSamples(sampleRun(), { tools: [tool] });
    expect(rows.every((r) => JSON.stringify(r.tools) === JSON.stringify([tool]))).toBe(true);
    rows[0].tools!.push({});
    expect(rows[1].tools).toHaveLength(1);
    expect(trainingSamples(sampleRun()).rows.every((r) => !('tools' in r))).toBe(true);
  });

  it('carries the OPD weight of a sample whose advantages hold an OPD term, for an offline trainer to re-base', () => {
    const records = turnRecords('g', 1, 0, 1).map((r) => (r.kind === 'sample' ? { ...r, opdWeight: 0.5 } : r));
    expect(trainingSamples(records).rows[0].opd_weight).toBe(0.5);
    expect(trainingSamples(sampleRun()).rows.every((r) => !('opd_weight' in r))).toBe(true);
  });

  it('carries a clipped OPD term with its teacher log-probs (top-k hint selection)', () => {
    const records = turnRecords('g', 1, 0, 1).map((r) =>
      r.kind === 'sample' ? { ...r, opdWeight: 1, opdClip: { clip: 1, teacherLogp: r.perToken.map(() => -0.5) } } : r,
    );
    const [row] = trainingSamples(records).rows;
    expect(row.opd_clip).toEqual({ clip: 1, teacher_logprobs: row.advantages.map(() => -0.5) });
    expect(trainingSamples(sampleRun()).rows.every((r) => !('opd_clip' in r))).toBe(true);
  });

  it('joins one record at a time, for logs read from a stream', () => {
    const joiner = new SampleJoiner();
    const out = sampleRun()
      .map((r) => joiner.push(r))
      .filter((r) => r !== null);
    expect(out).toHaveLength(5);
  });

  it('copies rather than aliases the records', () => {
    const records = turnRecords('f', 1, 0, 1);
    const [row] = trainingSamples(records).rows;
    row.advantages[0] = 99;
    row.prompt[0].content = 'changed';
    expect((records[5] as Extract<RunRecord, { kind: 'sample' }>).perToken[0]).toBe(1);
    expect((records[0] as Extract<RunRecord, { kind: 'interaction' }>).messages[0].content).toBe('You are a tutor.');
  });
});

describe('JSONL', () => {
  it('writes one compact JSON value per line', () => {
    const records = sampleRun();
    const text = recordsJsonl(records);
    expect(text.endsWith('\n')).toBe(true);
    expect(
      text
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l)),
    ).toEqual(records);
    expect(toJsonl([{ a: '<b>\n</b>' }, 1, 'x'])).toBe('{"a":"<b>\\n</b>"}\n1\n"x"\n');
    expect(toJsonl([])).toBe('');
  });
});
