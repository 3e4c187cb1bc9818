/**
 * A streamed reply's text as the policy draws its tokens (`nextstate serve` with `stream: true`).
 * Each token is decoded with the ones before it, and only text that can no longer change goes out:
 *
 * - bytes of a character split across tokens (a trailing U+FFFD) wait for the token that ends it;
 * - text the next token could still rewrite (a tokenizer's merges at the seam) waits one token;
 * - the start of a `stop` string waits until it is known not to be one, and nothing past a stop
 *   ever goes out;
 * - where the reply's tool calls are parsed, text that may be the start of a `<tool_call>` tag,
 *   and whitespace that would be trimmed before one, wait; from a tag on, everything waits for
 *   the reply's end, when the calls are parsed (tool-calls.ts).
 *
 * So the deltas are always a prefix of the reply's content, and `finish` sends the rest: their
 * concatenation is the content a request without streaming gets, character for character.
 *
 * The cost per token stays the same however long the reply grows, as in vLLM's incremental
 * detokenizer: a token is decoded in a window with the few tokens before it, whose own text is
 * then cut off (so a first-token space rule or a clean-up at the window's start applies to both
 * alike), and only the text not yet sent is searched for stops and tags.
 *
 * What goes out to a client is that text as a person reads it (ReadableReplyStream): the lab's one
 * reader of model text (src/rl/readable-text.ts) decodes byte tokens across seams and shows what
 * is not text as an escape, as the reply without streaming is shown.
 */
import { TokenReader } from '../rl/readable-text';
import { TOOL_CALL_OPEN } from '../rl/tool-calls';

export interface StreamTokenizer {
  decode(ids: ArrayLike<number>, skipSpecialTokens?: boolean): string;
  /** Each token as records keep it: byte tokens in byte notation (Tokenizer.tokenTexts). */
  tokenTexts(ids: readonly number[]): string[];
}

/** Text to send and the tokens drawn since the last piece (their ids, log-probs and texts as records keep them). */
export interface ReplyPiece {
  content: string;
  tokenIds: number[];
  logprobs: number[];
  tokenTexts: string[];
}

export interface ReplyStreamOptions {
  stops: readonly string[];
  /** Whether the reply's `<tool_call>` blocks become tool calls (ChatEndpoint's `parse`). */
  toolCalls: boolean;
}

/** The text two decodes agree on. */
function commonPrefix(a: string, b: string): string {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return a.slice(0, i);
}

/** The length of the longest end of `text` that begins one of `words` without being it. */
function heldStart(text: string, words: readonly string[]): number {
  let held = 0;
  for (const w of words) {
    for (let k = Math.min(w.length - 1, text.length); k > held; k--) {
      if (text.endsWith(w.slice(0, k))) {
        held = k;
        break;
      }
    }
  }
  return held;
}

/** Tokens decoded before a token's window starts, as context for the merges and clean-up at its seam. */
const CONTEXT_TOKENS = 6;

export class ReplyStream {
  private readonly ids: number[] = [];
  private readonly logprobs: number[] = [];
  private readonly tokenTexts: string[] = [];
  /** Tokens before `read` are committed: their text can no longer change. The window starts at `prefix`. */
  private prefix = 0;
  private read = 0;
  /** The text of tokens prefix..read, decoded alone: cut from the start of each window's text. */
  private context = '';
  /** Text of the tokens after the committed ones, as decoded at the last token. */
  private tail = '';
  /** Committed text not sent yet (held back as a possible stop, say). */
  private owed = '';
  /** How much of the tail went out already, where what was sent reaches past the committed text. */
  private aheadInTail = 0;
  private sent = '';
  /** A stop or a tool call tag was reached (or a window disagreed): nothing more goes out before `finish`. */
  private closed = false;
  /** Tokens before this index went out with a piece. */
  private pieceFrom = 0;

  constructor(
    private readonly tokenizer: StreamTokenizer,
    private readonly options: ReplyStreamOptions,
    private readonly send: (piece: ReplyPiece) => void,
  ) {}

  /** One token drawn: sends the text it made final, if any. */
  token(id: number, logprob: number): void {
    this.ids.push(id);
    this.logprobs.push(logprob);
    this.tokenTexts.push(...this.tokenizer.tokenTexts([id]));
    if (this.closed) return;
    const window = this.tokenizer.decode(this.ids.slice(this.prefix));
    if (!window.startsWith(this.context)) {
      // The tokens before the window decode otherwise with it: the rest goes out whole at the end.
      this.closed = true;
      return;
    }
    const tail = window.slice(this.context.length);
    const stableTail = commonPrefix(this.tail, tail).replace(/\uFFFD+$/, '');
    const before = this.tail;
    this.tail = tail;
    if (stableTail.length >= this.aheadInTail) {
      const unsent = this.owed + stableTail.slice(this.aheadInTail);
      const { text, cut } = this.sendable(unsent);
      if (text) this.sendPiece(text);
      if (cut) this.closed = true;
    }
    this.commit(before);
  }

  /**
   * Moves the window on once it is twice its context: the tokens before the last one are
   * committed with the text they had at the token before, if this token left that text as it was.
   */
  private commit(before: string): void {
    const last = this.ids.length - 1;
    if (last - this.prefix < 2 * CONTEXT_TOKENS || !this.tail.startsWith(before) || before.endsWith('\uFFFD')) return;
    if (this.aheadInTail >= before.length) this.aheadInTail -= before.length;
    else {
      this.owed += before.slice(this.aheadInTail);
      this.aheadInTail = 0;
    }
    this.tail = this.tail.slice(before.length);
    this.read = last;
    this.prefix = last - CONTEXT_TOKENS;
    this.context = this.tokenizer.decode(this.ids.slice(this.prefix, this.read));
  }

  /**
   * The reply is complete and `content` is what a client gets without streaming: the rest of it,
   * with the tokens not yet sent (send it when either is non-empty).
   */
  finish(content: string): ReplyPiece {
    if (!content.startsWith(this.sent)) {
      // Cannot happen with a tokenizer whose decode of a prefix is a prefix once the next token is known.
      throw new Error(`the streamed text (${this.sent.length} characters) is not the start of the reply; ask without stream to get it whole`);
    }
    const piece = this.piece(content.slice(this.sent.length));
    this.sent = content;
    return piece;
  }

  /**
   * What of the stable text not yet sent may go out now, and whether a stop or a tag cut it.
   * Only the unsent text is searched: what went out holds no stop, and never ends in the start
   * of one, so none can begin before it ends.
   */
  private sendable(unsent: string): { text: string; cut: boolean } {
    let text = unsent;
    let cut = false;
    for (const s of this.options.stops) {
      const at = text.indexOf(s);
      if (at >= 0) {
        text = text.slice(0, at);
        cut = true;
      }
    }
    // Even after a cut: a stop that starts earlier may end past the stable text.
    text = text.slice(0, text.length - heldStart(text, this.options.stops));
    if (this.options.toolCalls) {
      const open = text.indexOf(TOOL_CALL_OPEN);
      if (open >= 0) cut = true;
      text = open >= 0 ? text.slice(0, open) : text.slice(0, text.length - heldStart(text, [TOOL_CALL_OPEN]));
      // A call's reply keeps its prose without the whitespace before the call (replyMessage).
      text = text.trimEnd();
    }
    return { text, cut };
  }

  private sendPiece(content: string): void {
    const piece = this.piece(content);
    this.sent += content;
    if (content.length <= this.owed.length) this.owed = this.owed.slice(content.length);
    else {
      this.aheadInTail += content.length - this.owed.length;
      this.owed = '';
    }
    this.send(piece);
  }

  private piece(content: string): ReplyPiece {
    const from = this.pieceFrom;
    this.pieceFrom = this.ids.length;
    return {
      content,
      tokenIds: this.ids.slice(from),
      logprobs: this.logprobs.slice(from),
      tokenTexts: this.tokenTexts.slice(from),
    };
  }
}

/**
 * ReplyStream's text as a person reads it: each piece goes through the lab's reader, so a byte
 * token's character goes out once its run of byte tokens has ended, and bytes that make no
 * character, or a control character, go out as an escape (⟨0xE2⟩), never as "�" or unseen. The
 * deltas add up to readReply(content, the reply's token texts): what a request without streaming
 * gets. A piece carries the tokens drawn since the last one that went out.
 */
export class ReadableReplyStream {
  private readonly raw: ReplyStream;
  private readonly reader = new TokenReader();
  private readonly ids: number[] = [];
  private readonly logprobs: number[] = [];
  private readonly tokenTexts: string[] = [];

  constructor(
    tokenizer: StreamTokenizer,
    options: ReplyStreamOptions,
    private readonly send: (piece: ReplyPiece) => void,
  ) {
    this.raw = new ReplyStream(tokenizer, options, (piece) => {
      this.read(piece);
      const shown = this.reader.take();
      if (shown) send(this.piece(shown));
    });
  }

  /** One token drawn: sends the text it made final and readable, if any. */
  token(id: number, logprob: number): void {
    this.raw.token(id, logprob);
  }

  /** The reply is complete and `content` is its text as decoded (ReplyStream.finish): the rest, shown. */
  finish(content: string): ReplyPiece {
    const rest = this.raw.finish(content);
    this.read(rest);
    this.reader.finish();
    return this.piece(this.reader.take());
  }

  private read(piece: ReplyPiece): void {
    this.ids.push(...piece.tokenIds);
    this.logprobs.push(...piece.logprobs);
    this.tokenTexts.push(...piece.tokenTexts);
    this.reader.add(piece.content, piece.tokenTexts);
  }

  private piece(content: string): ReplyPiece {
    const piece = { content, tokenIds: [...this.ids], logprobs: [...this.logprobs], tokenTexts: [...this.tokenTexts] };
    this.ids.length = this.logprobs.length = this.tokenTexts.length = 0;
    return piece;
  }
}
