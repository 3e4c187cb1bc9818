/**
 * Pure functions that turn a run log (RunRecord[]) into what the views show: the per-step
 * series of the charts, the evaluation series, the conversations, the token table of one turn
 * and the before/after answers. No DOM, no storage; tested in Node (derive.test.ts).
 *
 * Step windows: train step k covers the records after train step k-1 (by `ts`) up to and
 * including train step k. Judge votes and results and generation throughput are counted by
 * window ("what the judges said while this step's batch filled"); rewards are those of the
 * samples the step actually trained (its token_update records), falling back to the window's
 * trainable samples for logs without token_update records.
 */
import { unsignedZero } from '../../rl/numbers';
import { clipState, type ClipState } from '../../rl/ppo';
import { opdAdvantage, type AdvantageWeights } from '../../rl/advantages';
import type { ChatMessage } from '../../rl/messages';
import type {
  EvaluationRecord,
  InteractionRecord,
  JudgeResultRecord,
  JudgeVoteRecord,
  RunRecord,
  SampleRecord,
  SessionEndRecord,
  TokenUpdateRecord,
  TrainStepRecord,
} from '../../rl/records';

/** The evaluation the paper reports (the simulator's rating of the first answer). */
export const PERSONALIZATION = 'personalization';

/** Weights of the paper's combined method (w_binary = w_opd = 1). */
export const DEFAULT_WEIGHTS: AdvantageWeights = { binary: 1, opd: 1 };

function key(session: string, turn: number): string {
  return `${session}\u0000${turn}`;
}

function meanOf(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

function finite(x: number | null | undefined): number | null {
  return typeof x === 'number' && Number.isFinite(x) ? x : null;
}

// ---------------------------------------------------------------------------------------------
// Per-step series

/** One train step as the charts plot it; null where the value is unknown. */
export interface StepPoint {
  step: number;
  /** The train_step record's version (the policy that generated the step's data). */
  version: number;
  ts: number;
  samples: number;
  skipped: string | null;
  /** Mean r_final of the samples trained in the step (null: none had a reward). */
  meanReward: number | null;
  /** Shares of the step window's valid binary votes that were +1, -1 and 0 (null: no vote). */
  votePos: number | null;
  voteNeg: number | null;
  voteZero: number | null;
  /** Accepted hint-judge results / hint-judge results in the step window. */
  opdAcceptance: number | null;
  meanAbsAdv: number | null;
  loss: number | null;
  kl: number | null;
  clipFracLow: number | null;
  clipFracHigh: number | null;
  entropy: number | null;
  /** Rollout-train log-prob gap reported by the engine. */
  logpGap: number | null;
  /** Mean |A_OPD at training - A_OPD at sampling| of the step's OPD tokens (that gap's effect on OPD). */
  opdGap: number | null;
  /** Judged turns the method dropped (no sample) since the previous step; null for older logs. */
  dropped: number | null;
  /** Response tokens of interactions finished in the step window / window seconds. */
  genTokensPerSec: number | null;
  /** Trained tokens / step time. */
  trainTokensPerSec: number | null;
}

/**
 * One point per train_step record, in log order. Skipped steps are kept (with null training
 * statistics where the engine reported none) so that the step axis has no holes.
 */
export function stepSeries(records: readonly RunRecord[]): StepPoint[] {
  const steps: TrainStepRecord[] = [];
  const samples = new Map<string, SampleRecord>();
  const updatesByStep = new Map<number, TokenUpdateRecord[]>();
  for (const r of records) {
    if (r.kind === 'train_step') steps.push(r);
    else if (r.kind === 'sample') samples.set(key(r.session, r.turn), r);
    else if (r.kind === 'token_update') {
      const list = updatesByStep.get(r.step);
      if (list) list.push(r);
      else updatesByStep.set(r.step, [r]);
    }
  }
  // Window k holds timestamps in (ends[k-1], ends[k]]; ends are made non-decreasing.
  const ends: number[] = [];
  for (const s of steps) ends.push(Math.max(s.ts, ends.length ? ends[ends.length - 1] : -Infinity));
  const windowOf = (ts: number): number => {
    let lo = 0;
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid] >= ts) hi = mid;
      else lo = mid + 1;
    }
    return lo < ends.length ? lo : -1;
  };
  const acc = steps.map(() => ({
    pos: 0,
    neg: 0,
    zero: 0,
    hintResults: 0,
    hintAccepted: 0,
    genTokens: 0,
    firstStart: Infinity,
    samples: [] as SampleRecord[],
  }));
  for (const r of records) {
    if (r.kind === 'judge_vote' && r.judge === 'binary') {
      const w = windowOf(r.ts);
      if (w < 0) continue;
      if (r.score === 1) acc[w].pos++;
      else if (r.score === -1) acc[w].neg++;
      else if (r.score === 0) acc[w].zero++;
    } else if (r.kind === 'judge_result' && r.judge === 'hint') {
      const w = windowOf(r.ts);
      if (w < 0) continue;
      acc[w].hintResults++;
      if (r.accepted) acc[w].hintAccepted++;
    } else if (r.kind === 'interaction') {
      const w = windowOf(r.finishedAt);
      if (w < 0) continue;
      acc[w].genTokens += r.tokenIds.length;
      acc[w].firstStart = Math.min(acc[w].firstStart, r.startedAt);
    } else if (r.kind === 'sample' && r.trainable) {
      const w = windowOf(r.ts);
      if (w >= 0) acc[w].samples.push(r);
    }
  }
  return steps.map((s, k) => {
    const a = acc[k];
    const updates = updatesByStep.get(s.step);
    const trained = updates
      ? updates.map((u) => samples.get(key(u.session, u.turn))).filter((x): x is SampleRecord => !!x)
      : a.samples;
    const rewards = trained.map((x) => x.reward).filter((x): x is number => typeof x === 'number');
    const votes = a.pos + a.neg + a.zero;
    const from = k > 0 ? ends[k - 1] : a.firstStart;
    const seconds = (ends[k] - from) / 1000;
    const stepMs = finite(s.stats.stepMs);
    return {
      step: s.step,
      version: s.version,
      ts: s.ts,
      samples: s.samples,
      skipped: s.skipped,
      meanReward: meanOf(rewards),
      votePos: votes ? a.pos / votes : null,
      voteNeg: votes ? a.neg / votes : null,
      voteZero: votes ? a.zero / votes : null,
      opdAcceptance: a.hintResults ? a.hintAccepted / a.hintResults : null,
      meanAbsAdv: finite(s.stats.meanAbsAdv),
      loss: finite(s.stats.loss),
      kl: finite(s.stats.kl),
      clipFracLow: finite(s.stats.clipFracLow),
      clipFracHigh: finite(s.stats.clipFracHigh),
      entropy: finite(s.stats.entropy),
      logpGap: finite(s.stats.logpGap),
      opdGap: finite(s.stats.opdGap),
      dropped: s.dropped ?? null,
      genTokensPerSec: a.genTokens > 0 && seconds > 0 ? a.genTokens / seconds : null,
      trainTokensPerSec: stepMs && stepMs > 0 && s.stats.tokens > 0 ? s.stats.tokens / (stepMs / 1000) : null,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Evaluations

export interface EvalPoint {
  /** Train steps done when the policy was evaluated (the record's step, else counted). */
  step: number;
  version: number;
  ts: number;
  score: number | null;
  /** Problems whose evaluator votes all failed, left out of the score; null for older logs. */
  failed: number | null;
  /** Problems the evaluation scored (failed ones included). */
  problems: number;
}

export interface EvalSeries {
  points: EvalPoint[];
  /** The first evaluation's score: the policy before training. */
  baseline: number | null;
}

/** The evaluations named `name`, in log order, with the first as the baseline. */
export function evalSeries(records: readonly RunRecord[], name: string = PERSONALIZATION): EvalSeries {
  const points: EvalPoint[] = [];
  let stepsDone = 0;
  for (const r of records) {
    if (r.kind === 'train_step') stepsDone = Math.max(stepsDone, r.step);
    else if (r.kind === 'evaluation' && r.name === name) {
      points.push({ step: r.step ?? stepsDone, version: r.version, ts: r.ts, score: finite(r.scores.score), failed: r.failed ?? null, problems: r.perProblem.length });
    }
  }
  return { points, baseline: points.length ? points[0].score : null };
}

// ---------------------------------------------------------------------------------------------
// Conversations

export interface VoteView {
  vote: number;
  score: number | null;
  hint: string | null;
  raw: string;
  version: number;
}

export interface TurnView {
  session: string;
  turn: number;
  turnType: 'main' | 'side';
  /** The policy version that generated the answer. */
  version: number;
  /** The message the policy answered (the request's last message), null when there was none. */
  prompt: ChatMessage | null;
  response: string;
  tokens: number;
  binaryVotes: VoteView[];
  hintVotes: VoteView[];
  binary: JudgeResultRecord | null;
  hint: JudgeResultRecord | null;
  sample: SampleRecord | null;
  /** Train step(s) that used this turn's sample. */
  trainedAt: number[];
  /** The turn has at least one judge result: it can be opened in the token view. */
  judged: boolean;
  /**
   * Judged with no usable hint and no nonzero r_final, so the OPD and Combined methods give it
   * no sample (as the reference drops it); false once a sample exists (logs from before).
   */
  dropped: boolean;
}

export interface SessionView {
  session: string;
  turns: TurnView[];
  end: SessionEndRecord | null;
}

function voteView(v: JudgeVoteRecord): VoteView {
  return { vote: v.vote, score: v.score, hint: v.hint, raw: v.raw, version: v.version };
}

/**
 * Every session's turns in turn order; sessions in the order their first record appears.
 * Judge records for a turn without an interaction record are ignored (nothing to show).
 */
export function conversations(records: readonly RunRecord[]): SessionView[] {
  const sessions = new Map<string, SessionView>();
  const turns = new Map<string, TurnView>();
  const session = (id: string): SessionView => {
    let s = sessions.get(id);
    if (!s) sessions.set(id, (s = { session: id, turns: [], end: null }));
    return s;
  };
  for (const r of records) {
    if (r.kind === 'interaction') {
      const t: TurnView = {
        session: r.session,
        turn: r.turn,
        turnType: r.turnType,
        version: r.version,
        prompt: r.messages.length ? r.messages[r.messages.length - 1] : null,
        response: r.response,
        tokens: r.tokenIds.length,
        binaryVotes: [],
        hintVotes: [],
        binary: null,
        hint: null,
        sample: null,
        trainedAt: [],
        judged: false,
        dropped: false,
      };
      const s = session(r.session);
      const prev = turns.get(key(r.session, r.turn));
      if (prev) s.turns.splice(s.turns.indexOf(prev), 1, t);
      else s.turns.push(t);
      turns.set(key(r.session, r.turn), t);
    } else if (r.kind === 'session_end') {
      session(r.session).end = r;
    }
  }
  for (const r of records) {
    if (r.kind !== 'judge_vote' && r.kind !== 'judge_result' && r.kind !== 'sample' && r.kind !== 'token_update') continue;
    const t = turns.get(key(r.session, r.turn));
    if (!t) continue;
    if (r.kind === 'judge_vote') (r.judge === 'binary' ? t.binaryVotes : t.hintVotes).push(voteView(r));
    else if (r.kind === 'judge_result') {
      if (r.judge === 'binary') t.binary = r;
      else t.hint = r;
      t.judged = true;
    } else if (r.kind === 'sample') t.sample = r;
    else if (!t.trainedAt.includes(r.step)) t.trainedAt.push(r.step);
  }
  for (const s of sessions.values()) {
    s.turns.sort((a, b) => a.turn - b.turn);
    for (const t of s.turns) t.dropped = t.sample === null && t.hint !== null && !t.hint.accepted && (t.binary === null || t.binary.score === 0);
  }
  return [...sessions.values()];
}

// ---------------------------------------------------------------------------------------------
// Token table

export { clipState, type ClipState } from '../../rl/ppo';
export type AdvantageKind = 'opd' | 'binary' | 'combined';

export interface TokenRow {
  index: number;
  id: number;
  /** The token as decoded alone (tokenTexts), or `#id` when the log has no texts. */
  text: string;
  /** The token as it reads in the answer: `text` with the whitespace before it restored. */
  display: string;
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

export interface TokenTable {
  session: string;
  turn: number;
  turnType: 'main' | 'side';
  version: number;
  prompt: ChatMessage | null;
  response: string;
  rFinal: number | null;
  hint: string | null;
  hintAccepted: boolean | null;
  trainable: boolean | null;
  /** The step whose token_update gave `ratio` (the latest), null when not trained yet. */
  trainedAt: number | null;
  epsLow: number;
  epsHigh: number;
  weights: AdvantageWeights;
  rows: TokenRow[];
}

/**
 * Restores the whitespace that decoding each token alone drops: walks `response` and gives each
 * token the whitespace before it. When a token's text cannot be found where expected (byte
 * tokens, normalisation), the remaining tokens keep their own texts.
 */
export function alignTokenTexts(response: string, texts: readonly string[]): string[] {
  const out: string[] = [];
  let pos = 0;
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i];
    if (t.length === 0) {
      // A lone word-boundary piece decodes to nothing: it stands for one space of the answer.
      const n = pos < response.length && /\s/.test(response[pos]) ? 1 : 0;
      out.push(response.slice(pos, pos + n));
      pos += n;
      continue;
    }
    let at = pos;
    while (at < response.length && !response.startsWith(t, at) && /\s/.test(response[at])) at++;
    if (!response.startsWith(t, at)) return out.concat(texts.slice(i));
    out.push(response.slice(pos, at + t.length));
    pos = at + t.length;
  }
  return out;
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
  const display = texts ? alignTokenTexts(inter.response, texts) : null;
  const teacherLogp = hint?.accepted && hint.teacherLogp && hint.teacherLogp.length === n ? hint.teacherLogp : null;
  const rFinal = binary ? binary.score : (sample?.reward ?? null);
  const perToken = sample && sample.perToken.length === n ? sample.perToken : null;
  const upd = update && update.before.length === n && update.after.length === n ? update : null;
  const rebased = upd?.advantages && upd.advantages.length === n ? upd.advantages : null;
  const rows: TokenRow[] = [];
  for (let i = 0; i < n; i++) {
    const student = inter.logprobs[i];
    const teacher = teacherLogp ? teacherLogp[i] : null;
    const combined = perToken ? perToken[i] : null;
    const before = upd ? upd.before[i] : null;
    const after = upd ? upd.after[i] : null;
    const ratio = before !== null && after !== null ? Math.exp(after - before) : null;
    const trained = rebased ? rebased[i] : upd ? combined : null;
    const opd = teacher !== null ? opdAdvantage(teacher, student) : null;
    const text = texts ? texts[i] : `#${inter.tokenIds[i]}`;
    rows.push({
      index: i,
      id: inter.tokenIds[i],
      text,
      display: display ? display[i] : text,
      student,
      teacher,
      opd,
      opdTrained: teacher === null || before === null ? null : rebased ? opdAdvantage(teacher, before) : opd,
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
    session,
    turn,
    turnType: inter.turnType,
    version: inter.version,
    prompt: inter.messages.length ? inter.messages[inter.messages.length - 1] : null,
    response: inter.response,
    rFinal,
    hint: hint?.hint ?? null,
    hintAccepted: hint ? hint.accepted : null,
    trainable: sample ? sample.trainable : null,
    trainedAt: upd ? upd.step : null,
    epsLow: opts.epsLow,
    epsHigh: opts.epsHigh,
    weights,
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

// ---------------------------------------------------------------------------------------------
// Before / after

export interface AnswerView {
  id: string;
  text: string | null;
  score: number | null;
  version: number;
  step: number | null;
  /** The whole evaluation's score. */
  evalScore: number | null;
  /** The evaluation's problems left out of evalScore because their votes all failed; null for older logs. */
  evalFailed: number | null;
}

export interface BeforeAfterProblem {
  id: string;
  baseline: AnswerView;
  /** The latest evaluation's answer; null when there is only the baseline. */
  latest: AnswerView | null;
}

function answerOf(e: EvaluationRecord, id: string): AnswerView | null {
  const p = e.perProblem.find((x) => x.id === id);
  if (!p) return null;
  return {
    id,
    text: p.detail ?? null,
    score: finite(p.score),
    version: e.version,
    step: e.step ?? null,
    evalScore: finite(e.scores.score),
    evalFailed: e.failed ?? null,
  };
}

/**
 * Each problem of the first evaluation named `name` with its answer there (the baseline) and in
 * the latest such evaluation (the paper's Figure 2).
 */
export function beforeAfter(records: readonly RunRecord[], name: string = PERSONALIZATION): BeforeAfterProblem[] {
  const evals = records.filter((r): r is EvaluationRecord => r.kind === 'evaluation' && r.name === name);
  if (evals.length === 0) return [];
  const first = evals[0];
  const last = evals.length > 1 ? evals[evals.length - 1] : null;
  const out: BeforeAfterProblem[] = [];
  for (const p of first.perProblem) {
    const baseline = answerOf(first, p.id);
    if (!baseline) continue;
    out.push({ id: p.id, baseline, latest: last ? answerOf(last, p.id) : null });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Formatting shared by the views

/** A number for display: fixed digits, a real minus sign, an en dash for missing values. */
export function fmt(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const s = Math.abs(x).toFixed(digits);
  return (x < 0 && Number(s) !== 0 ? '\u2212' : '') + s;
}

/** A signed number for display (+0.500 / −0.500). */
export function fmtSigned(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  const s = fmt(x, digits);
  return x > 0 && Number(Math.abs(x).toFixed(digits)) !== 0 ? `+${s}` : s;
}

/** A judge vote as shown: +1, −1, 0, or "failed" for a reply without a usable \boxed{}. */
export function voteText(score: number | null): string {
  return score === null ? 'failed' : fmtSigned(score, 0);
}

/** The colour class of a signed value: pos, neg, zero, or none when missing. */
export function signClass(x: number | null | undefined): string {
  return x === null || x === undefined ? 'none' : x > 0 ? 'pos' : x < 0 ? 'neg' : 'zero';
}
