/**
 * The conversations of a run log: every session's turns with their judge votes, results, sample
 * and training steps. Pure; tested in Node (derive.test.ts).
 */
import type { HintSelectionRecord, JudgeResultRecord, JudgeVoteRecord, RunRecord, SampleRecord, SessionEndRecord } from '../../rl/records';
import { readable } from '../../rl/readable-text';
import { replyParts, type CallView } from './derive-workspace';
import { turnHeader, turnKey, type TurnHeader } from './record-values';

export interface VoteView {
  vote: number;
  score: number | null;
  hint: string | null;
  raw: string;
  version: number;
}

export interface TurnView extends TurnHeader {
  /**
   * The tool results the policy answered, in order, when its request ended with them (an agent's
   * step in the homework workspace); empty when it answered a user.
   */
  toolResults: string[];
  /** The reply's text without its tool calls, and the calls (replyParts). */
  said: string;
  calls: CallView[];
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
  /**
   * The step a stop interrupted before this turn reached the buffer, when a resume went on
   * without it (runtime_event run_resumed): it stays in the log and is never trained. Null otherwise.
   */
  interruptedStep: number | null;
}

export interface SessionView {
  session: string;
  turns: TurnView[];
  end: SessionEndRecord | null;
}

function voteView(v: JudgeVoteRecord): VoteView {
  // A judge model's words are decoded by its own tokenizer, which records no tokens: control characters made visible.
  return { vote: v.vote, score: v.score, hint: v.hint === null ? null : readable(v.hint), raw: readable(v.raw), version: v.version };
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
      const trailing = r.messages.length - 1 - r.messages.findLastIndex((m) => m.role !== 'tool');
      // Only a prompt that listed tools could have its calls run; elsewhere a tag is just text.
      const header = turnHeader(r);
      const parts = r.tools ? replyParts(r.response) : null;
      const said = parts ? readable(parts.text) : header.response;
      const calls = parts?.calls ?? [];
      const t: TurnView = {
        ...header,
        toolResults: r.messages.slice(r.messages.length - trailing).map((m) => m.content),
        said,
        calls,
        tokens: r.tokenIds.length,
        binaryVotes: [],
        hintVotes: [],
        binary: null,
        hint: null,
        sample: null,
        trainedAt: [],
        judged: false,
        dropped: false,
        interruptedStep: null,
      };
      const s = session(r.session);
      const prev = turns.get(turnKey(r.session, r.turn));
      if (prev) s.turns.splice(s.turns.indexOf(prev), 1, t);
      else s.turns.push(t);
      turns.set(turnKey(r.session, r.turn), t);
    } else if (r.kind === 'session_end') {
      session(r.session).end = r;
    }
  }
  for (const r of records) {
    if (r.kind === 'runtime_event') {
      for (const cut of r.interrupted ?? []) {
        for (const turn of cut.turns) {
          const t = turns.get(turnKey(cut.session, turn));
          if (t) t.interruptedStep = (r.step ?? 0) + 1;
        }
      }
      continue;
    }
    if (r.kind !== 'judge_vote' && r.kind !== 'judge_result' && r.kind !== 'sample' && r.kind !== 'token_update') continue;
    const t = turns.get(turnKey(r.session, r.turn));
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

/** One candidate hint of a top-k selection as the feed lists it. */
export interface CandidateView {
  hint: string;
  /** Mean |student top-k ∩ teacher top-k| per response token, out of k. */
  perToken: number;
  /** The summed overlap (over every response token). */
  overlap: number;
  tokensWon: number;
  winner: boolean;
}

/** The candidates of a top-k hint selection, shortest hint first, the winner marked. */
export function candidateViews(selection: HintSelectionRecord): CandidateView[] {
  return selection.candidates.map((c, i) => ({
    hint: c.hint,
    overlap: c.overlap,
    perToken: selection.tokens > 0 ? c.overlap / selection.tokens : 0,
    tokensWon: c.tokensWon,
    winner: i === selection.winner,
  }));
}
