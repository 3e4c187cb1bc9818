import { arrayOf, object, oneOf, str, type Infer } from '../base/check';
import { RECORD_LIMITS as L } from './record-limits';

/** Who says a chat message: the one list, which the message checker (record-shapes.ts) reads. */
export const ROLES = ['system', 'user', 'assistant', 'tool'] as const;
export type Role = (typeof ROLES)[number];

/**
 * A function call an assistant message made, in the OpenAI form chat templates read
 * (`arguments` is the JSON text as the model or the client wrote it): ToolCall's one definition.
 */
export const toolCallChecker = object({ id: str(L.id), type: oneOf('function'), function: object({ name: str(L.id, 1), arguments: str(L.text) }) });
export type ToolCall = Infer<typeof toolCallChecker>;

/**
 * A chat message as chat templates and OpenAI-compatible endpoints take it, and as records and
 * `train --data` prompts hold it: ChatMessage's one definition.
 */
export const messageChecker = object(
  {
    role: oneOf(...ROLES),
    content: str(L.text),
  },
  {
    /** An assistant's calls (a served agent's); the chat template renders them in its own format. */
    tool_calls: arrayOf(toolCallChecker, L.toolCalls),
    /** The call a tool message answers. */
    tool_call_id: str(L.id),
  },
);
export type ChatMessage = Infer<typeof messageChecker>;

/** A message with its own copies of the tool calls, so editing the copy never edits a record. */
export function copyMessage(m: ChatMessage): ChatMessage {
  return {
    role: m.role,
    content: m.content,
    ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: c.type, function: { ...c.function } })) } : {}),
    ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}),
  };
}
