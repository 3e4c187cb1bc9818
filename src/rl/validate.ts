/** Checks a whole run record: its kind's checker (record-shapes.ts), then the rules across fields. */
import { FieldError, checker, oneOf, runChecker, type Checker } from '../base/check';
import { RecordValidationError } from './errors';
import { MAX_TOP_K } from './preset-limits';
import { RECORD_KINDS, type RecordKind, type RunRecord } from './records';
import {
  interactionChecker,
  judgeVoteChecker,
  judgeResultChecker,
  sampleChecker,
  trainStepChecker,
  evaluationChecker,
  versionBoundaryChecker,
  sessionEndChecker,
  tokenUpdateChecker,
  runtimeEventChecker,
  toolStepChecker,
  workspaceFileChecker,
} from './record-shapes';

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
  interaction: interactionChecker,
  judge_vote: judgeVoteChecker,
  judge_result: judgeResultChecker,
  sample: sampleChecker,
  train_step: trainStepChecker,
  evaluation: evaluationChecker,
  version_boundary: versionBoundaryChecker,
  session_end: sessionEndChecker,
  tool_step: toolStepChecker,
  token_update: tokenUpdateChecker,
  runtime_event: runtimeEventChecker,
  workspace_file: workspaceFileChecker,
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
