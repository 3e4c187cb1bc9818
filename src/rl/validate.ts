import type { AdvantageSummary } from './advantages';
import { arrayOf, bool, checker, FieldError, int, mapOf, nullable, num, object, oneOf, runChecker, str, timestamp, type Checker } from './check';
import { RecordValidationError } from './errors';
import { MAX_TOP_K } from './presets';
import { MAX_FULL_KL_VOCAB } from './reverse-kl';
import { DISTILL_TERMS } from './topk-distill';
import { TRAJECTORY_FALLBACKS } from './trajectory-sample';
import type { ChatMessage } from './messages';
import {
  RECORD_KINDS,
  type EvaluationRecord,
  type InteractionRecord,
  type JudgeResultRecord,
  type JudgeVoteRecord,
  type RecordKind,
  type RunRecord,
  type SampleRecord,
  type RuntimeEventRecord,
  type SessionEndRecord,
  type ToolStepRecord,
  type TokenUpdateRecord,
  type TrainStats,
  type TrainStepRecord,
  type VersionBoundaryRecord,
  type WorkspaceFileRecord,
} from './records';

/**
 * Size limits for imported records. Generous for real runs (a 100 kB answer is fine) but
 * bounded, so a hostile file cannot make the app hold gigabytes per record.
 */
export const RECORD_LIMITS = {
  /** session ids, problem ids, evaluation and metric names */
  id: 256,
  /** message content, responses, raw judge text */
  text: 1_000_000,
  hint: 20_000,
  /** skip reasons, per-problem details */
  note: 20_000,
  messages: 10_000,
  /** tool calls per message, tools per prompt */
  toolCalls: 256,
  /** token ids, log-probs, per-token advantages */
  tokens: 1_000_000,
  problems: 100_000,
  metrics: 256,
  /** sessions a resume marks interrupted, and turns of one session */
  sessions: 100_000,
  turns: 100_000,
} as const;

/** The largest token id a record holds. */
export const MAX_TOKEN_ID = 2 ** 31 - 1;

const L = RECORD_LIMITS;
const id = str(L.id, 1);
const count = int();
const finiteNumbers = arrayOf(num(), L.tokens);
const tokenIds = arrayOf(int(0, MAX_TOKEN_ID), L.tokens);
const optionalStat = nullable(num());

const toolCall = object({ id: str(L.id), type: oneOf('function'), function: object({ name: str(L.id, 1), arguments: str(L.text) }) });

const message: Checker<ChatMessage> = object(
  {
    role: oneOf('system', 'user', 'assistant', 'tool'),
    content: str(L.text),
  },
  { tool_calls: arrayOf(toolCall, L.toolCalls), tool_call_id: str(L.id) },
);

/** A function schema a served prompt listed: any JSON object, its size bounded by the line limit. */
const toolSchema: Checker<object> = checker({ type: 'object' }, (value, path) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FieldError(path, 'must be a JSON object (an OpenAI function tool)');
  return value;
});

/** Fields of RecordBase; `session` and `step` are optional unless a kind requires them. */
const base = { version: count, ts: timestamp };
const optionalSession = { session: id };
const optionalStep = { step: count };
const optionalBase = { ...optionalSession, ...optionalStep };

const interaction = object(
  {
    ...base,
    kind: oneOf('interaction'),
    session: id,
    turn: int(1),
    turnType: oneOf('main', 'side'),
    messages: arrayOf(message, L.messages),
    response: str(L.text),
    tokenIds,
    logprobs: finiteNumbers,
    startedAt: timestamp,
    finishedAt: timestamp,
  },
  { ...optionalStep, tokenTexts: arrayOf(str(L.id * 4), L.tokens), tools: arrayOf(toolSchema, L.toolCalls), promptIds: tokenIds },
);

const judgeTurn = { ...base, session: id, turn: int(1), judge: oneOf('binary', 'hint') };

const judgeVote = object(
  {
    ...judgeTurn,
    kind: oneOf('judge_vote'),
    vote: count,
    raw: str(L.text),
    score: nullable(oneOf(1, 0, -1)),
    hint: nullable(str(L.hint)),
  },
  optionalStep,
);

const judgeResult = object(
  {
    ...judgeTurn,
    kind: oneOf('judge_result'),
    score: num(-1, 1),
    accepted: bool,
    hint: nullable(str(L.hint)),
    teacherLogpCount: count,
  },
  {
    ...optionalStep,
    teacherLogp: finiteNumbers,
    judgeHint: str(L.hint),
    hintFor: str(L.id, 1),
    selection: object({
      rule: oneOf('topk-sequence', 'topk-token'),
      k: int(1),
      clip: num(0),
      tokens: count,
      winner: count,
      candidates: arrayOf(object({ hint: str(L.hint), overlap: count, tokensWon: count }), 64),
    }),
    nextState: object({ raw: str(L.text), cleaned: str(L.text) }),
  },
);

const advantageSummary: Checker<AdvantageSummary> = object({
  tokens: count,
  mean: num(),
  min: num(),
  max: num(),
  meanAbs: num(0),
  nonZero: count,
});

const sample = object(
  {
    ...base,
    kind: oneOf('sample'),
    session: id,
    turn: int(1),
    trainable: bool,
    promoted: bool,
    reward: nullable(num()),
    advantages: advantageSummary,
    perToken: finiteNumbers,
  },
  {
    ...optionalStep,
    opdWeight: num(),
    lossMask: arrayOf(oneOf(0, 1), L.tokens),
    trajectoryFallback: oneOf(...TRAJECTORY_FALLBACKS),
    opdClip: object({ clip: num(0), teacherLogp: finiteNumbers }),
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

const trainStats: Checker<TrainStats> = object(
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
  { opdGap: nullable(num(0)) },
);

const trainStep = object(
  {
    ...base,
    kind: oneOf('train_step'),
    step: count,
    samples: count,
    stats: trainStats,
    skipped: nullable(str(L.note, 1)),
  },
  { ...optionalSession, dropped: count },
);

const evaluation = object(
  {
    ...base,
    kind: oneOf('evaluation'),
    name: id,
    scores: mapOf(id, num(), L.metrics),
    perProblem: arrayOf(
      object({ id, score: nullable(num()) }, { prompt: str(L.note), detail: str(L.note), detailTokens: arrayOf(str(L.id * 4), L.tokens) }),
      L.problems,
    ),
  },
  { ...optionalBase, failed: count, problemSet: str(L.note, 1) },
);

const versionBoundary = object({ ...base, kind: oneOf('version_boundary'), from: count, to: count }, optionalBase);

const sessionEnd = object(
  {
    ...base,
    kind: oneOf('session_end'),
    session: id,
    reason: oneOf('explicit', 'timeout', 'context-full'),
    turns: count,
    mainTurns: count,
  },
  { ...optionalStep, unjudgedTurn: int(1) },
);

const tokenUpdate = object(
  { ...base, kind: oneOf('token_update'), session: id, turn: int(1), step: count, before: finiteNumbers, after: finiteNumbers },
  { advantages: finiteNumbers },
);

const runtimeEvent = object(
  {
    ...base,
    kind: oneOf('runtime_event'),
    event: oneOf('device_lost', 'recovered', 'paused', 'resumed', 'stopped', 'storage_full', 'error', 'run_resumed'),
    message: str(L.note),
  },
  { ...optionalBase, interrupted: arrayOf(object({ session: id, turns: arrayOf(int(1), L.turns) }), L.sessions) },
);

const toolStep = object(
  {
    ...base,
    kind: oneOf('tool_step'),
    session: id,
    turn: int(1),
    group: id,
    problem: id,
    stepIndex: count,
    final: bool,
    toolResults: arrayOf(str(L.text), L.messages),
    outcome: oneOf(1, -1),
    mode: oneOf('integrated', 'outcome'),
    votes: arrayOf(nullable(oneOf(1, -1)), 64),
    raw: arrayOf(str(L.text), 64),
    reward: num(),
    advantage: nullable(num()),
  },
  optionalStep,
);

const workspaceFile = object(
  {
    ...base,
    kind: oneOf('workspace_file'),
    workspace: id,
    session: id,
    path: id,
    op: oneOf('write', 'append'),
    content: str(L.text),
  },
  { ...optionalStep, turn: int(1) },
);

/** Cross-field rules a per-field check cannot see. */
function checkConsistency(record: RunRecord): void {
  switch (record.kind) {
    case 'interaction':
      if (record.logprobs.length !== record.tokenIds.length) {
        throw new FieldError('logprobs', `has ${record.logprobs.length} entries but tokenIds has ${record.tokenIds.length}`);
      }
      if (record.finishedAt < record.startedAt) throw new FieldError('finishedAt', 'is earlier than startedAt');
      if (record.tokenTexts && record.tokenTexts.length !== record.tokenIds.length) {
        throw new FieldError('tokenTexts', `has ${record.tokenTexts.length} entries but tokenIds has ${record.tokenIds.length}`);
      }
      break;
    case 'judge_result':
      if (record.teacherLogp && record.teacherLogp.length !== record.teacherLogpCount) {
        throw new FieldError('teacherLogp', `has ${record.teacherLogp.length} entries but teacherLogpCount is ${record.teacherLogpCount}`);
      }
      if (record.selection && record.selection.winner >= record.selection.candidates.length) {
        throw new FieldError('selection.winner', `is ${record.selection.winner} but there are ${record.selection.candidates.length} candidates`);
      }
      break;
    case 'token_update':
      if (record.after.length !== record.before.length) {
        throw new FieldError('after', `has ${record.after.length} entries but before has ${record.before.length}`);
      }
      if (record.advantages && record.advantages.length !== record.before.length) {
        throw new FieldError('advantages', `has ${record.advantages.length} entries but before has ${record.before.length}`);
      }
      break;
    case 'sample':
      if (record.perToken.length !== record.advantages.tokens) {
        throw new FieldError('perToken', `has ${record.perToken.length} entries but advantages.tokens is ${record.advantages.tokens}`);
      }
      if (record.lossMask && record.lossMask.length !== record.perToken.length) {
        throw new FieldError('lossMask', `has ${record.lossMask.length} entries but perToken has ${record.perToken.length}`);
      }
      if (record.opdClip && record.opdClip.teacherLogp.length !== record.perToken.length) {
        throw new FieldError('opdClip.teacherLogp', `has ${record.opdClip.teacherLogp.length} entries but perToken has ${record.perToken.length}`);
      }
      if (record.opdTopK) {
        const { ids, teacherLogp, term } = record.opdTopK;
        if (ids.length !== record.perToken.length)
          throw new FieldError('opdTopK.ids', `has ${ids.length} sets but perToken has ${record.perToken.length} entries`);
        const long = ids.findIndex((set) => set.length > MAX_TOP_K);
        if (long !== -1 && term !== 'reverse-kl')
          throw new FieldError(
            'opdTopK.ids',
            `set ${long} has ${ids[long].length} ids; more than ${MAX_TOP_K} only for the whole vocabulary of term "reverse-kl"`,
          );
        const bad = ids.findIndex((set, t) => set.length === 0 || teacherLogp[t]?.length !== set.length);
        if (teacherLogp.length !== ids.length || bad !== -1) {
          throw new FieldError('opdTopK.teacherLogp', `must give one log-prob per id of every set (set ${bad === -1 ? ids.length : bad} does not)`);
        }
      }
      break;
    case 'tool_step':
      if (record.turn !== record.stepIndex + 1) throw new FieldError('turn', `is ${record.turn}; it must be stepIndex + 1 (${record.stepIndex + 1})`);
      if (record.raw.length !== record.votes.length) {
        throw new FieldError('raw', `has ${record.raw.length} entries but votes has ${record.votes.length}`);
      }
      if (record.mode === 'outcome' && record.votes.length > 0) throw new FieldError('votes', 'must be empty in outcome mode');
      if (record.final && record.toolResults.length > 0) throw new FieldError('toolResults', 'must be empty for a final answer');
      break;
    case 'version_boundary':
      if (record.to <= record.from) throw new FieldError('to', `is ${record.to}; it must be greater than from (${record.from})`);
      break;
    case 'evaluation':
      if (record.failed !== undefined && record.failed > record.perProblem.length) {
        throw new FieldError('failed', `is ${record.failed}, more than the ${record.perProblem.length} problems scored`);
      }
      break;
    case 'runtime_event':
      if (record.interrupted && record.event !== 'run_resumed')
        throw new FieldError('interrupted', `is set on a "${record.event}" event; only "run_resumed" marks turns`);
      break;
    case 'session_end':
      if (record.mainTurns > record.turns) throw new FieldError('mainTurns', `is ${record.mainTurns}, more than turns (${record.turns})`);
      if (record.unjudgedTurn !== undefined && record.mainTurns === 0) throw new FieldError('unjudgedTurn', 'is set but the session had no main turn');
      break;
    default:
      break;
  }
}

const CHECKERS: { [K in RecordKind]: Checker<Extract<RunRecord, { kind: K }>> } = {
  interaction: interaction satisfies Checker<InteractionRecord>,
  judge_vote: judgeVote satisfies Checker<JudgeVoteRecord>,
  judge_result: judgeResult satisfies Checker<JudgeResultRecord>,
  sample: sample satisfies Checker<SampleRecord>,
  train_step: trainStep satisfies Checker<TrainStepRecord>,
  evaluation: evaluation satisfies Checker<EvaluationRecord>,
  version_boundary: versionBoundary satisfies Checker<VersionBoundaryRecord>,
  session_end: sessionEnd satisfies Checker<SessionEndRecord>,
  tool_step: toolStep satisfies Checker<ToolStepRecord>,
  token_update: tokenUpdate satisfies Checker<TokenUpdateRecord>,
  runtime_event: runtimeEvent satisfies Checker<RuntimeEventRecord>,
  workspace_file: workspaceFile satisfies Checker<WorkspaceFileRecord>,
};

const kind = oneOf(...RECORD_KINDS);

/** Any record: its schema is one of the kinds' (docs/schema/record.schema.json). */
export const recordChecker: Checker<RunRecord> = checker({ oneOf: Object.values(CHECKERS).map((c) => c.schema) }, (value, path) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FieldError('(record)', `must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  }
  const k = kind((value as { kind?: unknown }).kind, 'kind');
  const checked = CHECKERS[k](value, path);
  checkConsistency(checked);
  return checked;
});

/**
 * Checks that a parsed JSON value is a well-formed RunRecord: every field's type, ranges,
 * string and array lengths (RECORD_LIMITS), no unknown fields, and cross-field consistency.
 * The result is a fresh object holding only known fields.
 *
 * @param obj - the parsed JSON value (untrusted)
 * @param where - where it came from, for the message (e.g. "run.jsonl line 12")
 * @throws RecordValidationError naming the first bad field
 */
export function validateRecord(obj: unknown, where: string): RunRecord {
  return runChecker(recordChecker, obj, (e) => new RecordValidationError(where, e.path, e.problem));
}
