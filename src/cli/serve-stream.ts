/**
 * A streamed reply's text as the policy draws its tokens (`nextstate serve` with `stream: true`).
 * Each token is decoded with all before it, and only text that can no longer change goes out:
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
 */
import { TOOL_CALL_OPEN } from '../rl/tool-calls';

export interface StreamTokenizer {
  decode(ids: ArrayLike<number>, skipSpecialTokens?: boolean): string;
}

/** Text to send and the tokens drawn since the last piece (their ids, log-probs and own texts). */
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

export class ReplyStream {
  private readonly ids: number[] = [];
  private readonly logprobs: number[] = [];
  private readonly tokenTexts: string[] = [];
  /** The text of every token so far, as decoded last time. */
  private decoded = '';
  private sent = '';
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
    this.tokenTexts.push(this.tokenizer.decode([id], false));
    const decoded = this.tokenizer.decode(this.ids);
    const stable = commonPrefix(this.decoded, decoded).replace(/\uFFFD+$/, '');
    this.decoded = decoded;
    const ready = this.sendable(stable);
    if (ready.length > this.sent.length && ready.startsWith(this.sent)) this.sendPiece(ready.slice(this.sent.length));
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

  /** What of the stable text may go out now. */
  private sendable(stable: string): string {
    let text = stable;
    for (const s of this.options.stops) {
      const at = text.indexOf(s);
      if (at >= 0) text = text.slice(0, at);
    }
    // Even after a cut: a stop that starts earlier may end past the stable text.
    text = text.slice(0, text.length - heldStart(text, this.options.stops));
    if (this.options.toolCalls) {
      const open = text.indexOf(TOOL_CALL_OPEN);
      text = open >= 0 ? text.slice(0, open) : text.slice(0, text.length - heldStart(text, [TOOL_CALL_OPEN]));
      // A call's reply keeps its prose without the whitespace before the call (replyMessage).
      text = text.trimEnd();
    }
    return text;
  }

  private sendPiece(content: string): void {
    const piece = this.piece(content);
    this.sent += content;
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
