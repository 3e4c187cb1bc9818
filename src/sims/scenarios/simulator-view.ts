import type { ChatMessage } from '../../rl/messages';
import type { Scenario } from './scenario';
import { ScenarioConfigError } from './scenario';

/**
 * How the policy's answers are shown to an LLM-simulated user, as in the reference runners: the
 * simulator's own lines are its `assistant` turns and each policy answer arrives as a `user` turn.
 */
export const AI_REPLY_PREFIX = 'The AI assistant replied:\n\n';

/**
 * The simulator's chat for its next message: its persona as system prompt, then the conversation
 * so far with roles swapped. `transcript` is the policy's view (user = simulator, assistant =
 * policy); the policy's system prompt and tool messages are not shown to the simulator.
 */
export function simulatorMessages(scenario: Scenario, transcript: ChatMessage[]): ChatMessage[] {
  if (scenario.persona === null) {
    throw new ScenarioConfigError(`The "${scenario.title}" scenario has no simulated user; the person types the replies.`);
  }
  const turns: ChatMessage[] = transcript.flatMap((message): ChatMessage[] => {
    if (message.role === 'user') return [{ role: 'assistant', content: message.content }];
    if (message.role === 'assistant') return [{ role: 'user', content: AI_REPLY_PREFIX + message.content }];
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
export function isDone(scenario: Scenario, message: string): boolean {
  return scenario.doneMarker !== null && message.includes(scenario.doneMarker);
}
