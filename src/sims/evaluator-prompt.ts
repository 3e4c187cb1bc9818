import type { ChatMessage } from '../rl/messages';

/** The scores the personalization evaluator may give, as in the paper. */
export const EVALUATOR_SCORES = [0, 0.25, 0.5, 0.75, 1] as const;

const SYSTEM = `You rate how well an AI assistant's first answer fits one particular user's preferences. You are not grading correctness in general: judge only whether this user would be satisfied with the answer as it is.

Scale:
- 1: the answer fully matches the user's preferences.
- 0.75: it matches them with one small lapse.
- 0.5: it matches some preferences and clearly misses others.
- 0.25: it mostly misses the preferences.
- 0: it ignores or contradicts the preferences.

Think briefly, then give your score as the last thing in your reply, in the form \\boxed{0.75}, using only 0, 0.25, 0.5, 0.75 or 1.`;

/**
 * The evaluator's chat. The three parts are wrapped in tags so that a reader (the rule-based
 * evaluator, a person inspecting a run) can take them apart again even when the answer itself
 * contains markdown headings.
 */
export function buildEvaluatorPrompt(preference: string, question: string, firstAnswer: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content:
        `<preference>\n${preference}\n</preference>\n\n<question>\n${question}\n</question>\n\n` +
        `<answer>\n${firstAnswer}\n</answer>\n\nRate how well the answer fits the user's preferences. ` +
        'End with the score in \\boxed{}.',
    },
  ];
}

export interface EvaluatorPromptParts {
  preference: string;
  question: string;
  answer: string;
}

/** The parts of a prompt made by buildEvaluatorPrompt; null when the messages are not one. */
export function readEvaluatorPrompt(messages: ChatMessage[]): EvaluatorPromptParts | null {
  const text = messages.findLast((m) => m.role === 'user')?.content ?? '';
  // The answer is last and may contain anything, so it runs to the last closing tag.
  const answer = between(text, '<answer>\n', '\n</answer>', 'last');
  const head = text.slice(0, text.indexOf('<answer>\n'));
  const preference = between(head, '<preference>\n', '\n</preference>', 'first');
  const question = between(head, '<question>\n', '\n</question>', 'last');
  if (answer === null || preference === null || question === null) return null;
  return { preference, question, answer };
}

function between(text: string, open: string, close: string, closing: 'first' | 'last'): string | null {
  const start = text.indexOf(open);
  if (start < 0) return null;
  const from = start + open.length;
  const end = closing === 'first' ? text.indexOf(close, from) : text.lastIndexOf(close);
  return end >= from ? text.slice(from, end) : null;
}

/**
 * The score of one evaluator vote: the last `\boxed{x}` in the text, if x is one of the allowed
 * scores; null (an invalid vote) otherwise, including when the last box holds something else.
 */
export function parseEvaluatorScore(text: string): number | null {
  const boxes = [...text.matchAll(/\\boxed\{([^{}]*)\}/g)];
  const last = boxes.at(-1)?.[1].trim();
  if (last === undefined || !/^\+?(\d+(\.\d*)?|\.\d+)$/.test(last)) return null;
  const value = Number(last);
  return (EVALUATOR_SCORES as readonly number[]).includes(value) ? value : null;
}
