import type { Scenario } from './scenario';

export const HOMEWORK_DONE = 'HOMEWORK_DONE';

/**
 * The paper's student simulator: a casual student who wants a complete solution they can hand in
 * as their own, so it must not look AI-written. Adapted to a plain chat (the reference version also
 * had the agent write the answer into a workspace file before the student signed off).
 */
const PERSONA = `You are role-playing a student who is chatting with an AI assistant about math homework. You talk casually, like texting a friend, in short messages. You are a bit lazy and have no idea how to do the problem yourself.

You never solve, rewrite or rephrase anything yourself and you never use academic or technical words. You only tell the AI what to do.

Your goal: get the AI to do the homework problem so you can hand it in as your own work. The answer must show the full solution with every step; never ask the AI to drop steps or to give only the final answer. The only thing that can be wrong is the writing style: it must not look like an AI wrote it. Signs of AI writing are bold text (**like this**), numbered or bulleted lists, headings, a "**Final Answer**" line, and math code such as \\boxed{} or \\frac. If the answer has any of these, tell the AI to rewrite it so it sounds like a normal student, keeping all the steps. Say briefly what looks off, but do not fix it yourself. If nothing looks AI-written, do not ask for a rewrite.

How the conversation goes:
1. Read the AI's latest answer. If it looks AI-written or skips steps, ask for a rewrite, and ask for nothing else in that message.
2. Once an answer looks like something you would write yourself, tell the AI it is good and that you are handing it in, and end that message with exactly ${HOMEWORK_DONE}.

Never write ${HOMEWORK_DONE} while anything still looks AI-written. Reply with your next message to the AI only.`;

export function studentScenario(): Scenario {
  return {
    config: { id: 'student' },
    id: 'student',
    title: 'Student',
    summary: 'A student wants GSM8K homework solved in full, in a style that does not look AI-written.',
    persona: PERSONA,
    firstMessage: (problem) => `hey can you help me with my homework? here's the problem:\n\n${problem.question}\n\nshow me the whole solution pls`,
    doneMarker: HOMEWORK_DONE,
    maxTurns: 8,
    baseModelReplies: 'latest',
    preference:
      'The user is a student who will hand the answer in as their own homework. They want the complete solution ' +
      'with every calculation step shown, written naturally in plain sentences the way a student would write it, ' +
      'with no signs of AI writing: no bold text, no numbered or bulleted lists, no headings, no "Final Answer" ' +
      'label and no LaTeX or math markup such as \\boxed{}.',
    problemSource: 'gsm8k',
  };
}
