/**
 * Each run record kind's fields, their limits and their meaning, written once as a checker:
 * records.ts takes the record types from these, validate.ts checks a whole record with them, and
 * docs/schema publishes their JSON Schema.
 */
import { advantageSummaryChecker } from './advantages';
import { MAX_TOKEN_ID, RECORD_LIMITS } from './record-limits';
import { arrayOf, bool, checker, FieldError, int, mapOf, nullable, num, object, oneOf, str, timestamp, type Checker } from '../base/check';
import { MAX_FULL_KL_VOCAB } from './reverse-kl';
import { DISTILL_TERMS } from './topk-distill';
import { TRAJECTORY_FALLBACKS } from './trajectory-sample';
import { messageChecker } from './messages';
import { BOXED_SCORES } from './boxed';
import { SESSION_END_REASONS, TURN_TYPES } from './sessions';

const L = RECORD_LIMITS;
const id = str(L.id, 1);
const count = int();
const finiteNumbers = arrayOf(num(), L.tokens);
const tokenIds = arrayOf(int(0, MAX_TOKEN_ID), L.tokens);
const optionalStat = nullable(num());

/** A function schema a served prompt listed: any JSON object, its size bounded by the line limit. */
export const toolSchemaChecker: Checker<object> = checker({ type: 'object' }, (value, path) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FieldError(path, 'must be a JSON object (an OpenAI function tool)');
  return value;
});

/** Fields every record has; `session` and `step` are optional unless a kind requires them. */
const base = {
  /** Policy version at the event: the version that generated the data the record is about. */
  version: count,
  /** Wall-clock milliseconds since the epoch. */
  ts: timestamp,
};
const optionalSession = { session: id };
const optionalStep = {
  /** Train step the record belongs to, where it belongs to one. */
  step: count,
};
const optionalBase = { ...optionalSession, ...optionalStep };

/** RecordBase: what every kind shares, `kind` left open. */
export const recordBaseChecker = object({ ...base, kind: id }, optionalBase);

/** A request to the policy and its response (main or side turn). */
export const interactionChecker = object(
  {
    ...base,
    kind: oneOf('interaction'),
    session: id,
    turn: int(1),
    turnType: oneOf(...TURN_TYPES),
    messages: arrayOf(messageChecker, L.messages),
    response: str(L.text),
    tokenIds,
    /** Sampling log-prob of every response token, same length as tokenIds. */
    logprobs: finiteNumbers,
    startedAt: timestamp,
    finishedAt: timestamp,
  },
  {
    ...optionalStep,
    /**
     * Each response token decoded on its own, same length as tokenIds, so a run file shows its
     * token view without the model's tokenizer.
     */
    tokenTexts: arrayOf(str(L.id * 4), L.tokens),
    /** The tools the prompt listed, where they vary by request (a served agent's); absent: the track's own. */
    tools: arrayOf(toolSchemaChecker, L.toolCalls),
    /**
     * The prompt's token ids as the policy read them (its chat template applied): the engine's, or
     * those a remote policy's server returned (return_token_ids); absent where it returned none.
     */
    promptIds: tokenIds,
  },
);

const judgeTurn = {
  ...base,
  session: id,
  turn: int(1),
  /** Which judge wrote the vote or the result. */
  judge: oneOf('binary', 'hint'),
};

/** One judge vote, raw and parsed. */
export const judgeVoteChecker = object(
  {
    ...judgeTurn,
    kind: oneOf('judge_vote'),
    /** 0-based index among the turn's m votes. */
    vote: count,
    raw: str(L.text),
    score: nullable(oneOf(...BOXED_SCORES)),
    hint: nullable(str(L.hint)),
  },
  optionalStep,
);

/** One candidate hint of top-k selection and its top-k overlap with the student. */
export const hintCandidateChecker = object({
  hint: str(L.hint),
  /** sum over response tokens of |student top-k ∩ this teacher's top-k| (at most k x tokens). */
  overlap: count,
  /** Response tokens this candidate won (all of them for the winner under 'topk-sequence'). */
  tokensWon: count,
});

/** How top-k hint selection chose the hint of one turn. */
export const hintSelectionRecordChecker = object({
  rule: oneOf('topk-sequence', 'topk-token'),
  k: int(1),
  /** The bound on |A_OPD| per token; 0 = none. */
  clip: num(0),
  /** Response tokens compared. */
  tokens: count,
  /** Index of the winning candidate (shortest hint first); under 'topk-token', the one that won most tokens. */
  winner: count,
  candidates: arrayOf(hintCandidateChecker, 64),
});

/** A judge's decision for one turn after the votes. */
export const judgeResultChecker = object(
  {
    ...judgeTurn,
    kind: oneOf('judge_result'),
    /** Final score in [-1, 1] (the majority vote for the binary judge). */
    score: num(-1, 1),
    /** The turn yields a training signal from this judge (nonzero score / a usable hint). */
    accepted: bool,
    /** The hint that conditioned the teacher. */
    hint: nullable(str(L.hint)),
    /** Teacher log-probs scored for the hint (0 when no hint). */
    teacherLogpCount: count,
  },
  {
    ...optionalStep,
    /** log pi_teacher(a_t | s_enhanced) per response token, when a hint was accepted. */
    teacherLogp: finiteNumbers,
    /**
     * The judge's own hint for this turn, when the shuffled-hint control (preset
     * advantage.hintSource "shuffled") gave the teacher another session's instead (`hint`, null
     * when no other session had one yet), or the other-child control its rewrite (`hintFor`).
     */
    judgeHint: str(L.hint),
    /**
     * Who `hint` was written for, when the other-child control (preset advantage.hintSource
     * "other-child") gave the teacher the judge's hint rewritten for another child of the
     * storyteller (`judgeHint` is the judge's own): that child as subject/name/favourite, "cat/Tom/hat".
     */
    hintFor: str(L.id, 1),
    /**
     * Top-k hint selection (preset advantage.hintSelection 'topk-*'): the candidates and how each
     * did; `hint` is the winner's. Absent under the paper's longest-hint rule.
     */
    selection: hintSelectionRecordChecker,
    /**
     * The next state as its client sent it (`raw`) and as the judge read it (`cleaned`), where the
     * server stripped the client's envelope (a served agent's timestamp, queued-message marker).
     */
    nextState: object({ raw: str(L.text), cleaned: str(L.text) }),
  },
);

// Typed number[] as the trainers read masks (rl/ppo.ts LossMask); the record holds 0 and 1 only.
const lossMask: Checker<number[]> = arrayOf(oneOf(0, 1), L.tokens);

/** A training sample as it entered the buffer. */
export const sampleChecker = object(
  {
    ...base,
    kind: oneOf('sample'),
    session: id,
    turn: int(1),
    trainable: bool,
    promoted: bool,
    /** r_final from the binary judge; null when the method has none. */
    reward: nullable(num()),
    advantages: advantageSummaryChecker,
    /** Per-token advantages as judged: an OPD term is against the rollout's log-probs. */
    perToken: finiteNumbers,
  },
  {
    ...optionalStep,
    /**
     * w_opd, present when perToken holds an OPD term: the trainer re-bases that term on the
     * policy version it trains (the token update's `advantages`).
     */
    opdWeight: num(),
    /**
     * The loss mask, same length as perToken, on a sample that holds tokens the policy only read:
     * a tool-call trajectory as one sample (its interactions are the session's steps, joined;
     * src/rl/trajectory-sample.ts), 1 on the policy's tokens and 0 on the tool outputs. Absent
     * (every run logged before it, and every one-turn sample): each token is the policy's.
     */
    lossMask,
    /**
     * On each per-step sample of a tool-call trajectory of several steps that the preset asked to
     * train as one sample (batch.toolCallSamples "trajectory") but whose steps did not join into
     * one sequence: why (TrajectoryFallback). Absent: the sample is what the preset asked for.
     */
    trajectoryFallback: oneOf(...TRAJECTORY_FALLBACKS),
    /**
     * The clip on the OPD term and the teacher log-probs it is clipped against, present when the
     * preset clips A_OPD: the trainer clips teacher - old again after re-basing.
     */
    opdClip: object({ clip: num(0), teacherLogp: finiteNumbers }),
    /**
     * The top-k distillation term (preset advantage.opdTerm "topk-distill"): its weight w_opd, the
     * clip, the student's top-k set at every response token and the teacher's log-probs over it.
     * perToken then holds no OPD term. With `term` (opdTerm "reverse-kl" or "forward-kl"): that KL
     * over the teacher's top-k sets, or (the reverse KL) over the whole vocabulary where each set holds every id.
     */
    opdTopK: object(
      {
        weight: num(),
        clip: num(0),
        // A reverse KL over the whole vocabulary has sets of every id (checked below).
        ids: arrayOf(arrayOf(int(0, MAX_TOKEN_ID), MAX_FULL_KL_VOCAB), L.tokens),
        teacherLogp: arrayOf(arrayOf(num(), MAX_FULL_KL_VOCAB), L.tokens),
      },
      { term: oneOf(...DISTILL_TERMS) },
    ),
  },
);

/** What the engine reports for a train step; null where a value was not computed or not finite. */
export const trainStatsChecker = object(
  {
    loss: optionalStat,
    policyLoss: optionalStat,
    kl: optionalStat,
    clipFracLow: nullable(num(0, 1)),
    clipFracHigh: nullable(num(0, 1)),
    entropy: optionalStat,
    meanAbsAdv: optionalStat,
    gradNorm: optionalStat,
    tokens: count,
    stepMs: nullable(num(0)),
    logpGap: optionalStat,
  },
  {
    /**
     * Mean |A_OPD at training - A_OPD at sampling| over the tokens of samples with an OPD term:
     * the rollout/train log-prob mismatch as it moves the directive signal. Null (or absent, in
     * runs logged before it) when the batch had no OPD sample.
     */
    opdGap: nullable(num(0)),
  },
);

/** One optimizer step (or a skipped one, with the reason). */
export const trainStepChecker = object(
  {
    ...base,
    kind: oneOf('train_step'),
    step: count,
    samples: count,
    stats: trainStatsChecker,
    skipped: nullable(str(L.note, 1)),
  },
  {
    ...optionalSession,
    /**
     * Judged turns that gave no sample since the previous step (OPD: no accepted hint; Combined:
     * no hint and r = 0, as the reference drops them). Absent in runs logged before it.
     */
    dropped: count,
  },
);

/** One problem's score in an evaluation; null when the evaluator gave no valid vote for it. */
export const problemScoreChecker = object(
  { id, score: nullable(num()) },
  {
    /** The problem as the policy was shown it (a story opening, a GSM8K question), so anyone can check which set was scored. */
    prompt: str(L.note),
    detail: str(L.note),
    /** The tokens of a policy's answer in `detail`, as interactions keep them (`tokenTexts`), so its byte tokens read as text. */
    detailTokens: arrayOf(str(L.id * 4), L.tokens),
  },
);

/** An evaluation of the policy (e.g. the personalization score on 36 GSM8K problems). */
export const evaluationChecker = object(
  {
    ...base,
    kind: oneOf('evaluation'),
    name: id,
    /** The scores; a score over no scored problem is left out rather than written as 0. */
    scores: mapOf(id, num(), L.metrics),
    perProblem: arrayOf(problemScoreChecker, L.problems),
  },
  {
    ...optionalBase,
    /** Problems whose votes all failed to parse: left out of the scores (absent in older logs). */
    failed: count,
    /**
     * Which problems were scored, in words: source, order and count (perProblem names each by
     * id), e.g. the first 36 of the GSM8K test split in the reference evaluation's order.
     */
    problemSet: str(L.note, 1),
  },
);

/** The policy changed version; records before it were generated by `from`. */
export const versionBoundaryChecker = object({ ...base, kind: oneOf('version_boundary'), from: count, to: count }, optionalBase);

/** A session ended. */
export const sessionEndChecker = object(
  {
    ...base,
    kind: oneOf('session_end'),
    session: id,
    reason: oneOf(...SESSION_END_REASONS),
    turns: count,
    mainTurns: count,
  },
  {
    ...optionalStep,
    /**
     * The main turn that was waiting for its next state when the session ended without one (the
     * person never answered before `reason`): it is never judged and never a sample.
     */
    unjudgedTurn: int(1),
  },
);

/**
 * How one trained sample's tokens moved in a step: log-probs under the weights before the
 * update (the PPO old policy) and after it. Their ratio and the clip band show which tokens
 * the update pushed and where clipping stopped it.
 */
export const tokenUpdateChecker = object(
  { ...base, kind: oneOf('token_update'), session: id, turn: int(1), step: count, before: finiteNumbers, after: finiteNumbers },
  {
    /**
     * The advantage of each token as the step trained it: OPD re-based on the old policy
     * (`before`), so it can differ from the sample record's perToken by w_opd * (rollout - before).
     * Absent in runs logged before it.
     */
    advantages: finiteNumbers,
  },
);

/** Main turns of one session, by turn number. */
export const sessionTurnsChecker = object({ session: id, turns: arrayOf(int(1), L.turns) });

/**
 * Something happened to the runtime itself: a lost GPU device, a recovery, a pause and its end
 * ('resumed'), or a stopped run continued from its last saved step ('run_resumed', the resumed
 * run's first record; `step` is that step).
 */
export const runtimeEventChecker = object(
  {
    ...base,
    kind: oneOf('runtime_event'),
    event: oneOf('device_lost', 'recovered', 'paused', 'resumed', 'stopped', 'storage_full', 'error', 'run_resumed'),
    message: str(L.note),
  },
  {
    ...optionalBase,
    /**
     * run_resumed: the turns of the interrupted step (step + 1) that the stop cut off before they
     * reached the buffer, by session. They stay in the log as they were, and the resumed run goes
     * on without them (it starts new sessions): never trained, never judged again. Absent where the
     * policy's server judges and trains, and on other events.
     */
    interrupted: arrayOf(sessionTurnsChecker, L.sessions),
  },
);

/**
 * One step of a tool-call trajectory (the general-agent track) once its group is scored: the
 * step's PRM votes, its reward r_t and its advantage, standardized among the group's steps that
 * share its index. The step's policy call is the interaction record with the same session and
 * turn; `version` is the version that generated it.
 */
export const toolStepChecker = object(
  {
    ...base,
    kind: oneOf('tool_step'),
    /** The trajectory (one rollout). */
    session: id,
    /** stepIndex + 1, the turn of the step's interaction record. */
    turn: int(1),
    /** The rollouts of one problem; advantages are standardized within a group. */
    group: id,
    problem: id,
    /** 0-based step index within the trajectory. */
    stepIndex: count,
    /** The step made no tool call: it is the trajectory's final answer. */
    final: bool,
    /** What the environment returned for each tool call of the step; empty for the final answer. */
    toolResults: arrayOf(str(L.text), L.messages),
    /** o: +1 when the trajectory's final answer is right, else -1. */
    outcome: oneOf(1, -1),
    /**
     * integrated: r_t = o' + mean(valid votes); outcome: r_t = o' (the judge is not asked), where o'
     * is `outcome`, a wrong one shaped as the run's `wrongAnswer` says (src/rl/tool-call-reward.ts).
     */
    mode: oneOf('integrated', 'outcome'),
    /** The PRM's m votes; null is a reply without a usable \boxed{}. Empty in outcome mode. */
    votes: arrayOf(nullable(oneOf(1, -1)), 64),
    /** The judge's replies, one per vote. */
    raw: arrayOf(str(L.text), 64),
    reward: num(),
    /** null when the steps sharing this index all had the same reward (no ranking). */
    advantage: nullable(num()),
  },
  optionalStep,
);

/**
 * A file of a homework workspace changed: the scenario wrote the homework (no `turn`), or a tool
 * call of the policy's turn `turn` wrote or appended to it. `content` is the whole file
 * afterwards, so the last record of a path is the file as the run left it.
 */
export const workspaceFileChecker = object(
  {
    ...base,
    kind: oneOf('workspace_file'),
    /** The homework's workspace, shared by its phases (its student and teacher sessions). */
    workspace: id,
    /** The session the change happened in (for the scenario's own write, the one it was made for). */
    session: id,
    path: id,
    op: oneOf('write', 'append'),
    content: str(L.text),
  },
  {
    ...optionalStep,
    /** The interaction whose tool call made the change; absent when the scenario wrote the file. */
    turn: int(1),
  },
);
