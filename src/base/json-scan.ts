/**
 * Bounded, shape-first reading of untrusted JSON text. JSON.parse builds whatever the text
 * describes before anything can look at it: 150 M "[" characters cost gigabytes. These
 * readers look at the text's shape first, in one pass with constant extra memory, and hand
 * JSON.parse only text whose shape is already known to be small.
 */

/**
 * The deepest JSON the app reads: a run file's or journal's line, a model's JSON file, and a
 * request `nextstate serve` takes. Deeper than any line the app writes of its own (a header's
 * config is capped at 32 levels); a served request's tools are the one part a client nests, and
 * a record holds them as deep as the request does (a top-level `tools` array), so a request
 * within this limit is journaled in lines within it.
 */
export const MAX_LINE_DEPTH = 256;

/**
 * True when `text` nests objects and arrays deeper than `max` levels, counting only brackets
 * outside strings. Malformed text is left for JSON.parse to describe.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = stringEnd(text, i);
      if (i < 0) return false;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

/**
 * How many members the top-level object of `text` has, counting up to `max + 1` and stopping
 * there (keys are the colons at depth one, outside strings). Malformed text is left for
 * JSON.parse to describe.
 */
export function topLevelMembers(text: string, max: number): number {
  let depth = 0;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = stringEnd(text, i);
      if (i < 0) return n;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      depth++;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    } else if (c === 0x3a /* : */ && depth === 1 && ++n > max) {
      return n;
    }
  }
  return n;
}

/** Index of the quote closing the string that opens at `start`, or -1 if it never closes. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22) return i;
  }
  return -1;
}

/** The text is not of the shape the reader expects; `field` names where it stopped matching. */
export class ShapeError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`field "${field}" ${problem}`);
    this.name = 'ShapeError';
  }
}

const WHITESPACE = /[ \t\n\r]*/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/**
 * A cursor over JSON text that reads only what the caller asks for: a literal character, a
 * string of bounded raw length, or a number. Anything else fails at once, so a hostile value
 * costs no more than reading up to it.
 */
export class JsonCursor {
  private at = 0;
  constructor(private readonly text: string) {}

  private skipWhitespace(): void {
    WHITESPACE.lastIndex = this.at;
    WHITESPACE.exec(this.text);
    this.at = WHITESPACE.lastIndex;
  }

  /** The next non-blank character, not consumed ('' at the end). */
  peek(): string {
    this.skipWhitespace();
    return this.text.charAt(this.at);
  }

  /** Consumes `char` (after blanks) or fails naming `field`. */
  expect(char: string, field: string, problem: string): void {
    if (this.peek() !== char) throw new ShapeError(field, problem);
    this.at++;
  }

  /** Consumes `char` if it comes next; says whether it did. */
  accept(char: string): boolean {
    if (this.peek() !== char) return false;
    this.at++;
    return true;
  }

  /**
   * A JSON string of at most `maxRawChars` characters between its quotes, as written (escapes
   * count as written). `plain` refuses escapes, for values like base64 that never need one.
   */
  string(field: string, problem: string, maxRawChars: number, plain = false): string {
    if (this.peek() !== '"') throw new ShapeError(field, problem);
    const start = this.at;
    const limit = Math.min(this.text.length, start + 1 + maxRawChars + 1);
    let escaped = false;
    let i = start + 1;
    for (; i < limit; i++) {
      const c = this.text.charCodeAt(i);
      if (c === 0x22) break;
      if (c === 0x5c) {
        if (plain) throw new ShapeError(field, problem);
        escaped = true;
        i++;
      }
    }
    if (i >= limit) {
      throw new ShapeError(field, limit < this.text.length ? `is longer than ${maxRawChars.toLocaleString('en-US')} characters` : problem);
    }
    this.at = i + 1;
    const raw = this.text.slice(start + 1, i);
    if (!escaped) {
      // Control characters must be escaped in JSON; JSON.parse would refuse them too.
      if (/[\u0000-\u001f]/.test(raw)) throw new ShapeError(field, problem);
      return raw;
    }
    try {
      return JSON.parse(this.text.slice(start, i + 1)) as string;
    } catch {
      throw new ShapeError(field, problem);
    }
  }

  number(field: string, problem: string): number {
    this.skipWhitespace();
    NUMBER.lastIndex = this.at;
    const m = NUMBER.exec(this.text);
    if (!m) throw new ShapeError(field, problem);
    this.at = NUMBER.lastIndex;
    return Number(m[0]);
  }

  /** Fails unless only blanks remain. */
  end(field: string, problem: string): void {
    this.skipWhitespace();
    if (this.at !== this.text.length) throw new ShapeError(field, problem);
  }
}
