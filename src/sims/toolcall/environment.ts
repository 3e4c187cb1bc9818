import { InvalidArgumentError } from '../../rl/errors';
import type { ChatMessage } from '../../rl/messages';
import type { GenerateOptions, TextGenerator } from '../../generators/generator';
import type { Problem } from '../problems/problem';
import { parseGsm8kAnswer } from '../problems/gsm8k-answer';
import { readFinalAnswer, sameAnswer, type FinalAnswer } from './answer';
import { CALCULATOR_NAME, runCalculator, toolError, type ToolOutcome } from './calculator';
import { TOOL_CALL_CLOSE, TOOL_CALL_OPEN, parseToolCalls, type CalculatorCall, type ParsedToolCalls } from './calls';

/**
 * One tool-call episode on a GSM8K problem: the policy answers, every `<tool_call>` in its
 * output is run and answered with a `tool` message, and the first output without a
 * `<tool_call>` is the final answer. The outcome o is +1 when that answer equals the problem's
 * `#### N`, else -1 (a wrong or unreadable answer, or running out of steps).
 *
 * An output whose tool calls are all malformed still counts as a tool step, not as a final
 * answer: the model tried to call the tool, and the error tells it how to call it properly.
 */

/** What the policy returns for one step; extra fields (token ids, log-probs) ride along untouched. */
export interface PolicyOutput {
  text: string;
}

/** One policy step: the conversation so far in, the assistant's next output out. */
export type PolicyStep<O extends PolicyOutput = PolicyOutput> = (messages: ChatMessage[]) => Promise<O>;

export const DEFAULT_MAX_STEPS = 8;
/** Calls beyond this in one output are answered with an error instead of being run. */
export const DEFAULT_MAX_CALLS_PER_STEP = 8;

/**
 * Tells the policy about the calculator in plain text, so any chat backend can run the episode.
 * A caller that renders Qwen's template with `tools: [CALCULATOR_TOOL]` may pass its own.
 */
export const TOOL_SYSTEM_PROMPT =
  'You are a careful math assistant. You can use a calculator for any arithmetic. To call it, write\n' +
  `${TOOL_CALL_OPEN}\n{"name": "${CALCULATOR_NAME}", "arguments": {"expression": "(48 - 12) / 4"}}\n${TOOL_CALL_CLOSE}\n` +
  'and stop; the result comes back in a tool message. You may call it several times, one step at a time. ' +
  'When you know the answer, reply without a tool call and end with "The answer is N", where N is a number.';

export interface EpisodeOptions {
  maxSteps?: number;
  maxCallsPerStep?: number;
  systemPrompt?: string;
  signal?: AbortSignal;
}

/** The result of one `<tool_call>` block, in block order. */
export interface ToolResult {
  index: number;
  /** The call read from the block (run unless past the per-step cap), or null when it could not be read. */
  call: CalculatorCall | null;
  outcome: ToolOutcome;
}

export interface TrajectoryStep<O extends PolicyOutput = PolicyOutput> {
  index: number;
  /** The conversation the policy saw (a copy). */
  messages: ChatMessage[];
  output: O;
  parsed: ParsedToolCalls;
  results: ToolResult[];
  /** The `tool` messages appended after the step, one per block; empty for the final answer. */
  toolMessages: ChatMessage[];
  /** True for the step without a tool call, which ends the episode. */
  final: boolean;
}

export type EpisodeEnd = 'answered' | 'step-limit';

export interface Trajectory<O extends PolicyOutput = PolicyOutput> {
  question: string;
  /** The number after `####` in the problem's answer. */
  expected: number;
  steps: TrajectoryStep<O>[];
  /** o: +1 when the final answer equals `expected`, else -1. */
  outcome: 1 | -1;
  end: EpisodeEnd;
  /** The last step's text when it was a final answer, else null. */
  finalText: string | null;
  /** The number read from the final answer, or null (no final answer, or no number in it). */
  finalAnswer: FinalAnswer | null;
  /** The whole conversation, from the system prompt to the last tool or assistant message. */
  messages: ChatMessage[];
}

/** The policy returned something that is not `{ text: string }`. */
export class PolicyOutputError extends Error {
  override name = 'PolicyOutputError';
}

const copyMessages = (messages: readonly ChatMessage[]): ChatMessage[] => messages.map((m) => ({ ...m }));

export function episodeMessages(question: string, systemPrompt: string = TOOL_SYSTEM_PROMPT): ChatMessage[] {
  return [
    { role: 'system', content: systemPrompt },
    { role: 'user', content: question },
  ];
}

/** Runs the blocks of one output in order; blocks past `maxCalls` are answered with an error, not run. */
export function runToolCalls(parsed: ParsedToolCalls, maxCalls: number = DEFAULT_MAX_CALLS_PER_STEP): ToolResult[] {
  const blocks = [...parsed.calls, ...parsed.errors].sort((a, b) => a.index - b.index);
  return blocks.map((block) => {
    const call = 'expression' in block ? block : null;
    if (block.index >= maxCalls) {
      const message = `Tool call ${block.index + 1} was not run: at most ${maxCalls} calls are run per step. Make fewer calls at a time.`;
      return { index: block.index, call, outcome: toolError(message) };
    }
    const outcome = 'expression' in block ? runCalculator(block.expression) : toolError(block.message);
    return { index: block.index, call, outcome };
  });
}

/**
 * Runs one episode.
 *
 * @param problem - question and GSM8K-style answer ending in `#### N`
 * @param policy - called once per step with a copy of the conversation so far
 * @throws Gsm8kAnswerError (before any policy call) when the answer has no `#### N`;
 *   InvalidArgumentError (maxSteps, maxCallsPerStep); PolicyOutputError; whatever the policy throws;
 *   the signal's reason when aborted (checked before every step)
 */
export async function runToolEpisode<O extends PolicyOutput>(
  problem: Pick<Problem, 'question' | 'answer'>,
  policy: PolicyStep<O>,
  opts: EpisodeOptions = {},
): Promise<Trajectory<O>> {
  const expected = parseGsm8kAnswer(problem.answer);
  const maxSteps = opts.maxSteps ?? DEFAULT_MAX_STEPS;
  const maxCalls = opts.maxCallsPerStep ?? DEFAULT_MAX_CALLS_PER_STEP;
  for (const [name, value] of [
    ['maxSteps', maxSteps],
    ['maxCallsPerStep', maxCalls],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new InvalidArgumentError(`${name} is ${value}; it must be a whole number of at least 1.`);
    }
  }
  const messages = episodeMessages(problem.question, opts.systemPrompt);
  const steps: TrajectoryStep<O>[] = [];
  const trajectory = (end: EpisodeEnd, finalText: string | null): Trajectory<O> => {
    const finalAnswer = finalText === null ? null : readFinalAnswer(finalText);
    const correct = finalAnswer !== null && sameAnswer(finalAnswer.value, expected);
    return { question: problem.question, expected, steps, outcome: correct ? 1 : -1, end, finalText, finalAnswer, messages };
  };
  for (let index = 0; index < maxSteps; index++) {
    opts.signal?.throwIfAborted();
    const seen = copyMessages(messages);
    const output = await policy(copyMessages(messages));
    if (typeof output?.text !== 'string') {
      throw new PolicyOutputError(`The policy's step ${index} returned no "text" string; a policy step must resolve to { text }.`);
    }
    const parsed = parseToolCalls(output.text);
    messages.push({ role: 'assistant', content: output.text });
    const final = parsed.blocks === 0;
    const results = final ? [] : runToolCalls(parsed, maxCalls);
    const toolMessages: ChatMessage[] = results.map((r) => ({ role: 'tool', content: r.outcome.content }));
    messages.push(...toolMessages);
    steps.push({ index, messages: seen, output, parsed, results, toolMessages, final });
    if (final) return trajectory('answered', output.text);
  }
  return trajectory('step-limit', null);
}

/**
 * A policy step backed by any TextGenerator (engine, endpoint, transformers.js). Sampling
 * settings pass through; a stop on `</tool_call>` is up to the backend.
 */
export function generatorPolicy(generator: TextGenerator, opts: GenerateOptions = {}): PolicyStep {
  return async (messages) => ({ text: await generator.generate(messages, opts) });
}
