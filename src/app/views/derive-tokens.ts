/**
 * The per-token picture of one turn: log-probs, the advantages of each kind, and what the step
 * that trained it did to each token. Pure; tested in Node (derive.test.ts).
 */
import { unsignedZero } from '../../rl/numbers';
import { clipState, type ClipState } from '../../rl/ppo';
import { opdAdvantage, type AdvantageWeights } from '../../rl/advantages';
import { clipDifference } from '../../rl/topk-hints';
import { readable, readTokens } from '../../rl/readable-text';
import { turnHeader, type TurnHeader } from './record-values';
import type { InteractionRecord, JudgeResultRecord, RunRecord, SampleRecord, TokenUpdateRecord } from '../../rl/records';

/** Weights of the paper's combined method (w_binary = w_opd = 1). */
export const DEFAULT_WEIGHTS: AdvantageWeights = { binary: 1, opd: 1 };

export type AdvantageKind = 'opd' | 'binary' | 'combined';

export interface TokenRow {
  index: number;
  id: number;
  /** The token as decoded alone (tokenTexts, byte tokens in byte notation), or `#id` when the log has no texts. */
  text: string;
  /** The token as it reads in the answer (readTokens): the whitespace before it, its characters, escapes for what is not text. */
  display: string;
  /** A byte token's bytes; null for a token that is text. */
  bytes: number[] | null;
  /** For a byte token, what its run of byte tokens reads as (the character it is part of, or an escape). */
  run: string | null;
  /**
   * A token the log kept as "�" (logs from before tokens kept their bytes): its bytes are unknown;
   * `run` is what it makes with the tokens beside it, where the answer tells.
   */
  lost: boolean;
  student: number;
  teacher: number | null;
  /** teacher - student (the rollout's log-prob), as judged; null without an accepted hint. */
  opd: number | null;
  /**
   * teacher - old (the trainer's log-prob before the step), the OPD term as the step trained it;
   * null without an accepted hint or before the turn is trained. Logs written before the
   * trainer re-based OPD trained teacher - student, so for them this equals `opd`.
   */
  opdTrained: number | null;
  /** r_final * w_binary; null without a binary judge result. */
  binary: number | null;
  /** The advantage as judged (sample.perToken); null without a sample. */
  combined: number | null;
  /**
   * The advantage the step trained (the token update's, OPD re-based on the old policy; for
   * older logs sample.perToken, which they trained); null when not trained yet.
   */
  trained: number | null;
  /** Log-probs before and after the step that trained the turn; null when not trained yet. */
  before: number | null;
  after: number | null;
  /** exp(after - before); null when not trained yet. */
  ratio: number | null;
  clip: ClipState | null;
}

export interface TokenTable extends TurnHeader {
  rFinal: number | null;
  hint: string | null;
  hintAccepted: boolean | null;
  trainable: boolean | null;
  /** The step whose token_update gave `ratio` (the latest), null when not trained yet. */
  trainedAt: number | null;
  epsLow: number;
  epsHigh: number;
  weights: AdvantageWeights;
  /** The bound on |A_OPD| the run's preset set (top-k hint selection); 0 = none. */
  opdClip: number;
  rows: TokenRow[];
}

/** The per-token picture of one turn, or null when the log has no interaction for it. */
export function tokenTable(
  records: readonly RunRecord[],
  session: string,
  turn: number,
  opts: { epsLow: number; epsHigh: number; weights?: AdvantageWeights },
): TokenTable | null {
  let inter: InteractionRecord | null = null;
  let binary: JudgeResultRecord | null = null;
  let hint: JudgeResultRecord | null = null;
  let sample: SampleRecord | null = null;
  let update: TokenUpdateRecord | null = null;
  for (const r of records) {
    if (!('session' in r) || r.session !== session || !('turn' in r) || r.turn !== turn) continue;
    if (r.kind === 'interaction') inter = r;
    else if (r.kind === 'judge_result') {
      if (r.judge === 'binary') binary = r;
      else hint = r;
    } else if (r.kind === 'sample') sample = r;
    else if (r.kind === 'token_update') update = r;
  }
  if (!inter) return null;
  const weights = opts.weights ?? DEFAULT_WEIGHTS;
  const n = inter.tokenIds.length;
  const texts = inter.tokenTexts && inter.tokenTexts.length === n ? inter.tokenTexts : null;
  const read = texts ? readTokens(inter.response, texts).tokens : null;
  const teacherLogp = hint?.accepted && hint.teacherLogp && hint.teacherLogp.length === n ? hint.teacherLogp : null;
  const rFinal = binary ? binary.score : (sample?.reward ?? null);
  const perToken = sample && sample.perToken.length === n ? sample.perToken : null;
  const upd = update && update.before.length === n && update.after.length === n ? update : null;
  const rebased = upd?.advantages && upd.advantages.length === n ? upd.advantages : null;
  // A preset that clips A_OPD (top-k hint selection) clipped both the judged and the trained term.
  const opdClip = sample?.opdClip?.clip ?? hint?.selection?.clip ?? 0;
  const opdOf = (teacher: number, student: number) => clipDifference(opdAdvantage(teacher, student), opdClip);
  const rows: TokenRow[] = [];
  for (let i = 0; i < n; i++) {
    const student = inter.logprobs[i];
    const teacher = teacherLogp ? teacherLogp[i] : null;
    const combined = perToken ? perToken[i] : null;
    const before = upd ? upd.before[i] : null;
    const after = upd ? upd.after[i] : null;
    const ratio = before !== null && after !== null ? Math.exp(after - before) : null;
    const trained = rebased ? rebased[i] : upd ? combined : null;
    const opd = teacher !== null ? opdOf(teacher, student) : null;
    const text = texts ? readable(texts[i]) : `#${inter.tokenIds[i]}`;
    rows.push({
      index: i,
      id: inter.tokenIds[i],
      text,
      display: read ? read[i].text : text,
      bytes: read ? read[i].bytes : null,
      run: read ? read[i].run : null,
      lost: read?.[i].lost === true,
      student,
      teacher,
      opd,
      opdTrained: teacher === null || before === null ? null : rebased ? opdOf(teacher, before) : opd,
      binary: rFinal !== null ? unsignedZero(rFinal * weights.binary) : null,
      combined,
      trained,
      before,
      after,
      ratio,
      clip: ratio !== null && trained !== null ? clipState(trained, ratio, opts.epsLow, opts.epsHigh) : null,
    });
  }
  return {
    ...turnHeader(inter),
    rFinal,
    hint: hint?.hint ?? null,
    hintAccepted: hint ? hint.accepted : null,
    trainable: sample ? sample.trainable : null,
    trainedAt: upd ? upd.step : null,
    epsLow: opts.epsLow,
    epsHigh: opts.epsHigh,
    weights,
    opdClip,
    rows,
  };
}

/** The advantage of one kind for a row; combined is what the step trained, once it has. */
export function advantageOf(row: TokenRow, kind: AdvantageKind): number | null {
  return kind === 'opd' ? row.opd : kind === 'binary' ? row.binary : (row.trained ?? row.combined);
}

/** Largest |A| of a kind over the rows (0 when none): the half-width of the colour scale. */
export function advantageRange(rows: readonly TokenRow[], kind: AdvantageKind): number {
  let m = 0;
  for (const r of rows) {
    const a = advantageOf(r, kind);
    if (a !== null && Number.isFinite(a)) m = Math.max(m, Math.abs(a));
  }
  return m;
}
