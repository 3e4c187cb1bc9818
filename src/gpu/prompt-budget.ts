/**
 * How much text one prompt may carry, counted before any of it is rendered or tokenized. The
 * tokenizer's time and memory grow with the text, and the position check can refuse a prompt
 * only once it is tokenized: a 15 MB tool description blocked `nextstate serve` for 383 s, then
 * ran it out of memory. So every part the chat template renders counts (message text, tool
 * calls, and each tool's name, description and parameter schema), and so do a request's stop
 * strings, which generation matches against the text as it grows.
 */
import type { ChatMessage } from '../rl/messages';

/**
 * Characters one token may stand for, on average over a whole prompt. The byte-level BPE and
 * sentencepiece vocabularies of the models served average 3 to 5 characters a token on prose
 * and code, and fewer on JSON schemas; 8 is about twice that, so a prompt that fits the
 * positions is not refused, and a refused one could fit only as long runs of a few repeated
 * pieces. The longest token's length (128 characters for Qwen, times 4 for normalizers) bounds it
 * for certain, but let through a 3 MB request that blocked the server for 47 s.
 */
export const CHARS_PER_TOKEN = 8;

/** Characters a prompt may have for a model of `positions` positions. */
export const promptBudget = (positions: number): number => positions * CHARS_PER_TOKEN;

/** One part of a prompt: where it is (as a request names it) and its characters. */
export interface PromptPart {
  field: string;
  chars: number;
}

/** Where a prompt passes its budget: the part that passes it, and the characters up to and including it. */
export type Overrun = PromptPart;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A string's characters; any other value's as JSON text, as the template writes a tool. */
const jsonChars = (v: unknown): number => (typeof v === 'string' ? v.length : (JSON.stringify(v)?.length ?? 0));

/** Each member of a tool, and of its `function` one by one, so an overrun names the description or the schema. */
function* toolParts(tool: object, at: string): Generator<PromptPart> {
  for (const [key, value] of Object.entries(tool)) {
    if (key === 'function' && isObject(value)) {
      for (const [name, member] of Object.entries(value)) yield { field: `${at}.function.${name}`, chars: jsonChars(member) };
    } else yield { field: `${at}.${key}`, chars: jsonChars(value) };
  }
}

function* messageParts(m: ChatMessage, at: string): Generator<PromptPart> {
  yield { field: `${at}.content`, chars: m.content.length };
  for (const [j, call] of (m.tool_calls ?? []).entries()) {
    yield { field: `${at}.tool_calls[${j}]`, chars: call.id.length + call.function.name.length + call.function.arguments.length };
  }
  if (m.tool_call_id !== undefined) yield { field: `${at}.tool_call_id`, chars: m.tool_call_id.length };
}

/**
 * Every part of a conversation the chat template renders, in order, then the stop strings. Lazy:
 * a tool is written out as JSON only if the parts before it still fit.
 */
export function* promptParts(messages: readonly ChatMessage[], tools: readonly object[] = [], stop: readonly string[] = []): Generator<PromptPart> {
  for (const [i, m] of messages.entries()) yield* messageParts(m, `messages[${i}]`);
  for (const [i, tool] of tools.entries()) yield* toolParts(tool, `tools[${i}]`);
  for (const [i, s] of stop.entries()) yield { field: `stop[${i}]`, chars: s.length };
}

/** The part at which `parts` pass `budget` characters; null when they fit. */
export function overrun(parts: Iterable<PromptPart>, budget: number): Overrun | null {
  let chars = 0;
  for (const part of parts) {
    chars += part.chars;
    if (chars > budget) return { field: part.field, chars };
  }
  return null;
}

const count = (n: number) => n.toLocaleString('en-US');

/** What to tell whoever sent a prompt over the budget of a model of `positions` positions. */
export function overrunMessage(o: Overrun, positions: number): string {
  return (
    `${o.field} brings the text to ${count(o.chars)} characters, more than this model's ${count(positions)} positions can hold ` +
    `(${count(promptBudget(positions))} characters at most, ${CHARS_PER_TOKEN} a token); shorten it or the text before it`
  );
}
