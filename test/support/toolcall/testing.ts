import type { ChatMessage } from '../../../src/rl/messages';
import { CALCULATOR_NAME } from '../../../src/sims/toolcall/calculator';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN } from '../../../src/sims/toolcall/calls';
import type { PolicyStep } from '../../../src/sims/toolcall/environment';

/**
 * Helpers for tests and demos of the tool-call track: a policy that plays back scripted
 * outputs, and the text of a well-formed calculator call.
 */

/** `<tool_call>{"name": "calculator", "arguments": {"expression": ...}}</tool_call>` */
export function calculatorCall(expression: string): string {
  return `${TOOL_CALL_OPEN}\n${JSON.stringify({ name: CALCULATOR_NAME, arguments: { expression } })}\n${TOOL_CALL_CLOSE}`;
}

export interface ScriptedPolicy extends PolicyStep {
  /** The conversations the policy was called with, one per step. */
  readonly seen: ChatMessage[][];
}

/**
 * A policy that returns `outputs` in order, one per step, and repeats the last one when the
 * script runs out (so a looping script is one entry).
 */
export function scriptedPolicy(outputs: readonly string[]): ScriptedPolicy {
  if (outputs.length === 0) throw new Error('scriptedPolicy needs at least one output.');
  const seen: ChatMessage[][] = [];
  const step = async (messages: ChatMessage[]) => {
    seen.push(messages);
    return { text: outputs[Math.min(seen.length - 1, outputs.length - 1)] };
  };
  return Object.assign(step, { seen });
}
