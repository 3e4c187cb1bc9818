/**
 * The lines `nextstate train --data` reads, and the training samples they make. Two kinds:
 * - text: {"prompt": TEXT, "completion": TEXT, "advantage": NUMBER | [NUMBER per token]};
 * - sample rows as `nextstate export --samples` writes them (storage/exports.ts
 *   TrainingSampleRow): token ids, per-token advantages, the loss mask, and the OPD term with what
 *   re-bases it on the trainer's old policy, so the step trains as the run's own did.
 */
import { EngineLimitError } from '../gpu/errors';
import type { ChatMessage } from '../rl/messages';
import { SAMPLE_ROW_FIELDS } from '../storage/exports';
import { checker, FieldError, object, runChecker, type Checker, type Infer } from '../base/check';
import type { Policy } from '../gpu/policy';
import type { TrainSample } from '../gpu/train-types';
import { InputFileError } from '../models/local-file';

export type DataLine = TextLine | SampleLine;

/**
 * What is wrong with the data file's content, named by file and line (or sample) and field, in
 * one line. The command line was right, so no usage follows it; the exit status is 1.
 */
export class TrainDataError extends InputFileError {
  constructor(message: string) {
    super(message);
    this.name = 'TrainDataError';
  }
}

/** A text field of a text line; `problem` when it is not one (the text line's own wording). */
function text(problem: string, minLength = 0): Checker<string> {
  return checker({ type: 'string', ...(minLength > 0 ? { minLength } : {}) }, (value, path) => {
    if (typeof value !== 'string' || value.length < minLength) throw new FieldError(path, problem);
    return value;
  });
}

const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** A text line: the completion's tokens come from the model's tokenizer. */
const textLine = object({
  prompt: text('must be a string (or give "completion_ids", as export --samples writes)'),
  completion: text('must be a non-empty string', 1),
  /** One advantage for every completion token, or one per token. */
  advantage: checker({ anyOf: [{ type: 'number' }, { type: 'array', items: { type: 'number' } }] }, (value, path): number | number[] => {
    if (finite(value) || (Array.isArray(value) && value.every(finite))) return value;
    throw new FieldError(path, 'must be a number or an array of numbers');
  }),
});
export type TextLine = Infer<typeof textLine>;
const TEXT_KEYS = Object.keys(textLine.schema.properties ?? {});

// A sample row's fields are those export writes (SAMPLE_ROW_FIELDS); a hand-written row may give a
// text prompt instead of messages, and leave out what export always writes but training can do without.
const F = SAMPLE_ROW_FIELDS;
const promptField: Checker<string | ChatMessage[]> = checker({ anyOf: [{ type: 'string' }, F.prompt.schema] }, (value, path) =>
  typeof value === 'string' ? value : F.prompt(value, path),
);

/** The fields of a sample row that training reads; the row's others (texts, session, reward) are left. */
const sampleLine = object(
  { completion_ids: F.completion_ids, advantages: F.advantages },
  {
    /** The prompt's ids as the run's policy read them; else `prompt`, rendered by the model here. */
    prompt_ids: F.prompt_ids,
    prompt: promptField,
    tools: F.tools,
    /**
     * slime's loss mask per completion token: all 0 masks the sample (as `trainable` false); a mix
     * of 0 and 1 (a tool-call trajectory, whose tool outputs are 0) trains the tokens at 1.
     */
    loss_mask: F.loss_mask,
    trainable: F.trainable,
    rollout_log_probs: F.rollout_log_probs,
    opd_weight: F.opd_weight,
    opd_clip: F.opd_clip,
    opd_topk: F.opd_topk,
  },
);
/** A sample row as exported: token ids and what the run's step trained them with. */
export type SampleLine = Infer<typeof sampleLine>;
const SAMPLE_KEYS = Object.keys(sampleLine.schema.properties ?? {});

// The byte-order mark is kept here and dropped by parseTrainData, which also gets text.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The training file's text. Invalid UTF-8 is refused with its line: decoding it leniently
 * would silently train on U+FFFD.
 */
export function decodeTrainData(bytes: Uint8Array, file: string): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    let start = 0;
    for (let line = 1; ; line++) {
      const nl = bytes.indexOf(0x0a, start);
      const end = nl === -1 ? bytes.length : nl;
      try {
        strictUtf8.decode(bytes.subarray(start, end));
      } catch {
        throw new TrainDataError(`${file}:${line}: not valid UTF-8 text; save the file as UTF-8`);
      }
      if (nl === -1) throw new TrainDataError(`${file}: not valid UTF-8 text; save the file as UTF-8`);
      start = nl + 1;
    }
  }
}

function parseSampleLine(o: Record<string, unknown>, where: string): SampleLine {
  const picked = Object.fromEntries(SAMPLE_KEYS.filter((k) => Object.hasOwn(o, k)).map((k) => [k, o[k]]));
  const row: SampleLine = runChecker(sampleLine, picked, (e) => new TrainDataError(`${where}: ${e.message}`));
  const n = row.completion_ids.length;
  const fail = (message: string): never => {
    throw new TrainDataError(`${where}: ${message}`);
  };
  if (n === 0) fail('"completion_ids" is empty; a sample needs at least one completion token');
  if (row.prompt_ids === undefined && row.prompt === undefined) fail('give "prompt_ids" (as export writes them) or "prompt"');
  if (row.prompt_ids?.length === 0) fail('"prompt_ids" is empty; a prompt needs at least one token (e.g. BOS)');
  const perToken = (field: string, length: number | undefined) => {
    if (length !== undefined && length !== n) fail(`"${field}" has ${length} entries for ${n} completion tokens`);
  };
  perToken('advantages', row.advantages.length);
  perToken('loss_mask', row.loss_mask?.length);
  perToken('rollout_log_probs', row.rollout_log_probs?.length);
  perToken('opd_clip.teacher_logprobs', row.opd_clip?.teacher_logprobs.length);
  perToken('opd_topk.ids', row.opd_topk?.ids.length);
  if (row.loss_mask && row.trainable !== undefined && row.loss_mask.includes(1) !== row.trainable) fail('"loss_mask" and "trainable" disagree');
  if (row.opd_weight && !row.rollout_log_probs)
    fail('"opd_weight" needs "rollout_log_probs": the OPD term is re-based from them onto the trainer\'s old policy');
  if (row.opd_clip && !row.opd_weight) fail('"opd_clip" needs "opd_weight"');
  row.opd_topk?.ids.forEach((set, t) => {
    if (set.length === 0 || row.opd_topk!.teacher_logprobs[t]?.length !== set.length) fail(`"opd_topk" set ${t} needs one teacher log-prob per id`);
  });
  return row;
}

/** Reads the training file, naming the line and field of the first problem. */
export function parseTrainData(text: string, file: string): DataLine[] {
  const rows: DataLine[] = [];
  // Editors on Windows start UTF-8 files with a byte-order mark; it is not part of line 1.
  text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      const where = `${file}:${i + 1}`;
      let o: Record<string, unknown>;
      try {
        o = JSON.parse(line);
      } catch {
        throw new TrainDataError(`${where}: not valid JSON`);
      }
      if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new TrainDataError(`${where}: a line must be a JSON object`);
      if (Object.hasOwn(o, 'completion_ids')) {
        rows.push(parseSampleLine(o, where));
        return;
      }
      // Every field is handed over, a missing one as undefined, so the message is the field's own.
      const picked = Object.fromEntries(TEXT_KEYS.map((k) => [k, o[k]]));
      rows.push(runChecker(textLine, picked, (e) => new TrainDataError(`${where}: "${e.path}" ${e.problem}`)));
    });
  if (!rows.length) throw new TrainDataError(`${file} has no samples`);
  return rows;
}

function fromSampleLine(policy: Policy, row: SampleLine): TrainSample {
  const trainable = row.loss_mask ? row.loss_mask.includes(1) : (row.trainable ?? true);
  // A mask of 0s and 1s (a tool-call trajectory) masks per token; all 1 or all 0 is `trainable`.
  const perToken = trainable && row.loss_mask?.includes(0);
  return {
    prompt: row.prompt_ids ?? policy.promptIds(row.prompt!, { tools: row.tools }),
    completion: row.completion_ids,
    advantages: row.advantages,
    trainable,
    ...(perToken ? { lossMask: row.loss_mask } : {}),
    ...(row.rollout_log_probs ? { rolloutLogp: row.rollout_log_probs } : {}),
    ...(row.opd_weight ? { opdWeight: row.opd_weight } : {}),
    ...(row.opd_clip ? { opdClip: { clip: row.opd_clip.clip, teacherLogp: row.opd_clip.teacher_logprobs } } : {}),
    ...(row.opd_topk
      ? {
          opdTopK: {
            weight: row.opd_topk.weight,
            clip: row.opd_topk.clip,
            ids: row.opd_topk.ids,
            teacherLogp: row.opd_topk.teacher_logprobs,
            ...(row.opd_topk.term ? { term: row.opd_topk.term } : {}),
          },
        }
      : {}),
  };
}

/** A line as the trainer's sample: a text line tokenized by `policy`, a sample row as recorded. */
export function toTrainSample(policy: Policy, row: DataLine, index: number): TrainSample {
  if ('completion_ids' in row) return fromSampleLine(policy, row);
  let prompt: number[];
  let completion: number[];
  try {
    prompt = policy.promptIds(row.prompt);
    completion = policy.completionIds(row.prompt, row.completion);
  } catch (e) {
    if (e instanceof EngineLimitError) throw new TrainDataError(`sample ${index + 1}: ${e.message}`);
    throw e;
  }
  const advantages = Array.isArray(row.advantage) ? row.advantage : completion.map(() => row.advantage as number);
  if (advantages.length !== completion.length) {
    throw new TrainDataError(`sample ${index + 1}: ${advantages.length} advantages but the completion has ${completion.length} tokens`);
  }
  return { prompt, completion, advantages };
}
