import type { AdvantageSummary } from './advantages';
import type { BoxedScore } from './boxed';
import type { ChatMessage } from './messages';
import type { SessionEndReason, TurnType } from './sessions';
import type { DistillTerm } from './topk-distill';
import type { TrajectoryFallback } from './trajectory-sample';

/**
 * The run log: one record per event, stored in order. Records carry no run id and no
 * sequence number; storage assigns `seq`, so the same records can move between runs and
 * files unchanged.
 */

/** Which judge wrote a vote or a result. */
export type JudgeKind = 'binary' | 'hint';

/** Fields every record has. */
export interface RecordBase {
  kind: string;
  /** Policy version at the event: the version that generated the data the record is about. */
  version: number;
  /** Wall-clock milliseconds since the epoch. */
  ts: number;
  session?: string;
  /** Train step the record belongs to, where it belongs to one. */
  step?: number;
}

/** A request to the policy and its response (main or side turn). */
export interface InteractionRecord extends RecordBase {
  kind: 'interaction';
  session: string;
  turn: number;
  turnType: TurnType;
  messages: ChatMessage[];
  response: string;
  tokenIds: number[];
  /** Sampling log-prob of every response token, same length as tokenIds. */
  logprobs: number[];
  /**
   * Each response token decoded on its own, same length as tokenIds, so a run file shows its
   * token view without the model's tokenizer.
   */
  tokenTexts?: string[];
  /** The tools the prompt listed, where they vary by request (a served agent's); absent: the track's own. */
  tools?: object[];
  /**
   * The prompt's token ids as the policy read them (its chat template applied): the engine's, or
   * those a remote policy's server returned (return_token_ids); absent where it returned none.
   */
  promptIds?: number[];
  startedAt: number;
  finishedAt: number;
}

/** One judge vote, raw and parsed. */
export interface JudgeVoteRecord extends RecordBase {
  kind: 'judge_vote';
  session: string;
  turn: number;
  judge: JudgeKind;
  /** 0-based index among the turn's m votes. */
  vote: number;
  raw: string;
  score: BoxedScore | null;
  hint: string | null;
}

/** A judge's decision for one turn after the votes. */
export interface JudgeResultRecord extends RecordBase {
  kind: 'judge_result';
  session: string;
  turn: number;
  judge: JudgeKind;
  /** Final score in [-1, 1] (the majority vote for the binary judge). */
  score: number;
  /** The turn yields a training signal from this judge (nonzero score / a usable hint). */
  accepted: boolean;
  /** The hint that conditioned the teacher. */
  hint: string | null;
  /**
   * The judge's own hint for this turn, when the shuffled-hint control (preset
   * advantage.hintSource "shuffled") gave the teacher another session's instead (`hint`, null
   * when no other session had one yet), or the other-child control its rewrite (`hintFor`).
   */
  judgeHint?: string;
  /**
   * Who `hint` was written for, when the other-child control (preset advantage.hintSource
   * "other-child") gave the teacher the judge's hint rewritten for another child of the
   * storyteller (`judgeHint` is the judge's own): that child as subject/name/favourite, "cat/Tom/hat".
   */
  hintFor?: string;
  /** Teacher log-probs scored for the hint (0 when no hint). */
  teacherLogpCount: number;
  /** log pi_teacher(a_t | s_enhanced) per response token, when a hint was accepted. */
  teacherLogp?: number[];
  /**
   * Top-k hint selection (preset advantage.hintSelection 'topk-*'): the candidates and how each
   * did; `hint` is the winner's. Absent under the paper's longest-hint rule.
   */
  selection?: HintSelectionRecord;
  /**
   * The next state as its client sent it (`raw`) and as the judge read it (`cleaned`), where the
   * server stripped the client's envelope (a served agent's timestamp, queued-message marker).
   */
  nextState?: { raw: string; cleaned: string };
}

/** One candidate hint of top-k selection and its top-k overlap with the student. */
export interface HintCandidateRecord {
  hint: string;
  /** sum over response tokens of |student top-k ∩ this teacher's top-k| (at most k x tokens). */
  overlap: number;
  /** Response tokens this candidate won (all of them for the winner under 'topk-sequence'). */
  tokensWon: number;
}

/** How top-k hint selection chose the hint of one turn. */
export interface HintSelectionRecord {
  rule: 'topk-sequence' | 'topk-token';
  k: number;
  /** The bound on |A_OPD| per token; 0 = none. */
  clip: number;
  /** Response tokens compared. */
  tokens: number;
  /** Index of the winning candidate (shortest hint first); under 'topk-token', the one that won most tokens. */
  winner: number;
  candidates: HintCandidateRecord[];
}

/** A training sample as it entered the buffer. */
export interface SampleRecord extends RecordBase {
  kind: 'sample';
  session: string;
  turn: number;
  trainable: boolean;
  promoted: boolean;
  /** r_final from the binary judge; null when the method has none. */
  reward: number | null;
  advantages: AdvantageSummary;
  /** Per-token advantages as judged: an OPD term is against the rollout's log-probs. */
  perToken: number[];
  /**
   * The loss mask, same length as perToken, on a sample that holds tokens the policy only read:
   * a tool-call trajectory as one sample (its interactions are the session's steps, joined;
   * src/rl/trajectory-sample.ts), 1 on the policy's tokens and 0 on the tool outputs. Absent
   * (every run logged before it, and every one-turn sample): each token is the policy's.
   */
  lossMask?: number[];
  /**
   * On each per-step sample of a tool-call trajectory of several steps that the preset asked to
   * train as one sample (batch.toolCallSamples "trajectory") but whose steps did not join into
   * one sequence: why (TrajectoryFallback). Absent: the sample is what the preset asked for.
   */
  trajectoryFallback?: TrajectoryFallback;
  /**
   * w_opd, present when perToken holds an OPD term: the trainer re-bases that term on the
   * policy version it trains (the token update's `advantages`).
   */
  opdWeight?: number;
  /**
   * The clip on the OPD term and the teacher log-probs it is clipped against, present when the
   * preset clips A_OPD: the trainer clips teacher - old again after re-basing.
   */
  opdClip?: { clip: number; teacherLogp: number[] };
  /**
   * The top-k distillation term (preset advantage.opdTerm "topk-distill"): its weight w_opd, the
   * clip, the student's top-k set at every response token and the teacher's log-probs over it.
   * perToken then holds no OPD term. With `term` (opdTerm "reverse-kl"): the reverse KL over the
   * teacher's top-k sets, or over the whole vocabulary where each set holds every id.
   */
  opdTopK?: { weight: number; clip: number; ids: number[][]; teacherLogp: number[][]; term?: DistillTerm };
}

/** What the engine reports for a train step; null where a value was not computed or not finite. */
export interface TrainStats {
  loss: number | null;
  policyLoss: number | null;
  kl: number | null;
  clipFracLow: number | null;
  clipFracHigh: number | null;
  entropy: number | null;
  meanAbsAdv: number | null;
  gradNorm: number | null;
  tokens: number;
  stepMs: number | null;
  logpGap: number | null;
  /**
   * Mean |A_OPD at training - A_OPD at sampling| over the tokens of samples with an OPD term:
   * the rollout/train log-prob mismatch as it moves the directive signal. Null (or absent, in
   * runs logged before it) when the batch had no OPD sample.
   */
  opdGap?: number | null;
}

/** One optimizer step (or a skipped one, with the reason). */
export interface TrainStepRecord extends RecordBase {
  kind: 'train_step';
  step: number;
  samples: number;
  stats: TrainStats;
  skipped: string | null;
  /**
   * Judged turns that gave no sample since the previous step (OPD: no accepted hint; Combined:
   * no hint and r = 0, as the reference drops them). Absent in runs logged before it.
   */
  dropped?: number;
}

/** One problem's score in an evaluation; null when the evaluator gave no valid vote for it. */
export interface ProblemScore {
  id: string;
  score: number | null;
  /** The problem as the policy was shown it (a story opening, a GSM8K question), so anyone can check which set was scored. */
  prompt?: string;
  detail?: string;
  /** The tokens of a policy's answer in `detail`, as interactions keep them (`tokenTexts`), so its byte tokens read as text. */
  detailTokens?: string[];
}

/** An evaluation of the policy (e.g. the personalization score on 36 GSM8K problems). */
export interface EvaluationRecord extends RecordBase {
  kind: 'evaluation';
  name: string;
  /** The scores; a score over no scored problem is left out rather than written as 0. */
  scores: Record<string, number>;
  perProblem: ProblemScore[];
  /** Problems whose votes all failed to parse: left out of the scores (absent in older logs). */
  failed?: number;
  /**
   * Which problems were scored, in words: source, order and count (perProblem names each by
   * id), e.g. the first 36 of the GSM8K test split in the reference evaluation's order.
   */
  problemSet?: string;
}

/** The policy changed version; records before it were generated by `from`. */
export interface VersionBoundaryRecord extends RecordBase {
  kind: 'version_boundary';
  from: number;
  to: number;
}

/**
 * How one trained sample's tokens moved in a step: log-probs under the weights before the
 * update (the PPO old policy) and after it. Their ratio and the clip band show which tokens
 * the update pushed and where clipping stopped it.
 */
export interface TokenUpdateRecord extends RecordBase {
  kind: 'token_update';
  session: string;
  turn: number;
  step: number;
  before: number[];
  after: number[];
  /**
   * The advantage of each token as the step trained it: OPD re-based on the old policy
   * (`before`), so it can differ from the sample record's perToken by w_opd * (rollout - before).
   * Absent in runs logged before it.
   */
  advantages?: number[];
}

/** Main turns of one session, by turn number. */
export interface SessionTurns {
  session: string;
  turns: number[];
}

/** How many turns `sessions` list. */
export const turnCount = (sessions: readonly SessionTurns[] = []): number => sessions.reduce((n, s) => n + s.turns.length, 0);

/**
 * Something happened to the runtime itself: a lost GPU device, a recovery, a pause and its end
 * ('resumed'), or a stopped run continued from its last saved step ('run_resumed', the resumed
 * run's first record; `step` is that step).
 */
export interface RuntimeEventRecord extends RecordBase {
  kind: 'runtime_event';
  event: 'device_lost' | 'recovered' | 'paused' | 'resumed' | 'stopped' | 'storage_full' | 'error' | 'run_resumed';
  message: string;
  /**
   * run_resumed: the turns of the interrupted step (step + 1) that the stop cut off before they
   * reached the buffer, by session. They stay in the log as they were, and the resumed run goes
   * on without them (it starts new sessions): never trained, never judged again. Absent where the
   * policy's server judges and trains, and on other events.
   */
  interrupted?: SessionTurns[];
}

/**
 * One step of a tool-call trajectory (the general-agent track) once its group is scored: the
 * step's PRM votes, its reward r_t and its advantage, standardized among the group's steps that
 * share its index. The step's policy call is the interaction record with the same session and
 * turn; `version` is the version that generated it.
 */
export interface ToolStepRecord extends RecordBase {
  kind: 'tool_step';
  /** The trajectory (one rollout). */
  session: string;
  /** stepIndex + 1, the turn of the step's interaction record. */
  turn: number;
  /** The rollouts of one problem; advantages are standardized within a group. */
  group: string;
  problem: string;
  /** 0-based step index within the trajectory. */
  stepIndex: number;
  /** The step made no tool call: it is the trajectory's final answer. */
  final: boolean;
  /** What the environment returned for each tool call of the step; empty for the final answer. */
  toolResults: string[];
  /** o: +1 when the trajectory's final answer is right, else -1. */
  outcome: 1 | -1;
  /**
   * integrated: r_t = o' + mean(valid votes); outcome: r_t = o' (the judge is not asked), where o'
   * is `outcome`, a wrong one shaped as the run's `wrongAnswer` says (src/rl/tool-call-reward.ts).
   */
  mode: 'integrated' | 'outcome';
  /** The PRM's m votes; null is a reply without a usable \boxed{}. Empty in outcome mode. */
  votes: (1 | -1 | null)[];
  /** The judge's replies, one per vote. */
  raw: string[];
  reward: number;
  /** null when the steps sharing this index all had the same reward (no ranking). */
  advantage: number | null;
}

/**
 * A file of a homework workspace changed: the scenario wrote the homework (no `turn`), or a tool
 * call of the policy's turn `turn` wrote or appended to it. `content` is the whole file
 * afterwards, so the last record of a path is the file as the run left it.
 */
export interface WorkspaceFileRecord extends RecordBase {
  kind: 'workspace_file';
  /** The homework's workspace, shared by its phases (its student and teacher sessions). */
  workspace: string;
  /** The session the change happened in (for the scenario's own write, the one it was made for). */
  session: string;
  /** The interaction whose tool call made the change; absent when the scenario wrote the file. */
  turn?: number;
  path: string;
  op: 'write' | 'append';
  content: string;
}

/** A session ended. */
export interface SessionEndRecord extends RecordBase {
  kind: 'session_end';
  session: string;
  reason: SessionEndReason;
  turns: number;
  mainTurns: number;
  /**
   * The main turn that was waiting for its next state when the session ended without one (the
   * person never answered before `reason`): it is never judged and never a sample.
   */
  unjudgedTurn?: number;
}

/** Every record of the run log, discriminated on `kind`. */
export type RunRecord =
  | InteractionRecord
  | JudgeVoteRecord
  | JudgeResultRecord
  | SampleRecord
  | TrainStepRecord
  | EvaluationRecord
  | VersionBoundaryRecord
  | SessionEndRecord
  | ToolStepRecord
  | TokenUpdateRecord
  | RuntimeEventRecord
  | WorkspaceFileRecord;

/** The `kind` tags of RunRecord. */
export type RecordKind = RunRecord['kind'];

/** Every record kind, for runtime checks. */
export const RECORD_KINDS = [
  'interaction',
  'judge_vote',
  'judge_result',
  'sample',
  'train_step',
  'evaluation',
  'version_boundary',
  'session_end',
  'tool_step',
  'token_update',
  'runtime_event',
  'workspace_file',
] as const satisfies readonly RecordKind[];

// Fails to compile when a kind is added to RunRecord but not to RECORD_KINDS.
const kindsAreComplete: Record<Exclude<RecordKind, (typeof RECORD_KINDS)[number]>, never> = {};
void kindsAreComplete;
