/**
 * The run log in the ecosystem's formats, as pure functions over records: training samples as
 * TRL-style JSONL rows (which `nextstate train` reads back, and export-shapes.ts turns into
 * slime's Sample and Tinker's Datum), and the records as plain JSONL. A sample record carries
 * the advantages but not the text; the text is in the main-turn interaction with the same
 * session and turn, which the log always writes first, so one pass joins them.
 */
import { RECORD_LIMITS, type ChatMessage, type InteractionRecord, type JudgeResultRecord, type RunRecord, type SampleRecord } from '../rl';
import { arrayOf, bool, int, nullable, num, object, oneOf, str, type Checker, type Infer } from '../base/check';
import { MAX_FULL_KL_VOCAB } from '../rl/reverse-kl';
import { joinedOrNull } from '../rl/trajectory-sample';
import { DISTILL_TERMS } from '../rl/topk-distill';
import { messageChecker } from '../rl/messages';
import { MAX_TOKEN_ID } from '../rl/record-limits';
import { toolSchemaChecker } from '../rl/record-shapes';

const L = RECORD_LIMITS;
const numbers = arrayOf(num(), L.tokens);
const tokenIds = arrayOf(int(0, MAX_TOKEN_ID), L.tokens);
const messages = arrayOf(messageChecker, L.messages);
// Typed number[] as the trainers read masks; a row holds 0 and 1 only.
const lossMask: Checker<number[]> = arrayOf(oneOf(0, 1), L.tokens);

/**
 * The fields of a training sample row, each with its checker: the one definition of
 * TrainingSampleRow, and of what `nextstate train --data` reads back of a row (src/cli/train-data.ts).
 */
export const SAMPLE_ROW_FIELDS = {
  prompt: messages,
  completion: messages,
  /** r_final of the binary judge; null for OPD-only runs or unjudged turns. */
  reward: nullable(num()),
  /** Per-token advantages of the completion tokens, as judged (an OPD term against `logprobs`). */
  advantages: numbers,
  /**
   * w_opd, when `advantages` hold an OPD term w_opd * (teacher - logprobs): the online update
   * re-based it on the trainer's old log-probs, A + w_opd * (logprobs - old), and so should an
   * offline trainer. Absent when the sample has no OPD term.
   */
  opd_weight: num(),
  /**
   * With opd_weight, when the run clipped A_OPD (top-k hint selection): the bound and the
   * teacher's log-probs of the completion tokens. The OPD term is then w_opd * clip(teacher -
   * logprobs), and an offline trainer re-bases it as w_opd * clip(teacher - old), not by a shift.
   */
  opd_clip: object({ clip: num(0), teacher_logprobs: numbers }),
  /**
   * With an OPD term: the teacher's log-probs of the completion tokens (the hint-conditioned
   * teacher's; the rollout's own where a Combined turn had no hint), as slime's OPD and Combined
   * losses take them.
   */
  teacher_log_probs: numbers,
  /**
   * The top-k distillation term (preset advantage.opdTerm "topk-distill"): its weight w_opd,
   * the clip, the student's top-k set at every completion token and the teacher's log-probs over
   * it. `advantages` then hold no OPD term. With `term` (opdTerm "reverse-kl" or "forward-kl"): that
   * KL over the teacher's top-k sets, or (the reverse KL) over the whole vocabulary where each set holds every id.
   */
  opd_topk: object(
    {
      weight: num(),
      clip: num(0),
      ids: arrayOf(arrayOf(int(0, MAX_TOKEN_ID), MAX_FULL_KL_VOCAB), L.tokens),
      teacher_logprobs: arrayOf(arrayOf(num(), MAX_FULL_KL_VOCAB), L.tokens),
    },
    { term: oneOf(...DISTILL_TERMS) },
  ),
  /** Policy version that generated the completion. */
  policy_version: int(),
  /** Loss mask decided by the buffer: false means the sample contributed no loss. */
  trainable: bool,
  /**
   * The mask per completion token (1 trained, 0 not), as slime's loss_mask: `trainable` on every
   * token, and 0 on a tool-call trajectory's tool outputs.
   */
  loss_mask: lossMask,
  /**
   * The prompt's token ids as the policy read them (its chat template applied), when the run's
   * policy ran in the lab; absent where a server tokenized the prompt.
   */
  prompt_ids: tokenIds,
  completion_ids: tokenIds,
  /** Sampling log-probs of completion_ids under policy_version (the PPO "old" log-probs). */
  rollout_log_probs: numbers,
  session: str(L.id, 1),
  turn: int(1),
  /**
   * The function schemas the prompt was rendered with (TRL's `tools` column), so a trainer
   * rebuilds the same prompt tokens; only in runs whose policy was given tools.
   */
  tools: arrayOf(toolSchemaChecker, L.toolCalls),
};

const F = SAMPLE_ROW_FIELDS;
export const trainingSampleRowChecker = object(
  {
    prompt: F.prompt,
    completion: F.completion,
    reward: F.reward,
    advantages: F.advantages,
    policy_version: F.policy_version,
    trainable: F.trainable,
    loss_mask: F.loss_mask,
    completion_ids: F.completion_ids,
    rollout_log_probs: F.rollout_log_probs,
    session: F.session,
    turn: F.turn,
  },
  { opd_weight: F.opd_weight, opd_clip: F.opd_clip, teacher_log_probs: F.teacher_log_probs, opd_topk: F.opd_topk, prompt_ids: F.prompt_ids, tools: F.tools },
);

/**
 * One training example. prompt/completion use TRL's conversational format; the rest is what
 * an offline PPO/GRPO trainer needs to reproduce the online update. Its fields are SAMPLE_ROW_FIELDS.
 */
export type TrainingSampleRow = Infer<typeof trainingSampleRowChecker>;

/**
 * Joins sample records to their interactions one record at a time, for logs read from a
 * stream. Interactions wait in a map until their sample arrives; side turns never do and are
 * not kept.
 */
export class SampleJoiner {
  private readonly waiting = new Map<string, InteractionRecord>();
  /** The hint judge's result of each waiting main turn, for its teacher's log-probs. */
  private readonly hints = new Map<string, JudgeResultRecord>();
  /** "session#turn" of samples whose interaction was not seen before them. */
  readonly unmatched: string[] = [];

  /** `tools`: what every prompt of the run was rendered with (see TrainingSampleRow.tools), unless an interaction names its own. */
  constructor(private readonly tools?: readonly object[]) {}

  push(record: RunRecord): TrainingSampleRow | null {
    if (record.kind === 'interaction') {
      if (record.turnType === 'main') this.waiting.set(`${record.session}#${record.turn}`, record);
      return null;
    }
    if (record.kind === 'judge_result' && record.judge === 'hint') {
      if (this.waiting.has(`${record.session}#${record.turn}`)) this.hints.set(`${record.session}#${record.turn}`, record);
      return null;
    }
    if (record.kind !== 'sample') return null;
    const key = `${record.session}#${record.turn}`;
    const turn = this.waiting.get(key);
    const response = turn ? this.response(record, turn) : null;
    if (!turn || !response) {
      this.unmatched.push(key);
      return null;
    }
    this.waiting.delete(key);
    const hint = this.hints.get(key);
    this.hints.delete(key);
    const teacher =
      record.opdWeight !== undefined ? (record.opdClip?.teacherLogp ?? (hint?.accepted ? hint.teacherLogp : undefined) ?? turn.logprobs) : undefined;
    return {
      prompt: turn.messages.map((m) => ({ ...m })),
      completion: response.completion,
      reward: record.reward,
      advantages: [...record.perToken],
      ...(record.opdWeight !== undefined ? { opd_weight: record.opdWeight } : {}),
      ...(record.opdWeight !== undefined && record.opdClip
        ? { opd_clip: { clip: record.opdClip.clip, teacher_logprobs: [...record.opdClip.teacherLogp] } }
        : {}),
      ...(teacher ? { teacher_log_probs: [...teacher] } : {}),
      ...(record.opdTopK
        ? {
            opd_topk: {
              weight: record.opdTopK.weight,
              clip: record.opdTopK.clip,
              ids: record.opdTopK.ids.map((s) => [...s]),
              teacher_logprobs: record.opdTopK.teacherLogp.map((s) => [...s]),
              ...(record.opdTopK.term ? { term: record.opdTopK.term } : {}),
            },
          }
        : {}),
      policy_version: record.version,
      trainable: record.trainable,
      loss_mask: response.ids.map((_, t) => (record.trainable ? (record.lossMask?.[t] ?? 1) : 0)),
      ...(turn.promptIds ? { prompt_ids: [...turn.promptIds] } : {}),
      completion_ids: response.ids,
      rollout_log_probs: response.logprobs,
      session: record.session,
      turn: record.turn,
      ...(turn.tools ? { tools: structuredClone(turn.tools) } : this.tools ? { tools: structuredClone([...this.tools]) } : {}),
    };
  }

  /**
   * What the sample trained after its prompt: its interaction's reply, or for a sample with a
   * loss mask (a tool-call trajectory, turn = its first step) every step of its session from
   * that turn on, joined as the run loop joined them, with the tool outputs between as messages.
   * Null when those steps cannot be joined again.
   */
  private response(record: SampleRecord, first: InteractionRecord): { completion: ChatMessage[]; ids: number[]; logprobs: number[] } | null {
    if (!record.lossMask) return { completion: [{ role: 'assistant', content: first.response }], ids: [...first.tokenIds], logprobs: [...first.logprobs] };
    const steps = [...this.waiting.values()].filter((i) => i.session === record.session && i.turn >= record.turn).sort((a, b) => a.turn - b.turn);
    const joined = joinedOrNull(steps);
    if (joined?.tokenIds.length !== record.perToken.length) return null;
    for (const s of steps) this.waiting.delete(`${s.session}#${s.turn}`);
    const last = steps.at(-1)!;
    const completion = [...last.messages.slice(first.messages.length), { role: 'assistant' as const, content: last.response }].map((m) => ({ ...m }));
    return { completion, ids: joined.tokenIds, logprobs: joined.logprobs };
  }
}

export interface TrainingSamples {
  rows: TrainingSampleRow[];
  /** Samples without an interaction (a log cut short at the start); left out of rows. */
  unmatched: string[];
}

/** Every training sample of a log, in the order the samples entered the buffer. */
export function trainingSamples(records: Iterable<RunRecord>, options: { trainableOnly?: boolean; tools?: readonly object[] } = {}): TrainingSamples {
  const joiner = new SampleJoiner(options.tools);
  const rows: TrainingSampleRow[] = [];
  for (const record of records) {
    const row = joiner.push(record);
    if (row && (row.trainable || !options.trainableOnly)) rows.push(row);
  }
  return { rows, unmatched: joiner.unmatched };
}

/** JSON Lines: one compact JSON value per line, newline-terminated. */
export function toJsonl(values: Iterable<unknown>): string {
  let out = '';
  for (const v of values) out += JSON.stringify(v) + '\n';
  return out;
}

/** The records as plain JSONL, exactly as they appear in a run file's body. */
export function recordsJsonl(records: Iterable<RunRecord>): string {
  return toJsonl(records);
}
