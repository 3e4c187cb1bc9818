/**
 * Top-k hint selection, the reference's later top-k select run (a Combined run, not in 0d034dd): the hint judge's accepted hints are all
 * kept as candidates, each conditions its own teacher, and the candidate whose teacher ranks the
 * same next tokens highest as the student does is the one the student is distilled toward.
 *
 * Notation (one turn, response tokens t = 1..T, candidates c = 0..C-1):
 *   S_t       the student's k most likely next tokens at t (under s_t)
 *   P_{c,t}   candidate c's teacher's k most likely next tokens at t (under s_t + hint c)
 *   O[c][t] = |S_t ∩ P_{c,t}|, an integer in 0..k
 *   'sequence': one winner c* = argmax_c sum_t O[c][t] for the whole turn
 *   'token':    a winner c*(t) = argmax_c O[c][t] for each token
 * Ties go to the lower index, and candidates are ordered shortest hint first, so a tie keeps the
 * shorter hint. A_t = clip(log pi_T,c*(a_t) - log pi_theta(a_t), -clip, +clip).
 */
import { InvalidArgumentError, LengthMismatchError } from './errors';
import { assertFinite, unsignedZero } from './numbers';
import type { HintVote } from './hints';
import type { Infer } from '../base/check';
import { int, num, object, oneOf } from '../base/check';
import { MAX_TOP_K, MAX_VOTES } from './preset-limits';

/** How the hint that conditions the teacher is chosen. */
export type HintRule = HintSelection['rule'];

/** How the hint that conditions the teacher is chosen, and the clip on A_OPD (HintSelection). */
export const hintSelectionShape = object({
  /**
   * 'longest' (the paper): the longest accepted hint, one teacher pass.
   * 'topk-sequence' (the reference's top-k select run): every accepted hint is a candidate, and
   * the one with the largest top-k overlap summed over the response wins the whole turn.
   * 'topk-token': the winner is chosen token by token.
   */
  rule: oneOf('longest', 'topk-sequence', 'topk-token'),
  /** Most candidate hints kept per turn, shortest first (reference: 3). */
  maxCandidates: int(1, MAX_VOTES),
  /** Size of the student's and each teacher's top-k next-token set (reference: 4). */
  k: int(1, MAX_TOP_K),
  /** |A_OPD| is clipped to this many nats per token; 0 = no clip (paper). Reference top-k run: 1. */
  clip: num(0, 1000),
});

/** The hint selection settings of a preset: their fields and docs are the preset checker's (hintSelectionShape in ./presets). */
export type HintSelection = Infer<typeof hintSelectionShape>;

/** The paper's rule: the longest hint, no clip. A preset without hintSelection means this. */
export const LONGEST_HINT: HintSelection = { rule: 'longest', maxCandidates: 3, k: 4, clip: 0 };

/**
 * The reference's top-k select run (openclaw-combine/run_qwen3_4b_openclaw_topk_select.sh, later than 0d034dd): up to 3 candidates
 * from 3 hint-judge votes, top-4 sets, sequence-level winner, teacher-minus-student clipped to 1.
 */
export const TOPK_HINT_SELECTION: HintSelection = { rule: 'topk-sequence', maxCandidates: 3, k: 4, clip: 1 };

/** Hint-judge votes the reference's top-k run asks for per turn (its PRM_M). */
export const TOPK_HINT_VOTES = 3;

/** Whether a rule needs the top-k sets (and so one teacher pass per candidate). */
export function usesTopK(rule: HintRule): boolean {
  return rule !== 'longest';
}

function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * The candidate hints of a turn: every vote scored +1 whose stripped hint is longer than
 * `minChars` code points, without repeats (same text after stripping), shortest first (equally
 * long ones in vote order), at most `maxCandidates`.
 */
export function hintCandidates(votes: readonly HintVote[], minChars: number, maxCandidates: number): string[] {
  if (!Number.isInteger(maxCandidates) || maxCandidates < 1) {
    throw new InvalidArgumentError(`maxCandidates is ${maxCandidates}; keep at least one candidate hint.`);
  }
  const seen = new Set<string>();
  const out: { hint: string; length: number; at: number }[] = [];
  for (const vote of votes) {
    if (vote.score !== 1 || vote.hint === null) continue;
    const hint = vote.hint.trim();
    const length = codePointLength(hint);
    if (length <= minChars || seen.has(hint)) continue;
    seen.add(hint);
    out.push({ hint, length, at: out.length });
  }
  out.sort((a, b) => a.length - b.length || a.at - b.at);
  return out.slice(0, maxCandidates).map((c) => c.hint);
}

/** |a ∩ b| for two small sets of token ids (each id at most once per set). */
export function overlapSize(a: readonly number[], b: readonly number[]): number {
  let n = 0;
  for (const x of a) if (b.includes(x)) n++;
  return n;
}

/**
 * O[t] = |S_t ∩ P_t| for every response token.
 *
 * @param student - the student's top-k ids per response token
 * @param teacher - one candidate teacher's top-k ids per response token
 * @throws LengthMismatchError when they cover different numbers of tokens
 */
export function overlapPerToken(student: readonly (readonly number[])[], teacher: readonly (readonly number[])[]): number[] {
  if (student.length !== teacher.length) throw new LengthMismatchError('overlapPerToken(student, teacher)', student.length, teacher.length);
  return student.map((s, t) => overlapSize(s, teacher[t]));
}

/** Which candidate won, and by how much. */
export interface HintChoice {
  /** The winning candidate for the turn ('sequence'), or the one that won most tokens ('token'). */
  winner: number;
  /** sum_t O[c][t] for each candidate c. */
  overlap: number[];
  /** The winning candidate of every response token (all `winner` under 'sequence'). */
  perToken: number[];
  /** Tokens won by each candidate (under 'sequence', all of them by the winner). */
  tokenWins: number[];
}

/** Index of the largest value; the first of equal ones. */
function argmaxFirst(xs: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < xs.length; i++) if (xs[i] > xs[best]) best = i;
  return best;
}

/**
 * Chooses the candidate hint by top-k overlap with the student.
 *
 * @param student - the student's top-k ids per response token (T entries)
 * @param candidates - for each candidate hint (shortest first), its teacher's top-k ids per response token
 * @param mode - 'sequence': one winner by summed overlap; 'token': a winner per token
 * @throws InvalidArgumentError when there is no candidate; LengthMismatchError on a length mismatch
 */
export function chooseHintByOverlap(
  student: readonly (readonly number[])[],
  candidates: readonly (readonly (readonly number[])[])[],
  mode: 'sequence' | 'token',
): HintChoice {
  if (candidates.length === 0) throw new InvalidArgumentError('chooseHintByOverlap needs at least one candidate hint.');
  const o = candidates.map((c) => overlapPerToken(student, c));
  const overlap = o.map((row) => row.reduce((a, b) => a + b, 0));
  const T = student.length;
  const perToken =
    mode === 'sequence' ? new Array<number>(T).fill(argmaxFirst(overlap)) : Array.from({ length: T }, (_, t) => argmaxFirst(o.map((row) => row[t])));
  const tokenWins = candidates.map(() => 0);
  for (const c of perToken) tokenWins[c]++;
  const winner = mode === 'sequence' ? argmaxFirst(overlap) : argmaxFirst(tokenWins);
  return { winner, overlap, perToken, tokenWins };
}

/**
 * The teacher log-prob of each response token under its winning candidate.
 *
 * @param candidateLogp - per candidate, log pi_T,c(a_t) per response token
 * @param perToken - the winning candidate of every token (HintChoice.perToken)
 */
export function winningTeacherLogp(candidateLogp: readonly (readonly number[])[], perToken: readonly number[]): number[] {
  return perToken.map((c, t) => {
    const row = candidateLogp[c];
    if (!row) throw new InvalidArgumentError(`token ${t} is won by candidate ${c}, which has no log-probs.`);
    if (row.length !== perToken.length) throw new LengthMismatchError(`teacher log-probs of candidate ${c}`, perToken.length, row.length);
    return row[t];
  });
}

/** x clipped to [-clip, +clip]; clip 0 leaves it as it is. */
export function clipDifference(x: number, clip: number): number {
  if (!(clip > 0)) return x;
  return unsignedZero(Math.min(clip, Math.max(-clip, x)));
}

/**
 * A_t = clip(log pi_teacher(a_t) - log pi_student(a_t), -clip, +clip) per response token, the
 * reference's top-k run's bound on the teacher-minus-student difference (OPENCLAW_TOPK_ADV_DIFF_CLIP).
 *
 * @param clip - the bound in nats; 0 = none (then this is opdAdvantages)
 * @throws LengthMismatchError, InvalidArgumentError (non-finite log-prob, negative clip)
 */
export function clippedOpdAdvantages(teacherLogp: readonly number[], studentLogp: readonly number[], clip: number): number[] {
  if (!(clip >= 0) || !Number.isFinite(clip)) throw new InvalidArgumentError(`clip is ${clip}; use 0 (no clip) or a positive number of nats.`);
  if (teacherLogp.length !== studentLogp.length)
    throw new LengthMismatchError('clippedOpdAdvantages(teacherLogp, studentLogp)', studentLogp.length, teacherLogp.length);
  return teacherLogp.map((t, i) => {
    assertFinite(`teacherLogp[${i}]`, t);
    assertFinite(`studentLogp[${i}]`, studentLogp[i]);
    return clipDifference(t - studentLogp[i], clip);
  });
}
