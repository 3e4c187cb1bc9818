import { parseBoxedScore } from './boxed';
import type { ChatMessage } from './messages';

/**
 * The step-judge prompt of the tool-call track: the process reward model (PRM) votes +1 or -1
 * on one step of a trajectory. Like the reference, every step is judged, the final answer
 * included; the judge sees the problem, the trajectory so far, the step's output and the tool
 * results it produced.
 */

const SYSTEM =
  'You are a process reward model (PRM) for a math assistant that can call a calculator tool. ' +
  'You judge ONE step of its work: the assistant output at that step and the tool result it got back.\n' +
  'Answer \\boxed{1} only if all of these hold:\n' +
  '- the reasoning and arithmetic in the step are correct;\n' +
  '- every tool call is well-formed (<tool_call>{"name": "calculator", "arguments": {"expression": "..."}}</tool_call>) ' +
  'and the calculator accepted it;\n' +
  '- calling the tool here is appropriate: the calculation is one the problem needs;\n' +
  '- the tool result moves the solution forward.\n' +
  'A step without a tool call is the final answer: answer \\boxed{1} only if it states the answer and the answer ' +
  'follows correctly from the work.\n' +
  'In every other case answer \\boxed{-1}. Only the first \\boxed{} in your reply counts.';

const PROBLEM_HEADING = '## Problem';
const HISTORY_HEADING = '## Trajectory so far';
const STEP_HEADING = '## Current step';
const TOOL_HEADING = '## Tool result';
const RESPONSE_OPEN = '<tool_response>\n';
const RESPONSE_CLOSE = '\n</tool_response>';
const NO_TOOL_CALL = '(none: the step made no tool call, so it is the final answer)';

/** The last paragraph of the judge's user message. */
export const STEP_JUDGE_CLOSING = 'Judge only the current step; do not continue the trajectory. Think briefly, then end with \\boxed{1} or \\boxed{-1}.';

/** Everything the judge is shown about one step. */
export interface StepJudgeInput {
  question: string;
  stepIndex: number;
  /** Messages of earlier steps: assistant outputs and tool results, oldest first. */
  history: ChatMessage[];
  /** The assistant's output at this step. */
  output: string;
  /** Contents of the tool messages the step produced; empty for the final answer. */
  toolResults: string[];
}

function renderHistory(history: readonly ChatMessage[]): string {
  if (history.length === 0) return '(nothing yet: this is the first step)';
  return history.map((m) => `[${m.role}]\n${m.content}`).join('\n\n');
}

function renderToolResults(results: readonly string[]): string {
  if (results.length === 0) return NO_TOOL_CALL;
  return results.map((r) => RESPONSE_OPEN + r + RESPONSE_CLOSE).join('\n');
}

/** The judge's messages for one step: a system message and a user message. */
export function buildStepJudgePrompt(input: StepJudgeInput): ChatMessage[] {
  const content =
    `${PROBLEM_HEADING}\n${input.question}\n\n` +
    `${HISTORY_HEADING}\n${renderHistory(input.history)}\n\n` +
    `${STEP_HEADING} (step ${input.stepIndex}, assistant output)\n${input.output}\n\n` +
    `${TOOL_HEADING} (role: tool)\n${renderToolResults(input.toolResults)}\n\n` +
    STEP_JUDGE_CLOSING;
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content },
  ];
}

/** Messages that buildStepJudgePrompt did not make. */
export class StepJudgePromptError extends Error {
  override name = 'StepJudgePromptError';
}

/**
 * The step output and tool results back out of a step-judge prompt, for rule-based judges.
 * The tool-result section is found by its LAST heading: it comes after the policy's output, and
 * what follows it is written by the environment (numbers and one-line error messages), so text
 * in the output that imitates a heading cannot move it. The step output is read between the
 * last step heading before it and the tool heading; an imitated step heading inside the output
 * can only shorten it from the front.
 */
export function readStepJudgePrompt(messages: readonly ChatMessage[]): { output: string; toolResults: string[] } {
  const content = messages.findLast((m) => m.role === 'user')?.content ?? '';
  const toolAt = content.lastIndexOf(`\n${TOOL_HEADING}`);
  const stepAt = toolAt < 0 ? -1 : content.lastIndexOf(`\n${STEP_HEADING}`, toolAt);
  if (stepAt < 0) {
    throw new StepJudgePromptError(`A step-judge prompt needs a "${STEP_HEADING}" and a "${TOOL_HEADING}" section; build it with buildStepJudgePrompt().`);
  }
  const stepBody = content.indexOf('\n', stepAt + 1) + 1;
  const output = content.slice(stepBody, toolAt).trim();
  const toolBody = content.indexOf('\n', toolAt + 1) + 1;
  const closing = content.lastIndexOf(STEP_JUDGE_CLOSING);
  const section = content.slice(toolBody, closing > toolBody ? closing : content.length);
  const toolResults: string[] = [];
  for (let at = section.indexOf(RESPONSE_OPEN); at >= 0; at = section.indexOf(RESPONSE_OPEN, at)) {
    const end = section.indexOf(RESPONSE_CLOSE, at + RESPONSE_OPEN.length);
    if (end < 0) break;
    toolResults.push(section.slice(at + RESPONSE_OPEN.length, end));
    at = end + RESPONSE_CLOSE.length;
  }
  return { output, toolResults };
}

/** One PRM vote: +1, -1, or null for a vote without a readable `\boxed{1}` / `\boxed{-1}`. */
export type StepVote = 1 | -1 | null;

/**
 * The vote in one judge reply: its first `\boxed{}`, as the reference's tool-call PRM reads it
 * (toolcall-rl/generate_with_retool.py takes the first match), where the personal-agent judges
 * read the last. The step judge has two classes only, so a `\boxed{0}` is a failed vote (left
 * out of the mean) rather than a neutral one, as in the reference.
 */
export function parseStepVote(text: string): StepVote {
  const score = parseBoxedScore(text, 'first');
  return score === 1 || score === -1 ? score : null;
}
