/**
 * The slime and Tinker shapes against readers written from the reference's field definitions:
 * slime's Sample dataclass and its from_dict (slime/utils/types.py), with the fields OpenClaw's
 * servers set, and Tinker's Datum, EncodedTextChunk and TensorData with the convention of
 * openclaw-tinker/data_formatter.py.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../rl';
import { turnRecords } from '../../test/support/storage/fixtures';
import { trainingSamples, type TrainingSampleRow } from './exports';
import { SampleShapeError, samplesAs, slimeSample, tinkerDatum } from './export-shapes';

/** Sample's dataclass fields; from_dict keeps these and sets any other key as an attribute. */
const SLIME_FIELDS = new Set([
  'group_index',
  'index',
  'prompt',
  'tokens',
  'multimodal_inputs',
  'multimodal_train_inputs',
  'response',
  'response_length',
  'label',
  'reward',
  'loss_mask',
  'weight_versions',
  'rollout_log_probs',
  'rollout_routed_experts',
  'remove_sample',
  'status',
  'metadata',
  'generate_function_path',
  'train_metadata',
  'non_generation_time',
  'spec_info',
  'prefix_cache_info',
]);
const SLIME_STATUSES = new Set(['pending', 'completed', 'truncated', 'aborted', 'failed']);

/** What a slime trainer reads of a Sample dict (reward by --reward-key score). */
function readSlime(line: string) {
  const d = JSON.parse(line) as Record<string, unknown>;
  if (!SLIME_STATUSES.has(d.status as string)) throw new Error(`status ${String(d.status)} is not a Sample.Status`);
  const extra = Object.keys(d).filter((k) => !SLIME_FIELDS.has(k));
  const tokens = d.tokens as number[];
  const n = d.response_length as number;
  const lossMask = d.loss_mask as number[];
  const rollout = d.rollout_log_probs as number[];
  if (!Number.isInteger(n) || n < 1 || n > tokens.length) throw new Error('response_length must count the response at the end of tokens');
  if (lossMask.length !== n || rollout.length !== n) throw new Error('loss_mask and rollout_log_probs cover the response tokens');
  const teacher = d.teacher_log_probs as number[] | undefined;
  if (teacher && teacher.length !== n) throw new Error('teacher_log_probs cover the response tokens');
  return {
    prompt: tokens.slice(0, tokens.length - n),
    response: tokens.slice(tokens.length - n),
    lossMask,
    rollout,
    score: (d.reward as { score: number }).score,
    teacher,
    extra,
  };
}

/** A Tinker Datum read the way data_formatter.py builds it. */
function readTinker(line: string) {
  const d = JSON.parse(line);
  const chunks = d.model_input.chunks as { type: string; tokens: number[] }[];
  if (chunks.some((c) => c.type !== 'encoded_text')) throw new Error('a text model input is EncodedTextChunks');
  const input = chunks.flatMap((c) => c.tokens);
  const tensor = (name: string, dtype: string) => {
    const t = d.loss_fn_inputs[name] as { data: number[]; dtype: string; shape: number[] };
    if (t.dtype !== dtype) throw new Error(`${name} is ${t.dtype}, not ${dtype}`);
    if (t.shape.length !== 1 || t.shape[0] !== t.data.length || t.data.length !== input.length) throw new Error(`${name} has one value per input position`);
    return t.data;
  };
  return { input, target: tensor('target_tokens', 'int64'), logprobs: tensor('logprobs', 'float32'), advantages: tensor('advantages', 'float32') };
}

const lines = (values: unknown[]) => values.map((v) => JSON.stringify(v));

function rows(extra: (r: RunRecord) => RunRecord = (r) => r): TrainingSampleRow[] {
  const records = [...turnRecords('a', 1, 0, 1), ...turnRecords('b', 1, 0, 2)]
    .map((r) => (r.kind === 'interaction' ? { ...r, promptIds: r.session === 'a' ? [1, 7, 9] : [2] } : r))
    .map((r) => (r.kind === 'sample' && r.session === 'b' ? { ...r, trainable: false } : r))
    .map(extra);
  return trainingSamples(records).rows;
}

describe("slime's Sample", () => {
  it('reads back as the row: prompt and response ids, loss mask, rollout log-probs and the reward', () => {
    const rs = rows();
    const read = lines(samplesAs(rs, 'slime')).map(readSlime);
    read.forEach((s, i) => {
      expect(s.prompt).toEqual(rs[i].prompt_ids);
      expect(s.response).toEqual(rs[i].completion_ids);
      expect(s.lossMask).toEqual(rs[i].loss_mask);
      expect(s.rollout).toEqual(rs[i].rollout_log_probs);
      expect(s.score).toBe(rs[i].reward);
      expect(s.extra).toEqual([]);
    });
    expect(read[1].lossMask).toEqual([0, 0]);
    expect(slimeSample(rs[1], 1)).toMatchObject({ index: 1, group_index: 1, status: 'completed', response: 'Two plus two is four.' });
  });

  it('carries the teacher log-probs the reference OPD and Combined servers set, and a reward of 0 without a judge', () => {
    const rs = rows((r) =>
      r.kind === 'sample' ? { ...r, opdWeight: 1, reward: null } : r.kind === 'judge_result' && r.judge === 'hint' ? { ...r, teacherLogp: [-0.1, -0.2] } : r,
    );
    const [s] = lines(samplesAs(rs, 'slime')).map(readSlime);
    expect(s.teacher).toEqual([-0.1, -0.2]);
    expect(s.extra).toEqual(['teacher_log_probs']);
    expect(s.score).toBe(0);
  });
});

describe("Tinker's Datum", () => {
  it('reads back as data_formatter.py builds it: inputs and targets shifted by one, prompt positions zero', () => {
    const rs = rows();
    const read = lines(samplesAs(rs, 'tinker')).map(readTinker);
    read.forEach((d, i) => {
      const all = [...rs[i].prompt_ids!, ...rs[i].completion_ids];
      expect(d.input).toEqual(all.slice(0, -1));
      expect(d.target).toEqual(all.slice(1));
      const p = rs[i].prompt_ids!.length - 1;
      expect(d.logprobs.slice(0, p).every((x) => x === 0)).toBe(true);
      expect(d.advantages.slice(0, p).every((x) => x === 0)).toBe(true);
      expect(d.logprobs.slice(p)).toEqual(rs[i].rollout_log_probs);
      expect(d.advantages.slice(p)).toEqual(rs[i].advantages.map((a, t) => a * rs[i].loss_mask[t]));
    });
    // The masked sample trains nothing: its response advantages are 0.
    expect(read[1].advantages).toEqual([0, 0]);
    expect(read[0].advantages).toEqual([0, 0, 1, 1.5]);
  });
});

describe('shapes that cannot carry a sample', () => {
  it('refuse a sample without prompt ids and one with a top-k OPD term, saying which shape can', () => {
    const [plain] = trainingSamples(turnRecords('s', 1, 0, 1)).rows;
    expect(() => tinkerDatum(plain)).toThrow(SampleShapeError);
    expect(() => slimeSample(plain, 0)).toThrow(/export --format trl/);
    const [topk] = rows((r) => (r.kind === 'sample' ? { ...r, opdTopK: { weight: 1, clip: 1, ids: [[11], [12]], teacherLogp: [[-1], [-1]] } } : r));
    expect(() => slimeSample(topk, 0)).toThrow(/top-k OPD term/);
    expect(() => tinkerDatum(topk)).toThrow(/top-k OPD term/);
    expect(samplesAs([plain], 'trl')).toEqual([plain]);
  });
});
