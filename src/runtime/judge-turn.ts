/**
 * Judging one closed main turn: the binary judge's m votes become r_final, the hint judge's
 * votes may give a hint, and a hint gives OPD advantages from the teacher's log-probs under
 * the hint-enhanced context (docs/method.md: #binary-rl, #hindsight-hints,
 * #opd-on-policy-distillation-from-the-hint). Every vote and decision becomes a record.
 */
import { opdAdvantages } from '../rl/advantages';
import { chooseHintByOverlap, clippedOpdAdvantages, hintCandidates, usesTopK, winningTeacherLogp, type HintSelection } from '../rl/topk-hints';
import { parseBoxedScore } from '../rl/boxed';
import { stripEnvelope, type ClientEnvelope } from '../rl/envelopes';
import { appendHint, parseHintVote, selectBestHint, type HintVote } from '../rl/hints';
import { buildBinaryJudgePrompt, buildHintJudgePrompt } from '../rl/judge';
import type { HintShuffler, ShuffleWindow } from '../rl/hint-shuffle';
import { hintSelectionOf, hintSourceOf, KL_TERM_KEYS, klTermOf, opdTermOf, type KlTermSettings, type MethodPreset } from '../rl/presets';
import { MAX_FULL_KL_VOCAB } from '../rl/reverse-kl';
import type { ChatMessage } from '../rl/messages';
import type { HintSelectionRecord, JudgeKind, JudgeResultRecord, JudgeVoteRecord } from '../rl/records';
import type { PolicyResponse, TurnJudgement } from '../rl/samples';
import type { ClosedTurn } from '../rl/sessions';
import { majorityVote } from '../rl/votes';
import type { TextGenerator } from '../generators/generator';
import type { PolicyService } from './policy-service';

export interface JudgeDeps {
  judge: TextGenerator;
  hintJudge: TextGenerator;
  policy: Pick<PolicyService, 'score' | 'scoreTopK'>;
  preset: MethodPreset;
  seed: number;
  now: () => number;
  signal?: AbortSignal;
  /** The run's pool of accepted hints, for a preset whose hintSource is "shuffled". */
  shuffler?: HintShuffler;
  /** Under a fixed schedule: the sessions the shuffled hint may come from (ShuffleWindow). */
  shuffleWindow?: ShuffleWindow;
  /** The judge's hint rewritten for another user (the scenario's), for a preset whose hintSource is "other-child". */
  rewriteHint?: HintRewrite;
  /** What a served agent wraps its user's words in (CLIENT_ENVELOPES): the judges read the words alone. */
  envelopes?: readonly ClientEnvelope[];
}

/** Another user, and the judge's hint as it would read for them (the storyteller's other child). */
export interface HintRewrite {
  /** Who the hint is rewritten for, as the judge_result record names them (`hintFor`). */
  user: string;
  rewrite: (hint: string) => string;
}

export interface JudgedTurn {
  judgement: TurnJudgement;
  records: (JudgeVoteRecord | JudgeResultRecord)[];
}

type Turn = ClosedTurn<PolicyResponse>;

/** Seeds one judge's votes on one turn may use: more than a preset's MAX_VOTES. */
const JUDGE_SEEDS = 100;
/** Seeds one turn may use: both judges' ranges, with room to spare. */
const TURN_SEEDS = 1000;

/**
 * The sampling seed of one judge vote. Each turn owns TURN_SEEDS consecutive seeds from the
 * run's seed, the binary judge the first JUDGE_SEEDS of them and the hint judge the next; a
 * preset asks at most MAX_VOTES < JUDGE_SEEDS votes of a judge, so no two votes of a session
 * share a seed, and a vote's seed does not change when the other judge's vote count does.
 */
export function voteSeed(seed: number, turn: number, judge: JudgeKind, vote: number): number {
  return seed + turn * TURN_SEEDS + (judge === 'hint' ? JUDGE_SEEDS : 0) + vote;
}

export async function judgeTurn(turn: Turn, d: JudgeDeps): Promise<JudgedTurn> {
  const records: JudgedTurn['records'] = [];
  if (!turn.nextState) return { judgement: { reward: null, opd: null }, records };
  const { binaryVotes, hintVotes, temperature, maxNewTokens } = d.preset.judge;
  const base = { version: turn.version, session: turn.session, turn: turn.turn };
  const opts = (judge: JudgeKind, vote: number) => ({ temperature, maxNewTokens, seed: voteSeed(d.seed, turn.turn, judge, vote), signal: d.signal });
  const action = turn.response.text;
  const { nextState, read } = personsWords(turn.nextState, d.envelopes);

  const [binaryTexts, hintTexts] = await Promise.all([
    Promise.all(Array.from({ length: binaryVotes }, (_, i) => d.judge.generate(buildBinaryJudgePrompt(action, nextState), opts('binary', i)))),
    Promise.all(Array.from({ length: hintVotes }, (_, i) => d.hintJudge.generate(buildHintJudgePrompt(action, nextState), opts('hint', i)))),
  ]);

  let reward: number | null = null;
  if (binaryVotes > 0) {
    const scores = binaryTexts.map((raw, vote) => {
      const score = parseBoxedScore(raw);
      records.push({ kind: 'judge_vote', ...base, ts: d.now(), judge: 'binary', vote, raw, score, hint: null });
      return score;
    });
    reward = majorityVote(scores);
    records.push({
      kind: 'judge_result',
      ...base,
      ts: d.now(),
      judge: 'binary',
      score: reward,
      accepted: reward !== 0,
      hint: null,
      teacherLogpCount: 0,
      ...read,
    });
  }

  let opd: number[] | null = null;
  let teacherLogp: number[] | null = null;
  let opdClip: { clip: number; teacherLogp: number[] } | null = null;
  let opdTopK: NonNullable<TurnJudgement['opdTopK']> | null = null;
  const distill = opdTermOf(d.preset) === 'topk-distill';
  const klTerm = klTermOf(d.preset);
  if (hintVotes > 0) {
    const votes: HintVote[] = hintTexts.map((raw, vote) => {
      const v = parseHintVote(raw);
      records.push({ kind: 'judge_vote', ...base, ts: d.now(), judge: 'hint', vote, raw, score: v.score, hint: v.hint });
      return v;
    });
    const rule: HintSelection = hintSelectionOf(d.preset);
    let hint: string | null;
    let judgeHint: string | undefined;
    let hintFor: string | undefined;
    let selection: HintSelectionRecord | undefined;
    if (usesTopK(rule.rule)) {
      const picked = await selectByTopK(turn, votes, rule, d, distill);
      hint = picked?.hint ?? null;
      teacherLogp = picked?.teacherLogp ?? null;
      selection = picked?.selection;
      if (picked?.sets) opdTopK = { clip: rule.clip, ...picked.sets };
      if (picked && klTerm) ({ sampled: teacherLogp, target: opdTopK } = await klTarget(turn, picked.candidates, picked.perToken, klTerm, d));
    } else {
      hint = selectBestHint(votes, d.preset.judge.minHintChars);
      if (hint !== null && hintSourceOf(d.preset) === 'shuffled') {
        if (!d.shuffler) throw new Error('a preset with hintSource "shuffled" needs the run\'s HintShuffler in JudgeDeps.shuffler');
        judgeHint = hint;
        hint = d.shuffler.swap(turn.version, turn.session, hint, voteSeed(d.seed, turn.turn, 'hint', JUDGE_SEEDS - 1), d.shuffleWindow);
      }
      if (hint !== null && hintSourceOf(d.preset) === 'other-child') {
        if (!d.rewriteHint)
          throw new Error('a preset with hintSource "other-child" needs the scenario\'s other user in JudgeDeps.rewriteHint (only the storyteller has one)');
        judgeHint = hint;
        hintFor = d.rewriteHint.user;
        hint = d.rewriteHint.rewrite(hint);
      }
      if (hint !== null && turn.response.tokenIds.length > 0) {
        const teacherMessages = appendHint(turn.messages, hint, d.preset.advantage.teacherContext);
        const tokenIds = [...turn.response.tokenIds];
        if (distill) {
          const [student] = await topKScorer(d)([{ messages: turn.messages, tokenIds }], 'current', rule.k);
          const [teacher] = await topKScorer(d)([{ messages: teacherMessages, tokenIds, at: student.topIds }], d.preset.advantage.teacher, rule.k);
          teacherLogp = teacher.logprobs;
          opdTopK = { clip: rule.clip, ids: student.topIds, teacherLogp: teacher.atLogp! };
        } else if (klTerm) ({ sampled: teacherLogp, target: opdTopK } = await klTarget(turn, [hint], null, klTerm, d));
        else [teacherLogp] = await d.policy.score([{ messages: teacherMessages, tokenIds }], d.preset.advantage.teacher);
      }
    }
    if (teacherLogp) {
      // Against the rollout's log-probs, as logged; the trainer re-bases it on the policy it trains
      // (and clips it again there, when the preset clips).
      opd = rule.clip > 0 ? clippedOpdAdvantages(teacherLogp, turn.response.logprobs, rule.clip) : opdAdvantages(teacherLogp, turn.response.logprobs);
      if (rule.clip > 0) opdClip = { clip: rule.clip, teacherLogp };
    }
    records.push({
      kind: 'judge_result',
      ...base,
      ts: d.now(),
      judge: 'hint',
      score: hint === null ? 0 : 1,
      accepted: opd !== null,
      hint,
      ...(judgeHint !== undefined ? { judgeHint } : {}),
      ...(hintFor !== undefined ? { hintFor } : {}),
      teacherLogpCount: opd?.length ?? 0,
      ...(teacherLogp ? { teacherLogp } : {}),
      ...(selection ? { selection } : {}),
      ...read,
    });
  }
  return { judgement: { reward, opd, ...(opdClip ? { opdClip } : {}), ...(opd && opdTopK ? { opdTopK } : {}) }, records };
}

/**
 * The next state as the judges read it: a user's message without its client's envelope, and the
 * record's note of both texts where one was stripped.
 */
function personsWords(
  message: ChatMessage,
  envelopes: readonly ClientEnvelope[] | undefined,
): { nextState: ChatMessage; read: Pick<JudgeResultRecord, 'nextState'> } {
  if (!envelopes || message.role !== 'user') return { nextState: message, read: {} };
  const cleaned = stripEnvelope(message.content, envelopes);
  if (cleaned === message.content) return { nextState: message, read: {} };
  return { nextState: { ...message, content: cleaned }, read: { nextState: { raw: message.content, cleaned } } };
}

/** The policy's top-k scorer, which top-k hint selection and the top-k OPD term need. */
function topKScorer(d: JudgeDeps): NonNullable<JudgeDeps['policy']['scoreTopK']> {
  const scoreTopK = d.policy.scoreTopK?.bind(d.policy);
  if (!scoreTopK)
    throw new Error(
      'this policy cannot score top-k next-token sets, which top-k hint selection and the top-k and KL OPD terms need; set advantage.hintSelection.rule to "longest" and advantage.opdTerm to "sampled-token"',
    );
  return scoreTopK;
}

/**
 * Top-k hint selection: every candidate hint conditions its own teacher pass, the student is
 * scored once without a hint, and the candidate whose teacher's top-k next-token sets share the
 * most ids with the student's wins (per turn, or per token). The student's sets come from the
 * policy serving when the turn is judged; the reference takes them from the trainer's old policy.
 *
 * With `distill` (the top-k OPD term), each teacher is also read over the student's sets, and
 * `sets` holds those of the winner of every token.
 *
 * @returns null when no vote gives a candidate (no OPD sample) or the response is empty
 */
async function selectByTopK(
  turn: Turn,
  votes: readonly HintVote[],
  rule: HintSelection,
  d: JudgeDeps,
  distill: boolean,
): Promise<{
  hint: string;
  teacherLogp: number[];
  selection: HintSelectionRecord;
  sets?: { ids: number[][]; teacherLogp: number[][] };
  candidates: string[];
  perToken: number[];
} | null> {
  const candidates = hintCandidates(votes, d.preset.judge.minHintChars, rule.maxCandidates);
  const tokenIds = [...turn.response.tokenIds];
  if (candidates.length === 0 || tokenIds.length === 0) return null;
  const scoreTopK = topKScorer(d);
  const [student] = await scoreTopK([{ messages: turn.messages, tokenIds }], 'current', rule.k);
  const teachers = await scoreTopK(
    candidates.map((hint) => ({
      messages: appendHint(turn.messages, hint, d.preset.advantage.teacherContext),
      tokenIds,
      ...(distill ? { at: student.topIds } : {}),
    })),
    d.preset.advantage.teacher,
    rule.k,
  );
  const choice = chooseHintByOverlap(
    student.topIds,
    teachers.map((t) => t.topIds),
    rule.rule === 'topk-token' ? 'token' : 'sequence',
  );
  return {
    hint: candidates[choice.winner],
    candidates,
    perToken: choice.perToken,
    teacherLogp: winningTeacherLogp(
      teachers.map((t) => t.logprobs),
      choice.perToken,
    ),
    ...(distill ? { sets: { ids: student.topIds, teacherLogp: choice.perToken.map((c, t) => teachers[c].atLogp![t]) } } : {}),
    selection: {
      rule: rule.rule === 'topk-token' ? 'topk-token' : 'topk-sequence',
      k: rule.k,
      clip: rule.clip,
      tokens: tokenIds.length,
      winner: choice.winner,
      candidates: candidates.map((hint, i) => ({ hint, overlap: choice.overlap[i], tokensWon: choice.tokenWins[i] })),
    },
  };
}

/** k for scoreTopK that asks for every vocabulary id (score gives min(k, vocabulary)). */
const EVERY_ID = 2 ** 31 - 1;

/**
 * A KL term's target (src/rl/reverse-kl.ts, src/rl/forward-kl.ts): the teacher's distribution at every
 * response position, conditioned on the winning hint of that position (`perToken` indexes
 * `hints`; null: hints[0] throughout). One pass finds each teacher's k most likely ids (every id
 * for k = 0), a second reads its log-probs over them; `sampled` is its log-prob of each written token.
 *
 * @throws Error when k = 0 and the vocabulary is past MAX_FULL_KL_VOCAB
 */
async function klTarget(
  turn: Turn,
  hints: readonly string[],
  perToken: readonly number[] | null,
  r: KlTermSettings,
  d: JudgeDeps,
): Promise<{ sampled: number[]; target: NonNullable<TurnJudgement['opdTopK']> }> {
  const scoreTopK = topKScorer(d);
  const tokenIds = [...turn.response.tokenIds];
  const used = perToken ? [...new Set(perToken)].sort((a, b) => a - b) : [0];
  const items = used.map((c) => ({ messages: appendHint(turn.messages, hints[c], d.preset.advantage.teacherContext), tokenIds }));
  const sets = await scoreTopK(items, d.preset.advantage.teacher, r.k > 0 ? r.k : EVERY_ID);
  const vocabulary = sets[0].topIds[0]?.length ?? 0;
  if (r.k === 0 && vocabulary > MAX_FULL_KL_VOCAB)
    throw new Error(
      `advantage.${KL_TERM_KEYS[r.term]}.k is 0 (the whole vocabulary) but this policy has ${vocabulary} tokens, past ${MAX_FULL_KL_VOCAB}; set advantage.${KL_TERM_KEYS[r.term]}.k to 1-64 (the reference's top-k loss: k 50, tail true)`,
    );
  const read = await scoreTopK(
    items.map((it, i) => ({ ...it, at: sets[i].topIds })),
    d.preset.advantage.teacher,
    1,
  );
  const of = (t: number) => used.indexOf(perToken ? perToken[t] : 0);
  return {
    sampled: tokenIds.map((_, t) => sets[of(t)].logprobs[t]),
    target: {
      clip: 0,
      term: r.tail ? `${r.term}-tail` : r.term,
      ids: tokenIds.map((_, t) => sets[of(t)].topIds[t]),
      teacherLogp: tokenIds.map((_, t) => read[of(t)].atLogp![t]),
    },
  };
}
