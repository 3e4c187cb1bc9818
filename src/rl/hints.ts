import { parseBoxedScore, type BoxedScore } from './boxed';
import type { ChatMessage } from './messages';
import { bool, object, oneOf, type Infer } from '../base/check';

/** One hint-judge vote: its decision and the hint it wrote, if any. */
export interface HintVote {
  /** The last `\boxed{}` (see parseBoxedScore); null when there is none or it is unreadable. */
  score: BoxedScore | null;
  /** Trimmed text of the last complete `[HINT_START]...[HINT_END]` block; null when none. */
  hint: string | null;
}

const HINT_START = '[HINT_START]';
const HINT_END = '[HINT_END]';
const MARKER_PREFIX = '[HINT_';

/**
 * The last complete hint block, found in one pass over the markers.
 *
 * A later `[HINT_START]` replaces an earlier unclosed one, so `[HINT_START] a [HINT_START] b
 * [HINT_END]` yields "b" (the reference's non-greedy regex would yield "a [HINT_START] b").
 * An `[HINT_END]` with no open block is ignored, and a block without an end marker (a judge
 * cut off by its token limit) is not a hint, so an earlier complete block still counts.
 */
function lastHintBlock(text: string): string | null {
  let open = -1;
  let hint: string | null = null;
  for (let at = text.indexOf(MARKER_PREFIX); at >= 0; at = text.indexOf(MARKER_PREFIX, at + 1)) {
    if (text.startsWith(HINT_START, at)) {
      open = at + HINT_START.length;
    } else if (open >= 0 && text.startsWith(HINT_END, at)) {
      hint = text.slice(open, at).trim();
      open = -1;
    }
  }
  return hint;
}

/**
 * Parses one hint-judge answer.
 *
 * @param text - raw judge output, any length (parsed in linear time)
 * @returns the vote's score (last box) and hint (last complete block, trimmed)
 */
export function parseHintVote(text: string): HintVote {
  return { score: parseBoxedScore(text), hint: lastHintBlock(text) };
}

/** Length in code points, as the reference (Python `len`) counts it: an emoji is one. */
function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Hints this short or shorter carry no usable instruction ("ok", "be better"). */
export const MIN_HINT_CHARS = 10;

/**
 * The hint the teacher is conditioned on: among votes scored +1 whose stripped hint is
 * longer than `minChars` characters, the longest (the first of equally long ones).
 *
 * @param votes - the turn's hint-judge votes
 * @param minChars - a hint must be strictly longer than this (default 10)
 * @returns the stripped hint, or null when no vote qualifies: the turn gives no OPD sample
 */
export function selectBestHint(votes: readonly HintVote[], minChars: number = MIN_HINT_CHARS): string | null {
  let best: string | null = null;
  let bestLength = minChars;
  for (const vote of votes) {
    if (vote.score !== 1 || vote.hint === null) continue;
    const hint = vote.hint.trim();
    const length = codePointLength(hint);
    if (length > bestLength) {
      best = hint;
      bestLength = length;
    }
  }
  return best;
}

/** How appendHint builds the teacher context (a preset's advantage.teacherContext, every field given). */
export const teacherContextShape = object({
  /**
   * Where the hint goes when no message has role `user` but there are messages.
   * 'new-user-message' (default: the hint reads as the user's words, as it does in every
   * other case) adds a user message at the end;
   * 'last-message' appends to the last message whatever its role, as the reference does.
   */
  noUserMessage: oneOf('new-user-message', 'last-message'),
  /**
   * Trim the hint and the resulting message content (default true, the reference's
   * `.strip()`); false appends the suffix byte for byte as the paper writes it.
   */
  trim: bool,
});

/** What appendHint does in the cases the paper leaves open: teacherContextShape, every field optional here. */
export type AppendHintOptions = Partial<Infer<typeof teacherContextShape>>;

/** The line that introduces the hint in the teacher's context. */
export const HINT_HEADER = "[user's hint / instruction]";

const HINT_OPENING = `\n\n${HINT_HEADER}\n`;

/** A user message without the hint appendHint() wrote into it, and that hint (null when none). */
export function splitHint(message: string): { text: string; hint: string | null } {
  const at = message.lastIndexOf(HINT_OPENING);
  if (at < 0) return { text: message, hint: null };
  return { text: message.slice(0, at), hint: message.slice(at + HINT_OPENING.length).trim() };
}

/** A person's words, quoted, as an instruction: the hint for a request no profile knows. */
export function quotedRequest(request: string): string {
  return `The user asked for a different answer: "${request}". Answer the way this request asks.`;
}

/**
 * How a base model (no chat template) is shown a hint: in front of the text it continues, then a
 * blank line, so that the hint comes before the answer without breaking the text.
 */
export function hintInFront(hint: string, text: string): string {
  return `${hint}\n\n${text}`;
}

/**
 * The teacher's context: a copy of the turn's messages with
 * `"\n\n[user's hint / instruction]\n" + hint` appended to the last `user` message.
 * Never mutates `messages` or its elements.
 *
 * @param messages - the turn's prompt messages s_t
 * @param hint - the selected hint
 * @param options - behaviour where the paper and the reference differ
 * @returns s_enhanced
 */
export function appendHint(messages: readonly ChatMessage[], hint: string, options: AppendHintOptions = {}): ChatMessage[] {
  const trim = options.trim ?? true;
  const suffix = `${HINT_OPENING}${trim ? hint.trim() : hint}`;
  const out = messages.map((m) => ({ ...m }));
  let target = -1;
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i].role === 'user') {
      target = i;
      break;
    }
  }
  if (target < 0 && out.length > 0 && options.noUserMessage === 'last-message') {
    target = out.length - 1;
  }
  if (target < 0) {
    out.push({ role: 'user', content: trim ? suffix.trim() : suffix });
    return out;
  }
  const content = out[target].content + suffix;
  out[target].content = trim ? content.trim() : content;
  return out;
}
