/**
 * Tool calls out of a policy's text, in the format its chat template asks for: what the server
 * hands a client (serve-chat.ts), and what the homework workspace runs (sims/workspace). Templates
 * of the Qwen 2.5/3 and Hermes families tell the model to write
 *
 *   <tool_call>
 *   {"name": "read", "arguments": {"path": "a.txt"}}
 *   </tool_call>
 *
 * and read an assistant message's `tool_calls` back in the same form, so a call round-trips
 * through the client unchanged. A template without `<tool_call>` gets no parsing: its replies go
 * out as text. A block that is not a JSON call stays in the text, as vLLM does, so nothing the
 * model wrote is lost.
 */
import type { ChatMessage, ToolCall } from './messages';

/** The tag that opens a call (a streamed reply holds back what may be its start). */
export const TOOL_CALL_OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

/** Whether a chat template uses the `<tool_call>` format (null: no template). */
export function usesToolCallTags(template: string | null): boolean {
  return template !== null && template.includes(TOOL_CALL_OPEN);
}

/**
 * The assistant message a client sees for `text`: its calls taken out when `parse` is on, ids
 * `${idPrefix}_0`, `${idPrefix}_1`, ...
 */
export function replyMessage(text: string, parse: boolean, idPrefix: string): ChatMessage {
  if (!parse || !text.includes(TOOL_CALL_OPEN)) return { role: 'assistant', content: text };
  const calls: ToolCall[] = [];
  const kept: string[] = [];
  let pos = 0;
  for (;;) {
    const open = text.indexOf(TOOL_CALL_OPEN, pos);
    if (open < 0) {
      kept.push(text.slice(pos));
      break;
    }
    kept.push(text.slice(pos, open));
    const close = text.indexOf(CLOSE, open + TOOL_CALL_OPEN.length);
    // Generation can stop before the closing tag (a token limit): the body then runs to the end.
    const end = close < 0 ? text.length : close;
    const call = parseCall(text.slice(open + TOOL_CALL_OPEN.length, end), `${idPrefix}_${calls.length}`);
    if (call) calls.push(call);
    else kept.push(text.slice(open, close < 0 ? end : close + CLOSE.length));
    pos = close < 0 ? text.length : close + CLOSE.length;
  }
  // Only the whitespace before a call goes: the prose stays as the model began it, so a streamed
  // reply's text can go out before it is known whether a call follows.
  const content = kept.join('').trimEnd();
  return calls.length ? { role: 'assistant', content, tool_calls: calls } : { role: 'assistant', content: text };
}

function parseCall(body: string, id: string): ToolCall | null {
  let value: unknown;
  try {
    value = JSON.parse(body.trim());
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { name, arguments: args } = value as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || name === '') return null;
  const argumentsText = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  return { id, type: 'function', function: { name, arguments: argumentsText } };
}

/**
 * Calls an OpenAI client received in `tool_calls` as the template's `<tool_call>` text the model
 * wrote, so a reply from a server that parsed them out reads the same as the model's own text
 * (replyMessage reads them back).
 */
export function toolCallsAsText(calls: readonly ToolCall[]): string {
  return calls
    .map((c) => {
      let args: unknown = c.function.arguments;
      try {
        args = JSON.parse(c.function.arguments);
      } catch {
        // Arguments that are not JSON stay the string the server sent.
      }
      return `${TOOL_CALL_OPEN}\n${JSON.stringify({ name: c.function.name, arguments: args })}\n${CLOSE}`;
    })
    .join('\n');
}
