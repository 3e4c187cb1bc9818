/**
 * Training samples in the shapes the reference's two trainers read, so that a run recorded in
 * a tab can be trained on a cluster:
 * - slime's `Sample` (slime/utils/types.py, as `Sample.to_dict` writes it and `Sample.from_dict`
 *   reads it back): tokens = prompt + response ids, response_length, loss_mask and
 *   rollout_log_probs over the response, reward {"score": r} (the reference runs read
 *   `--reward-key score`), and the reference's OPD servers' `teacher_log_probs` beside them;
 * - Tinker's `Datum` (openclaw-tinker/data_formatter.py): model_input = all tokens but the last,
 *   and loss_fn_inputs target_tokens (all but the first), logprobs and advantages, each over those
 *   T positions with 0 on the prompt's, as TensorData {data, dtype, shape}.
 * Both need the prompt's token ids, which a run records where its policy ran in the lab.
 */
import type { TrainingSampleRow } from './exports';

export const SAMPLE_FORMATS = ['trl', 'slime', 'tinker'] as const;
export type SampleFormat = (typeof SAMPLE_FORMATS)[number];

/** A sample that the asked-for shape cannot carry; the message says which shape can. */
export class SampleShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SampleShapeError';
  }
}

/** slime's Sample as `to_dict` writes it, with the fields the reference's servers set. */
export interface SlimeSample {
  group_index: number;
  index: number;
  prompt: TrainingSampleRow['prompt'];
  tokens: number[];
  response: string;
  response_length: number;
  label: null;
  reward: { score: number };
  loss_mask: number[];
  rollout_log_probs: number[];
  status: 'completed';
  metadata: { session: string; turn: number; policy_version: number };
  /** The teacher's log-probs of the response tokens, where the sample has an OPD term (OpenClaw's OPD and Combined servers). */
  teacher_log_probs?: number[];
}

/** Tinker's TensorData: flattened values, their dtype and shape. */
export interface TensorData {
  data: number[];
  dtype: 'int64' | 'float32';
  shape: number[];
}

/** Tinker's Datum as its JSON form has it. */
export interface TinkerDatum {
  model_input: { chunks: { type: 'encoded_text'; tokens: number[] }[] };
  loss_fn_inputs: { target_tokens: TensorData; logprobs: TensorData; advantages: TensorData };
}

function promptIdsOf(row: TrainingSampleRow, shape: string): number[] {
  if (!row.prompt_ids) {
    throw new SampleShapeError(
      `sample ${row.session}#${row.turn} has no prompt token ids (its policy ran on a server, which tokenized the prompt); ` +
        `${shape} needs them: export --format trl, whose rows carry the prompt as messages`,
    );
  }
  return row.prompt_ids;
}

function refuseTopK(row: TrainingSampleRow, shape: string): void {
  if (row.opd_topk) {
    throw new SampleShapeError(
      `sample ${row.session}#${row.turn} has a top-k OPD term, which ${shape} has no field for; export --format trl, whose rows carry it (opd_topk) and which nextstate train reads`,
    );
  }
}

/**
 * One row as slime's Sample. `index` numbers the samples of the file (slime's index and group
 * index: every sample of these runs is its own group, as the reference's servers submit them).
 * The reward is the binary judge's (0 without one, as the reference's OPD server submits).
 */
export function slimeSample(row: TrainingSampleRow, index: number): SlimeSample {
  refuseTopK(row, "slime's Sample");
  const prompt = promptIdsOf(row, "slime's Sample");
  return {
    group_index: index,
    index,
    prompt: row.prompt.map((m) => ({ ...m })),
    tokens: [...prompt, ...row.completion_ids],
    response: row.completion.map((m) => m.content).join(''),
    response_length: row.completion_ids.length,
    label: null,
    reward: { score: row.reward ?? 0 },
    loss_mask: [...row.loss_mask],
    rollout_log_probs: [...row.rollout_log_probs],
    status: 'completed',
    metadata: { session: row.session, turn: row.turn, policy_version: row.policy_version },
    ...(row.teacher_log_probs ? { teacher_log_probs: [...row.teacher_log_probs] } : {}),
  };
}

function tensor(data: number[], dtype: TensorData['dtype']): TensorData {
  return { data, dtype, shape: [data.length] };
}

/**
 * One row as Tinker's Datum, as data_formatter.py builds it: over the T = prompt + response - 1
 * predicted positions, logprobs are 0 on the prompt's P - 1 and the rollout's on the response;
 * advantages are 0 on the prompt's and the row's per-token advantages times its loss mask on
 * the response (the row's OPD term is teacher - rollout, as Tinker's Combined formula has it).
 */
export function tinkerDatum(row: TrainingSampleRow): TinkerDatum {
  refuseTopK(row, "Tinker's Datum");
  const prompt = promptIdsOf(row, "Tinker's Datum");
  if (prompt.length === 0) throw new SampleShapeError(`sample ${row.session}#${row.turn} has an empty prompt; a Datum predicts every token after the first`);
  const all = [...prompt, ...row.completion_ids];
  const pad = new Array<number>(prompt.length - 1).fill(0);
  return {
    model_input: { chunks: [{ type: 'encoded_text', tokens: all.slice(0, -1) }] },
    loss_fn_inputs: {
      target_tokens: tensor(all.slice(1), 'int64'),
      logprobs: tensor([...pad, ...row.rollout_log_probs], 'float32'),
      advantages: tensor([...pad, ...row.advantages.map((a, t) => a * row.loss_mask[t])], 'float32'),
    },
  };
}

/** The rows in `format`: as they are (trl), or as slime Samples or Tinker Datums. */
export function samplesAs(rows: readonly TrainingSampleRow[], format: SampleFormat): unknown[] {
  if (format === 'slime') return rows.map((r, i) => slimeSample(r, i));
  if (format === 'tinker') return rows.map((r) => tinkerDatum(r));
  return [...rows];
}
