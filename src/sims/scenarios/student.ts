import { homeworkPath } from '../workspace/homework';
import { homeworkMode } from './homework-mode';
import type { HomeworkPhase, HomeworkScenarioConfig, Scenario } from './scenario';

export const HOMEWORK_DONE = 'HOMEWORK_DONE';

/** Who the student is and what they want, in either variant. */
const WHO = `You are role-playing a student who is chatting with an AI assistant about math homework. You talk casually, like texting a friend, in short messages. You are a bit lazy and have no idea how to do the problem yourself.

You never solve, rewrite or rephrase anything yourself and you never use academic or technical words. You only tell the AI what to do.

Your goal: get the AI to do the homework problem so you can hand it in as your own work. The answer must show the full solution with every step; never ask the AI to drop steps or to give only the final answer. The only thing that can be wrong is the writing style: it must not look like an AI wrote it. Signs of AI writing are bold text (**like this**), numbered or bulleted lists, headings, a "**Final Answer**" line, and math code such as \\boxed{} or \\frac. If the answer has any of these, tell the AI to rewrite it so it sounds like a normal student, keeping all the steps. Say briefly what looks off, but do not fix it yourself. If nothing looks AI-written, do not ask for a rewrite.`;

/** The paper's student simulator in a plain chat: the problem is in the first message. */
const CHAT_PERSONA = `${WHO}

How the conversation goes:
1. Read the AI's latest answer. If it looks AI-written or skips steps, ask for a rewrite, and ask for nothing else in that message.
2. Once an answer looks like something you would write yourself, tell the AI it is good and that you are handing it in, and end that message with exactly ${HOMEWORK_DONE}.

Never write ${HOMEWORK_DONE} while anything still looks AI-written. Reply with your next message to the AI only.`;

/**
 * The reference's student in its own words (openclaw-test/student_chat.py, STUDENT_SYSTEM_PROMPT,
 * MIT-licensed): the problem is in a file of the AI's workspace, and the answer goes back into
 * that file, asked for in a message of its own. The reference writes the file's name in place of
 * "homework file" per problem; here the first message names it.
 */
const WORKSPACE_PERSONA = `You are role-playing as a lazy student who knows nothing. You talk casually. You have no idea what the homework is even about.

You CANNOT solve, rewrite, rephrase, or produce any answer yourself. You can ONLY tell the AI what to do. Never use academic or technical language.

Your goal: get the AI to do your homework so you can hand it in as your own. It should NOT look like an AI wrote it. The answers must still include the full solution process with all steps shown — NEVER ask the AI to remove steps or give only the final answer. You need the complete work. The only problem is the WRITING STYLE. If the AI's answer has stuff like bold text, numbered lists, "**Final answer**:", or anything too AI-like, tell it to rewrite in a more natural way but keep all the steps. Just tell it to fix the style — don't fix it yourself. If there is no AI-like stuff, no need to rewrite.

Steps:
1. Look at what the AI gives you. If it looks too "AI-like", tell it to redo it. If not, no need to redo. Do NOT mention writing to the file in the same message. Only ask for a rewrite.
2. After the AI shows you the satisfactory version and it looks good, THEN in a separate message ask it to append the answers to the end of the homework file (not overwrite it). Do NOT combine a rewrite request and a write request.
3. After the AI says it saved the file, say exactly: ${HOMEWORK_DONE}

Never say ${HOMEWORK_DONE} until the AI confirms it wrote the file.
Never write or solve anything yourself. Just give simple instructions.`;

/** The student phase of a homework in the workspace: read and solve, then (asked separately) append the answer. */
export const STUDENT_PHASE: HomeworkPhase = {
  id: 'student',
  persona: WORKSPACE_PERSONA,
  // The reference's FIRST_MESSAGE_TEMPLATE, with the lab's path.
  firstMessage: (_problem, path) =>
    `Hey, I have my homework in the file ${path} in your workspace. Can you read it and help me solve it? ` +
    "Show me the answer first — don't write to the file until I tell you to.",
  doneMarker: HOMEWORK_DONE,
  maxTurns: 8,
};

export function studentScenario(config: Omit<HomeworkScenarioConfig, 'id'> = {}): Scenario {
  const homework = homeworkMode(config.homework);
  const workspace = homework === 'workspace';
  return {
    config: workspace ? { id: 'student', homework } : { id: 'student' },
    id: 'student',
    title: 'Student',
    summary: workspace
      ? 'A student wants GSM8K homework, kept in a workspace file, solved in full in a style that does not look AI-written, then appended to that file.'
      : 'A student wants GSM8K homework solved in full, in a style that does not look AI-written.',
    persona: workspace ? WORKSPACE_PERSONA : CHAT_PERSONA,
    firstMessage: workspace
      ? (problem) => STUDENT_PHASE.firstMessage(problem, homeworkPath(0))
      : (problem) => `hey can you help me with my homework? here's the problem:\n\n${problem.question}\n\nshow me the whole solution pls`,
    doneMarker: HOMEWORK_DONE,
    maxTurns: 8,
    baseModelReplies: 'latest',
    preference:
      'The user is a student who will hand the answer in as their own homework. They want the complete solution ' +
      'with every calculation step shown, written naturally in plain sentences the way a student would write it, ' +
      'with no signs of AI writing: no bold text, no numbered or bulleted lists, no headings, no "Final Answer" ' +
      'label and no LaTeX or math markup such as \\boxed{}.',
    problemSource: 'gsm8k',
    workspace: workspace ? { phases: [STUDENT_PHASE] } : null,
  };
}
