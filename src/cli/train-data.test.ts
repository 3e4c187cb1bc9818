/** The sample rows `nextstate train` reads back from `nextstate export --samples`, and what it refuses in them. */
import { describe, expect, it } from 'vitest';
import type { Policy } from '../gpu/policy';
import { parseTrainData, toTrainSample } from './train-data';

const row = {
  prompt: [{ role: 'user', content: 'Tell me a story.' }],
  completion: [{ role: 'assistant', content: 'Once.' }],
  reward: 1,
  advantages: [1, 0.5],
  opd_weight: 1,
  teacher_log_probs: [-0.1, -0.2],
  policy_version: 0,
  trainable: true,
  loss_mask: [1, 1],
  prompt_ids: [1, 5, 9],
  completion_ids: [11, 12],
  rollout_log_probs: [-0.25, -0.5],
  session: 's0',
  turn: 1,
};
const parse = (o: object) => parseTrainData(JSON.stringify(o), 'd.jsonl');

describe('train --data with exported sample rows', () => {
  it('reads what training needs and leaves the rest of the row', () => {
    expect(parse(row)).toEqual([
      {
        prompt: row.prompt,
        prompt_ids: [1, 5, 9],
        completion_ids: [11, 12],
        advantages: [1, 0.5],
        trainable: true,
        loss_mask: [1, 1],
        rollout_log_probs: [-0.25, -0.5],
        opd_weight: 1,
      },
    ]);
  });

  it.each([
    ['a mask that disagrees with trainable', { loss_mask: [0, 0] }, '"loss_mask" and "trainable" disagree'],
    ['a mask of another length', { loss_mask: [1, 0, 1] }, '"loss_mask" has 3 entries for 2 completion tokens'],
    ['advantages of another length', { advantages: [1] }, '"advantages" has 1 entries for 2 completion tokens'],
    ['an OPD term without rollout log-probs', { rollout_log_probs: undefined }, '"opd_weight" needs "rollout_log_probs"'],
    ['no prompt at all', { prompt: undefined, prompt_ids: undefined }, 'give "prompt_ids" (as export writes them) or "prompt"'],
    ['a token id that is not one', { completion_ids: [11, -2] }, 'd.jsonl:1: field "completion_ids[1]"'],
    [
      'a top-k set without its teacher log-probs',
      { opd_topk: { weight: 1, clip: 0, ids: [[11, 3], [12]], teacher_logprobs: [[-1], [-1]] } },
      '"opd_topk" set 0',
    ],
  ])('refuses %s, naming the line and field', (_name, change, message) => {
    expect(() => parse({ ...row, ...change })).toThrow(message);
  });

  it('reads a mask of 0s and 1s (a tool-call trajectory, its tool outputs at 0) as a per-token mask; all 1 or all 0 as the whole sample', () => {
    // Rows with prompt_ids never ask the policy to render.
    const policy = null as unknown as Policy;
    const [mixed] = parse({ ...row, opd_weight: undefined, loss_mask: [1, 0] });
    expect(toTrainSample(policy, mixed, 0)).toMatchObject({ completion: [11, 12], trainable: true, lossMask: [1, 0] });
    expect(toTrainSample(policy, parse(row)[0], 0)).not.toHaveProperty('lossMask');
    const masked = toTrainSample(policy, parse({ ...row, loss_mask: [0, 0], trainable: false })[0], 0);
    expect(masked).toMatchObject({ trainable: false });
    expect(masked).not.toHaveProperty('lossMask');
  });

  it('reads the reverse-KL term with its term, and sets of the whole vocabulary', () => {
    const every = Array.from({ length: 100 }, (_, i) => i);
    const opd_topk = { weight: 1, clip: 0, ids: [every, every], teacher_logprobs: [every.map(() => -4.6), every.map(() => -4.6)], term: 'reverse-kl' };
    expect(parse({ ...row, opd_weight: undefined, opd_topk })[0]).toMatchObject({ opd_topk });
    expect(() => parse({ ...row, opd_topk: { ...opd_topk, term: 'jensen-shannon' } })).toThrow('"opd_topk.term"');
  });

  it("reads a prompt with a served agent's tool calls, as export writes it", () => {
    const call = { id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } };
    const prompt = [...row.prompt, { role: 'assistant', content: '', tool_calls: [call] }, { role: 'tool', content: 'text', tool_call_id: 'c1' }];
    expect(parse({ ...row, prompt })[0]).toMatchObject({ prompt });
  });

  it('still reads text lines, and says what a line without a text prompt may be instead', () => {
    expect(parseTrainData('{"prompt": "p", "completion": " c", "advantage": 1}', 'd.jsonl')).toHaveLength(1);
    expect(() => parseTrainData('{"prompt": [], "completion": " c", "advantage": 1}', 'd.jsonl')).toThrow('or give "completion_ids"');
  });
});
