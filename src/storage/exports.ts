/**
 * The run log in the ecosystem's formats, as pure functions over records: training samples as
 * TRL-style JSONL rows (which `nextstate train` reads back, and export-shapes.ts turns into
 * slime's Sample and Tinker's Datum), and the records as plain JSONL. A sample record carries
 * the advantages but not the text; the text is in the main-turn interaction with the same
 * session and turn, which the log always writes first, so one pass joins them.
 */
import type { ChatMessage, InteractionRecord, JudgeResultRecord, RunRecord, SampleRecord } from '../rl';
import { joinedOrNull } from '../rl/trajectory-sample';
import type { DistillTerm } from '../rl/topk-distill';

/**
 * One training example. prompt/completion use TRL's conversational format; the rest is what
 * an offline PPO/GRPO trainer needs to reproduce the online update.
 */
export interface TrainingSampleRow {
  prompt: ChatMessage[];
  completion: ChatMessage[];
  /** r_final of the binary judge; null for OPD-only runs or unjudged turns. */
  reward: number | null;
  /** Per-token advantages of the completion tokens, as judged (an OPD term against `logprobs`). */
  advantages: number[];
  /**
   * w_opd, when `advantages` hold an OPD term w_opd * (teacher - logprobs): the online update
   * re-based it on the trainer's old log-probs, A + w_opd * (logprobs - old), and so should an
   * offline trainer. Absent when the sample has no OPD term.
   */
  opd_weight?: number;
  /**
   * With opd_weight, when the run clipped A_OPD (top-k hint selection): the bound and the
   * teacher's log-probs of the completion tokens. The OPD term is then w_opd * clip(teacher -
   * logprobs), and an offline trainer re-bases it as w_opd * clip(teacher - old), not by a shift.
   */
  opd_clip?: { clip: number; teacher_logprobs: number[] };
  /**
   * With an OPD term: the teacher's log-probs of the completion tokens (the hint-conditioned
   * teacher's; the rollout's own where a Combined turn had no hint), as slime's OPD and Combined
   * losses take them.
   */
  teacher_log_probs?: number[];
  /**
   * The top-k distillation term (preset advantage.opdTerm "topk-distill"): its weight w_opd,
   * the clip, the student's top-k set at every completion token and the teacher's log-probs over
   * it. `advantages` then hold no OPD term. With `term` (opdTerm "reverse-kl"): the reverse KL over
   * the teacher's top-k sets, or over the whole vocabulary where each set holds every id.
   */
  opd_topk?: { weight: number; clip: number; ids: number[][]; teacher_logprobs: number[][]; term?: DistillTerm };
  /** Policy version that generated the completion. */
  policy_version: number;
  /** Loss mask decided by the buffer: false means the sample contributed no loss. */
  trainable: boolean;
  /**
   * The mask per completion token (1 trained, 0 not), as slime's loss_mask: `trainable` on every
   * token, and 0 on a tool-call trajectory's tool outputs.
   */
  loss_mask: number[];
  /**
   * The prompt's token ids as the policy read them (its chat template applied), when the run's
   * policy ran in the lab; absent where a server tokenized the prompt.
   */
  prompt_ids?: number[];
  completion_ids: number[];
  /** Sampling log-probs of completion_ids under policy_version (the PPO "old" log-probs). */
  rollout_log_probs: number[];
  session: string;
  turn: number;
  /**
   * The function schemas the prompt was rendered with (TRL's `tools` column), so a trainer
   * rebuilds the same prompt tokens; only in runs whose policy was given tools.
   */
  tools?: object[];
}

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
