/** A chat message as chat templates and OpenAI-compatible endpoints take it. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

/**
 * A function call an assistant message made, in the OpenAI form chat templates read
 * (`arguments` is the JSON text as the model or the client wrote it).
 */
export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content: string;
  /** An assistant's calls (a served agent's); the chat template renders them in its own format. */
  tool_calls?: ToolCall[];
  /** The call a tool message answers. */
  tool_call_id?: string;
}

/** A message with its own copies of the tool calls, so editing the copy never edits a record. */
export function copyMessage(m: ChatMessage): ChatMessage {
  return {
    role: m.role,
    content: m.content,
    ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: c.type, function: { ...c.function } })) } : {}),
    ...(m.tool_call_id !== undefined ? { tool_call_id: m.tool_call_id } : {}),
  };
}
