/** A chat message as chat templates and OpenAI-compatible endpoints take it. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ChatMessage {
  role: Role;
  content: string;
}
