import type { ChatMessage } from '../../rl/messages';
import { ScenarioConfigError } from './scenario';

/**
 * How the policy's answers are shown to an LLM-simulated user, as in the reference runners: the
 * simulator's own lines are its `assistant` turns and each policy answer arrives as a `user` turn.
 */
export const AI_REPLY_PREFIX = 'The AI assistant replied:\n\n';

/**
 * The simulator's chat for its next message: its persona (the scenario's, or a homework phase's)
 * as system prompt, then the conversation so far with roles swapped. `transcript` is the policy's
 * view (user = simulator, assistant = policy). The simulator sees what a user of an agent sees:
 * the policy's replies, not its system prompt, its tool calls or their results (an assistant
 * message answered by a tool message is a step of the agent's work, not a reply).
 */
export function simulatorMessages(scenario: { persona: string | null; title?: string }, transcript: ChatMessage[]): ChatMessage[] {
  if (scenario.persona === null) {
    throw new ScenarioConfigError(`The "${scenario.title ?? 'talk'}" scenario has no simulated user; the person types the replies.`);
  }
  const turns: ChatMessage[] = transcript.flatMap((message, i): ChatMessage[] => {
    if (message.role === 'user') return [{ role: 'assistant', content: message.content }];
    if (message.role === 'assistant' && transcript[i + 1]?.role !== 'tool') return [{ role: 'user', content: AI_REPLY_PREFIX + message.content }];
    return [];
  });
  return [{ role: 'system', content: scenario.persona }, ...turns];
}

/** A simulator's raw output as the message the policy receives: reasoning blocks removed. */
export function simulatorReply(raw: string): string {
  // Thinking models may also emit only the closing tag, with the reasoning before it.
  const text = raw.replace(/<think>[\s\S]*?<\/think>/g, '');
  const close = text.lastIndexOf('</think>');
  return (close >= 0 ? text.slice(close + '</think>'.length) : text).trim();
}

/** Whether a simulated user's message ends the conversation. */
export function isDone(scenario: { doneMarker: string | null }, message: string): boolean {
  return scenario.doneMarker !== null && message.includes(scenario.doneMarker);
}
