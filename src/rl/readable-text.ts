/**
 * Model text as a person reads it. A policy's tokenizer may emit single bytes (SentencePiece's
 * byte-fallback tokens such as `<0x07>`, or a byte-level BPE token that holds part of a
 * character); decoded one token at a time they print as "�", and decoded whole, a byte that makes
 * no character prints as "�" too, while a control byte prints as itself, unseen. Records keep
 * such tokens as their bytes, in the tokenizer's own notation (`<0xE2><0x80>`), and this module
 * decodes them across token seams as the tokenizer does (UTF-8, WHATWG's decoder), showing what
 * is not text as a visible escape, ⟨0x07⟩. Every view of model text reads it through here.
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

/** Text with its control characters and bare U+FFFD made visible; everything else as it is. */
export function readable(text: string): string {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffd]/g, (c) => (c === '\ufffd' ? LOST_BYTES : byteEscape(c.charCodeAt(0))));
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
   * For a byte token, the text its run of byte tokens decodes to, shown (the character it is part
   * of, or its escape); null for a token that is text.
   */
  run: string | null;
}

export interface ReadTokens {
  tokens: ReadToken[];
  /** How many tokens, from the first, were found in the reply in order. */
  aligned: number;
  /** Where in the reply the aligned tokens end. */
  end: number;
}

/**
 * Each token of a reply as it reads there. `texts` are the record's token texts (each decoded
 * alone, byte tokens in byte notation); `response` is the whole reply as the tokenizer decoded it,
 * which holds the whitespace that decoding one token alone drops. A run of byte tokens decodes
 * together: a character is shown at the token of its first byte, and the later bytes add nothing.
 * From the first token not found where expected (normalisation, a stop that cut the reply), the
 * tokens keep their own texts.
 */
export function readTokens(response: string, texts: readonly string[]): ReadTokens {
  const tokens: ReadToken[] = [];
  let pos = 0;
  let aligned = true;
  let alignedCount = 0;
  /** Where `piece` starts in the reply at pos, past whitespace; -1 where it is not there. */
  const find = (piece: string): number => {
    let at = pos;
    while (at < response.length && !response.startsWith(piece, at) && /\s/.test(response[at])) at++;
    return response.startsWith(piece, at) ? at : -1;
  };
  for (let i = 0; i < texts.length;) {
    const first = byteTokenBytes(texts[i]);
    if (first === null) {
      const t = texts[i++];
      if (aligned && t.length === 0) {
        // A lone word-boundary piece decodes to nothing: it stands for one space of the reply.
        const n = pos < response.length && /\s/.test(response[pos]) ? 1 : 0;
        tokens.push({ text: response.slice(pos, pos + n), bytes: null, run: null });
        pos += n;
        alignedCount++;
        continue;
      }
      const at = aligned ? find(t) : -1;
      if (at < 0) {
        aligned = false;
        tokens.push({ text: readable(t), bytes: null, run: null });
        continue;
      }
      tokens.push({ text: readable(response.slice(pos, at + t.length)), bytes: null, run: null });
      pos = at + t.length;
      alignedCount++;
      continue;
    }
    const run: number[][] = [first];
    while (i + run.length < texts.length) {
      const b = byteTokenBytes(texts[i + run.length]);
      if (b === null) break;
      run.push(b);
    }
    const decoded = decodeUtf8(run.flat());
    const whole = decoded.map(shown).join('');
    const asDecoded = decoded.map((d) => (d.cp === null ? '\ufffd' : String.fromCodePoint(d.cp))).join('');
    const at = aligned ? find(asDecoded) : -1;
    const lead = at < 0 ? '' : readable(response.slice(pos, at));
    if (at < 0) aligned = false;
    else pos = at + asDecoded.length;
    let byteAt = 0;
    run.forEach((bytes, k) => {
      const own = decoded.filter((d) => d.at >= byteAt && d.at < byteAt + bytes.length);
      byteAt += bytes.length;
      tokens.push({ text: (k === 0 ? lead : '') + own.map(shown).join(''), bytes, run: whole });
    });
    if (aligned) alignedCount += run.length;
    i += run.length;
  }
  return { tokens, aligned: alignedCount, end: pos };
}

/**
 * A reply as a person reads it: its byte tokens decoded across seams and shown as the tokenizer
 * decodes them, what is not text as an escape. Without token texts (an old log, a source that gave
 * none), the reply with its control characters made visible.
 */
export function readReply(response: string, texts?: readonly string[] | null): string {
  if (!texts || texts.length === 0) return readable(response);
  const read = readTokens(response, texts);
  let out = '';
  for (let i = 0; i < read.aligned; i++) out += read.tokens[i].text;
  return out + readable(response.slice(read.end));
}
