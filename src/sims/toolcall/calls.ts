import { CALCULATOR_NAME } from './calculator';

/**
 * Reading Qwen-style tool calls out of a policy's output:
 *
 *   <tool_call>{"name": "calculator", "arguments": {"expression": "12 * 7"}}</tool_call>
 *
 * Policy output is untrusted, so the scan is one linear pass with indexOf (no regular
 * expression over the whole text) and every piece of it quoted in an error message is cut
 * short and JSON-escaped, which keeps it on one line.
 *
 * Accepted beyond the well-formed case, because real models produce them and the intent is
 * unambiguous:
 * - a block with no `</tool_call>` whose body is complete JSON (generation stopped on the
 *   closing tag as a stop string, which backends trim from the text);
 * - `"arguments"` given as a JSON string holding the object (Qwen models sometimes do this);
 * - a number as the expression (`{"expression": 42}`).
 * Everything else is an error for that block: broken JSON, a wrong tool name, missing or extra
 * arguments. A block without a closing tag ends where the next `<tool_call>` begins.
 */

export const TOOL_CALL_OPEN = '<tool_call>';
export const TOOL_CALL_CLOSE = '</tool_call>';

/** A call the calculator can run. */
export interface CalculatorCall {
  /** Position among the output's `<tool_call>` blocks, from 0 (calls and errors share the count). */
  index: number;
  name: typeof CALCULATOR_NAME;
  expression: string;
  /** The block as written, tags included. */
  raw: string;
}

/** A `<tool_call>` block that could not be read as a calculator call. */
export interface ToolCallError {
  index: number;
  raw: string;
  /** Addressed to the model: what is wrong and how to write the call. */
  message: string;
}

export interface ParsedToolCalls {
  calls: CalculatorCall[];
  errors: ToolCallError[];
  /** The output with every block removed, trimmed: the model's prose or final answer. */
  text: string;
  /** Number of `<tool_call>` blocks: calls.length + errors.length. Zero means a final answer. */
  blocks: number;
}

const FORMAT_EXAMPLE = `${TOOL_CALL_OPEN}{"name": "${CALCULATOR_NAME}", "arguments": {"expression": "12 * 7"}}${TOOL_CALL_CLOSE}`;
const QUOTE_CHARS = 60;

/** A short one-line rendering of untrusted text for an error message. */
function quote(s: string): string {
  return JSON.stringify(s.length > QUOTE_CHARS ? `${s.slice(0, QUOTE_CHARS)}...` : s);
}

interface Block {
  body: string;
  raw: string;
  closed: boolean;
}

/** Splits the output into `<tool_call>` blocks and the text around them, in one linear pass. */
function splitBlocks(output: string): { blocks: Block[]; text: string } {
  const blocks: Block[] = [];
  const text: string[] = [];
  // Next occurrences, found once and reused until passed, so that many unclosed blocks stay linear.
  let nextClose = -1;
  let nextOpen = -1;
  let pos = 0;
  for (;;) {
    const open = output.indexOf(TOOL_CALL_OPEN, pos);
    if (open < 0) {
      text.push(output.slice(pos));
      break;
    }
    text.push(output.slice(pos, open));
    const bodyStart = open + TOOL_CALL_OPEN.length;
    if (nextClose !== -2 && nextClose < bodyStart) {
      const found = output.indexOf(TOOL_CALL_CLOSE, bodyStart);
      nextClose = found < 0 ? -2 : found;
    }
    if (nextOpen !== -2 && nextOpen < bodyStart) {
      const found = output.indexOf(TOOL_CALL_OPEN, bodyStart);
      nextOpen = found < 0 ? -2 : found;
    }
    const closed = nextClose >= 0 && (nextOpen < 0 || nextClose < nextOpen);
    const bodyEnd = closed ? nextClose : nextOpen >= 0 ? nextOpen : output.length;
    pos = closed ? bodyEnd + TOOL_CALL_CLOSE.length : bodyEnd;
    blocks.push({ body: output.slice(bodyStart, bodyEnd), raw: output.slice(open, pos), closed });
  }
  return { blocks, text: text.join('').trim() };
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function parseJson(s: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(s) };
  } catch (err) {
    // The engine's message can echo the input; keep it short and on one line like any quote.
    const reason = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ');
    return { ok: false, reason: reason.length > 120 ? `${reason.slice(0, 120)}...` : reason };
  }
}

/** The calculator expression in a block body, or the reason there is none. */
function readCall(block: Block): { expression: string } | { error: string } {
  const body = block.body.trim();
  if (body === '') return { error: `The block is empty. Write it as ${FORMAT_EXAMPLE}.` };
  const json = parseJson(body);
  if (!json.ok) {
    const unclosed = block.closed ? '' : ` It also has no closing ${TOOL_CALL_CLOSE} tag.`;
    return { error: `${quote(body)} is not valid JSON (${json.reason}).${unclosed} Write it as ${FORMAT_EXAMPLE}.` };
  }
  const call = json.value;
  if (!isPlainObject(call)) return { error: `The block must hold a JSON object like ${FORMAT_EXAMPLE}.` };
  if (call.name !== CALCULATOR_NAME) {
    const named = typeof call.name === 'string' ? `There is no tool named ${quote(call.name)}` : 'The call has no "name"';
    return { error: `${named}; the only tool is "${CALCULATOR_NAME}". Write it as ${FORMAT_EXAMPLE}.` };
  }
  let args = call.arguments;
  if (typeof args === 'string') {
    const inner = parseJson(args);
    if (!inner.ok) return { error: `"arguments" is a string that is not a JSON object. Write it as ${FORMAT_EXAMPLE}.` };
    args = inner.value;
  }
  if (!isPlainObject(args)) {
    return { error: `"arguments" must be an object with an "expression", as in ${FORMAT_EXAMPLE}.` };
  }
  const extra = Object.keys(args).filter((k) => k !== 'expression');
  if (extra.length > 0) {
    return { error: `The calculator takes only "expression", not ${extra.map(quote).join(', ')}.` };
  }
  const expression = args.expression;
  if (typeof expression === 'number' && Number.isFinite(expression)) return { expression: String(expression) };
  if (typeof expression !== 'string') {
    return { error: `"arguments.expression" must be a string such as "12 * 7". Write it as ${FORMAT_EXAMPLE}.` };
  }
  return { expression };
}

/**
 * The tool calls in one policy output.
 *
 * @param output - the policy's raw text for one step
 */
export function parseToolCalls(output: string): ParsedToolCalls {
  const { blocks, text } = splitBlocks(output);
  const calls: CalculatorCall[] = [];
  const errors: ToolCallError[] = [];
  blocks.forEach((block, index) => {
    const read = readCall(block);
    if ('error' in read) errors.push({ index, raw: block.raw, message: `Tool call ${index + 1}: ${read.error}` });
    else calls.push({ index, name: CALCULATOR_NAME, expression: read.expression, raw: block.raw });
  });
  return { calls, errors, text, blocks: blocks.length };
}
