/**
 * Model text as a person reads it. A policy's tokenizer may emit single bytes (SentencePiece's
 * byte-fallback tokens such as `<0x07>`, or a byte-level BPE token that holds part of a
 * character); decoded one token at a time they print as "�", and decoded whole, a byte that makes
 * no character prints as "�" too, while a control byte prints as itself, unseen. Records keep
 * such tokens as their bytes, in the tokenizer's own notation (`<0xE2><0x80>`), and this module
 * decodes them across token seams as the tokenizer does (UTF-8, WHATWG's decoder), showing what
 * is not text as a visible escape, ⟨0x07⟩. Every view of model text reads it through here, and
 * `nextstate serve` sends its replies through here, streamed or not (TokenReader).
 */

/** A byte that makes no character, or a control character: as the page shows it. */
export function byteEscape(byte: number): string {
  return `⟨0x${byte.toString(16).toUpperCase().padStart(2, '0')}⟩`;
}

/** What the page shows for a U+FFFD whose bytes were not recorded (logs from before, other sources). */
export const LOST_BYTES = '⟨?⟩';

/** The tokenizer's name for a byte token, as records keep it. */
export function byteTokenText(bytes: readonly number[]): string {
  return bytes.map((b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`).join('');
}

const BYTE_TOKEN = /^(?:<0x[0-9A-F]{2}>)+$/;

/** The bytes a token text in byte notation stands for, or null for a token that is text. */
export function byteTokenBytes(text: string): number[] | null {
  if (!BYTE_TOKEN.test(text)) return null;
  const out: number[] = [];
  for (let i = 0; i < text.length; i += 6) out.push(parseInt(text.slice(i + 3, i + 5), 16));
  return out;
}

/** C0 controls but tab, newline and carriage return; DEL; C1 controls. Unseen or garbled on a page. */
function isControl(cp: number): boolean {
  return (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) || (cp >= 0x7f && cp <= 0x9f);
}

/** What a page shows unseen or garbled: the control characters isControl names, and U+FFFD. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNREADABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffd]/g;

/** Text with its control characters and bare U+FFFD made visible; everything else as it is. */
export function readable(text: string): string {
  return text.replace(UNREADABLE, (c) => (c === '\ufffd' ? LOST_BYTES : byteEscape(c.charCodeAt(0))));
}

/** Whether text reads as it is: no control character a page would not show, no "�". */
export function isReadable(text: string): boolean {
  return text.search(UNREADABLE) < 0;
}

/** One character decoded from bytes, or (cp null) a maximal run of bytes that makes none. */
interface Decoded {
  /** Index of its first byte. */
  at: number;
  bytes: number[];
  cp: number | null;
}

/**
 * UTF-8 as WHATWG's decoder reads it (TextDecoder, which the tokenizers use): each maximal
 * subpart of an ill-formed sequence is one error, so the errors line up one to one with the
 * U+FFFD the tokenizer wrote.
 */
function decodeUtf8(bytes: readonly number[]): Decoded[] {
  const out: Decoded[] = [];
  let need = 0;
  let cp = 0;
  let lower = 0x80;
  let upper = 0xbf;
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (need === 0) {
      start = i;
      if (b <= 0x7f) out.push({ at: i, bytes: [b], cp: b });
      else if (b >= 0xc2 && b <= 0xdf) [need, cp] = [1, b & 0x1f];
      else if (b >= 0xe0 && b <= 0xef) {
        if (b === 0xe0) lower = 0xa0;
        if (b === 0xed) upper = 0x9f;
        [need, cp] = [2, b & 0x0f];
      } else if (b >= 0xf0 && b <= 0xf4) {
        if (b === 0xf0) lower = 0x90;
        if (b === 0xf4) upper = 0x8f;
        [need, cp] = [3, b & 0x07];
      } else out.push({ at: i, bytes: [b], cp: null });
      continue;
    }
    if (b < lower || b > upper) {
      // The sequence so far is one error; this byte starts afresh.
      out.push({ at: start, bytes: bytes.slice(start, i), cp: null });
      [need, lower, upper] = [0, 0x80, 0xbf];
      i--;
      continue;
    }
    [lower, upper] = [0x80, 0xbf];
    cp = (cp << 6) | (b & 0x3f);
    if (i - start === need) {
      out.push({ at: start, bytes: bytes.slice(start, i + 1), cp });
      need = 0;
    }
  }
  if (need > 0) out.push({ at: start, bytes: bytes.slice(start), cp: null });
  return out;
}

function shown(d: Decoded): string {
  return d.cp === null ? d.bytes.map(byteEscape).join('') : isControl(d.cp) ? byteEscape(d.cp) : String.fromCodePoint(d.cp);
}

/** One token as it reads in the reply. */
export interface ReadToken {
  /** What the token adds to the reply as shown: the whitespace before it, its characters, its escapes. */
  text: string;
  /** The bytes of a byte token (from its byte notation); null for a token that is text. */
  bytes: number[] | null;
  /**
   * For a byte token, or a token whose bytes the record lost, the text its run of such tokens
   * decodes to, shown (the character it is part of, or its escape); null for a token that is text.
   */
  run: string | null;
  /**
   * A token the record kept as "�" (decoded alone, before records kept bytes): its bytes are
   * unknown, and only what its run of such tokens makes together is known (`run`).
   */
  lost?: true;
}

export interface ReadTokens {
  tokens: ReadToken[];
  /** How many tokens, from the first, were found in the reply in order. */
  aligned: number;
  /** Where in the reply the aligned tokens end. */
  end: number;
}

/** A token text that lost its bytes: decoded alone, a byte that makes no character prints as "�". */
const LOST = /^\uFFFD+$/;

/** The most bytes the characters of decoded text can have stood for: a U+FFFD is at most three bytes of one error. */
function maxBytes(text: string): number {
  let n = 0;
  for (const c of text) {
    const cp = c.codePointAt(0)!;
    n += cp === 0xfffd ? 3 : cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  return n;
}

/**
 * readTokens as a reply comes: its text and its tokens are added as they are known, and each
 * token is read once what it reads as cannot change (its text is in the reply, or cannot be;
 * a run of byte tokens has ended). `take` gives the reply as shown, as far as it is final.
 */
export class TokenReader {
  private response = '';
  private readonly texts: string[] = [];
  private readonly read: ReadToken[] = [];
  private pos = 0;
  private next = 0;
  private aligned = true;
  private alignedCount = 0;
  private done = false;
  private taken = 0;
  private tailFrom = 0;

  /** More of the reply's text, and the texts of more of its tokens (as records keep them). */
  add(text: string, texts: readonly string[] = []): void {
    this.response += text;
    for (const t of texts) this.texts.push(t);
    this.readOn();
  }

  /** The reply is whole: every token is read against it. */
  finish(): ReadTokens {
    this.done = true;
    this.readOn();
    return { tokens: this.read, aligned: this.alignedCount, end: this.pos };
  }

  /**
   * The reply as shown, from where the last call left off, as far as it is final: the aligned
   * tokens as they read, then (past the first token not found, or once finished) the reply's own
   * text made readable.
   */
  take(): string {
    let out = '';
    for (; this.taken < this.alignedCount; this.taken++) out += this.read[this.taken].text;
    if (!this.aligned || this.done) {
      const from = Math.max(this.pos, this.tailFrom);
      out += readable(this.response.slice(from));
      this.tailFrom = this.response.length;
    }
    return out;
  }

  /**
   * Where `piece` starts in the reply at pos, past whitespace; -1 where it is not there, and
   * undefined where the reply so far ends before that can be told.
   */
  private findOne(piece: string, from = this.pos): number | undefined {
    const r = this.response;
    let at = from;
    while (at < r.length && !r.startsWith(piece, at) && /\s/.test(r[at])) at++;
    if (r.startsWith(piece, at)) return at;
    // Every place looked at must hold the whole piece for "not there" to stay true as the reply grows.
    return this.done || at + piece.length <= r.length ? -1 : undefined;
  }

  /**
   * The first of `pieces` (a token's text as the tokenizer decodes it, then as shown, which a
   * reply that went out shown holds) found at pos: where and how long; null where none is.
   */
  private find(pieces: readonly string[]): { at: number; length: number } | null | undefined {
    for (const piece of pieces) {
      const at = this.findOne(piece);
      if (at === undefined) return undefined;
      if (at >= 0) return { at, length: piece.length };
    }
    return null;
  }

  private push(token: ReadToken, aligned: boolean): void {
    this.read.push(token);
    if (aligned) this.alignedCount++;
  }

  private readOn(): void {
    const texts = this.texts;
    const response = this.response;
    while (this.next < texts.length) {
      const i = this.next;
      const first = byteTokenBytes(texts[i]);
      if (first === null && LOST.test(texts[i])) {
        if (!this.readLost()) return;
        continue;
      }
      if (first === null) {
        const t = texts[i];
        if (this.aligned && t.length === 0) {
          if (this.pos >= response.length && !this.done) return;
          // A lone word-boundary piece decodes to nothing: it stands for one space of the reply.
          const n = this.pos < response.length && /\s/.test(response[this.pos]) ? 1 : 0;
          this.push({ text: response.slice(this.pos, this.pos + n), bytes: null, run: null }, true);
          this.pos += n;
          this.next++;
          continue;
        }
        const shown = readable(t);
        const found = this.aligned ? this.find(shown === t ? [t] : [t, shown]) : null;
        if (found === undefined) return;
        this.next++;
        if (found === null) {
          this.aligned = false;
          this.push({ text: shown, bytes: null, run: null }, false);
          continue;
        }
        this.push({ text: readable(response.slice(this.pos, found.at + found.length)), bytes: null, run: null }, true);
        this.pos = found.at + found.length;
        continue;
      }
      const run: number[][] = [first];
      while (i + run.length < texts.length) {
        const b = byteTokenBytes(texts[i + run.length]);
        if (b === null) break;
        run.push(b);
      }
      // A later byte token may complete the run's last character.
      if (i + run.length === texts.length && !this.done) return;
      const decoded = decodeUtf8(run.flat());
      const whole = decoded.map(shown).join('');
      const asDecoded = decoded.map((d) => (d.cp === null ? '\ufffd' : String.fromCodePoint(d.cp))).join('');
      const found = this.aligned ? this.find([asDecoded, whole]) : null;
      if (found === undefined) return;
      const lead = found === null ? '' : readable(response.slice(this.pos, found.at));
      if (found === null) this.aligned = false;
      else this.pos = found.at + found.length;
      let byteAt = 0;
      run.forEach((bytes, k) => {
        const own = decoded.filter((d) => d.at >= byteAt && d.at < byteAt + bytes.length);
        byteAt += bytes.length;
        this.push({ text: (k === 0 ? lead : '') + own.map(shown).join(''), bytes, run: whole }, this.aligned);
      });
      this.next += run.length;
    }
  }

  /**
   * A run of tokens kept as "�": together they make the characters of the reply at pos that are
   * not ASCII (a byte that is ASCII decodes as itself), as many as hold at least a byte per token,
   * up to where the next token is found. Read once the reply is whole; false while it is not.
   */
  private readLost(): boolean {
    if (!this.done) return false;
    const texts = this.texts;
    const response = this.response;
    const i = this.next;
    let m = 0;
    while (i + m < texts.length && LOST.test(texts[i + m])) m++;
    const lostToken = (text: string, run: string | null): ReadToken => ({ text, bytes: null, run, lost: true });
    const ending = this.aligned ? this.lostEnd(m) : null;
    if (ending === null) {
      this.aligned = false;
      for (let k = 0; k < m; k++) this.push(lostToken(LOST_BYTES, null), false);
    } else {
      const run = readable(response.slice(ending.start, ending.end));
      for (let k = 0; k < m; k++) this.push(lostToken(k === 0 ? readable(response.slice(this.pos, ending.end)) : '', run), true);
      this.pos = ending.end;
    }
    this.next += m;
    return true;
  }

  /** Where the text of m lost tokens at pos starts (past whitespace) and ends; null where it cannot be told. */
  private lostEnd(m: number): { start: number; end: number } | null {
    const r = this.response;
    let start = this.pos;
    while (start < r.length && /[ \t\r\n]/.test(r[start])) start++;
    let stretch = start;
    while (stretch < r.length && r.codePointAt(stretch)! >= 0x80) stretch += r.codePointAt(stretch)! > 0xffff ? 2 : 1;
    const after = this.texts[this.next + m];
    for (let end = start; end < stretch;) {
      end += r.codePointAt(end)! > 0xffff ? 2 : 1;
      if (maxBytes(r.slice(start, end)) < m) continue;
      // With no token after, or one whose text may start with any character, the run takes all there is.
      if (after === undefined || after.length === 0 || byteTokenBytes(after) !== null) {
        if (end === stretch) return { start, end };
      } else if (this.findOne(after, end)! >= 0) return { start, end };
    }
    return null;
  }
}

/**
 * Each token of a reply as it reads there. `texts` are the record's token texts (each decoded
 * alone, byte tokens in byte notation); `response` is the whole reply as the tokenizer decoded it
 * (or as it went out shown), which holds the whitespace that decoding one token alone drops. A run
 * of byte tokens decodes together: a character is shown at the token of its first byte, and the
 * later bytes add nothing. From the first token not found where expected (normalisation, a stop
 * that cut the reply), the tokens keep their own texts.
 */
export function readTokens(response: string, texts: readonly string[]): ReadTokens {
  const reader = new TokenReader();
  reader.add(response, texts);
  return reader.finish();
}

/**
 * A reply as a person reads it: its byte tokens decoded across seams and shown as the tokenizer
 * decodes them, what is not text as an escape. Without token texts (an old log, a source that gave
 * none), the reply with its control characters made visible.
 */
export function readReply(response: string, texts?: readonly string[] | null): string {
  if (!texts || texts.length === 0) return readable(response);
  const reader = new TokenReader();
  reader.add(response, texts);
  reader.finish();
  return reader.take();
}
