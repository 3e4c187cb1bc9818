import { ARITHMETIC_LIMITS, ArithmeticError, evaluateArithmetic } from './arithmetic';
import { formatNumber } from './format';

/** The one tool of the tool-call track. */
export const CALCULATOR_NAME = 'calculator';

/**
 * The calculator in the OpenAI function format, for a chat template's `tools` parameter
 * (Qwen's template lists it inside `<tools></tools>` and asks for `<tool_call>` JSON back).
 */
export const CALCULATOR_TOOL = {
  type: 'function',
  function: {
    name: CALCULATOR_NAME,
    description:
      'Evaluates an arithmetic expression and returns its value. Supports numbers (1,250 and 2.5 are fine), ' +
      '+ - * / % (remainder) ^ (power), parentheses, and sqrt, abs, round(x, digits), floor, ceil, min, max. ' +
      'No variables or units.',
    parameters: {
      type: 'object',
      properties: {
        expression: {
          type: 'string',
          description: `The arithmetic to compute, e.g. "(48 - 12) / 4". At most ${ARITHMETIC_LIMITS.maxChars} characters.`,
        },
      },
      required: ['expression'],
    },
  },
} as const;

/** What a tool returned: the text that goes back to the model, and what it means. */
export type ToolOutcome = { ok: true; value: number; content: string } | { ok: false; error: string; content: string };

/** Prefix of every failed tool result, so both models and the rules judge can tell failures apart. */
export const TOOL_ERROR_PREFIX = 'Error: ';

export function toolError(message: string): ToolOutcome {
  return { ok: false, error: message, content: TOOL_ERROR_PREFIX + message };
}

/**
 * Runs the calculator on one expression. Arithmetic errors become tool results (the model reads
 * them and retries); anything else is a bug and is thrown.
 */
export function runCalculator(expression: string): ToolOutcome {
  try {
    const value = evaluateArithmetic(expression);
    return { ok: true, value, content: formatNumber(value) };
  } catch (err) {
    if (err instanceof ArithmeticError) return toolError(err.message);
    throw err;
  }
}
