import type { Infer } from '../base/check';
import type { messageChecker, toolCallChecker } from './validate';

/** Who says a chat message: the one list, which the message checker (validate.ts) reads. */
export const ROLES = ['system', 'user', 'assistant', 'tool'] as const;
export type Role = (typeof ROLES)[number];

/**
 * A function call an assistant message made, in the OpenAI form chat templates read
 * (`arguments` is the JSON text as the model or the client wrote it). Its checker is its one definition.
 */
export type ToolCall = Infer<typeof toolCallChecker>;

/** A chat message as chat templates and OpenAI-compatible endpoints take it. Its checker is its one definition. */
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
