import type { ChatMessage } from '../../rl/messages';
import type { GenerateOptions, TextGenerator } from '../../generators/generator';
import { readFinalAnswer } from './answer';
import { readStepJudgePrompt } from '../../rl/step-judge';

/** A tool result that is a plain number, as the calculator writes a success. */
const NUMERIC_RESULT = /^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/;

/**
 * An offline step judge for tool-call trajectories, deterministic and labelled as rules.
 *
 * A tool step scores \boxed{1} when it made at least one call and every call parsed and
 * evaluated: every tool result is a number (a malformed call, an unknown tool or an arithmetic
 * error comes back as "Error: ..."). It cannot tell whether the call was the right calculation.
 *
 * The final step has no tool result, so that rule would fail every final answer and push the
 * policy away from ever answering; instead it scores \boxed{1} when the answer states a number
 * (it does not know the expected answer: correctness is the outcome's job).
 */
export class RulesStepJudge implements TextGenerator {
  readonly kind = 'rules' as const;
  readonly label = 'rules: tool-call step judge';

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    opts.signal?.throwIfAborted();
    const { output, toolResults } = readStepJudgePrompt(messages);
    if (toolResults.length === 0) {
      return readFinalAnswer(output) === null ? 'The final answer states no number.\n\n\\boxed{-1}' : 'The final answer states a number.\n\n\\boxed{1}';
    }
    const failed = toolResults.filter((r) => !NUMERIC_RESULT.test(r.trim())).length;
    return failed === 0
      ? `All ${toolResults.length} tool call(s) ran and returned numbers.\n\n\\boxed{1}`
      : `${failed} of ${toolResults.length} tool call(s) failed or returned no number.\n\n\\boxed{-1}`;
  }
}
