import type { Problem } from '../problems/problem';
import type { Workspace } from './workspace';
import type { WorkspaceChange } from './tools';

/**
 * The homework files of the reference's runners (openclaw-test/student_chat.py): problem i of
 * the run is `homework/i.txt` in the agent's workspace, written before the student's first
 * message as the problem under a "Problem:" line and an empty "Solution:" section that the
 * agent's answer is appended to. The teacher phase later reads the same file.
 */

export function homeworkPath(index: number): string {
  return `homework/${index}.txt`;
}

/** The file as the student phase starts it. */
export function homeworkFileText(problem: Pick<Problem, 'question'>): string {
  return `Problem:\n${problem.question}\n\nSolution:\n`;
}

/** Writes the homework file; returns the change, for the run's records. */
export async function prepareHomework(workspace: Workspace, path: string, problem: Pick<Problem, 'question'>): Promise<WorkspaceChange> {
  const content = homeworkFileText(problem);
  await workspace.write(path, content);
  return { path, op: 'write', content };
}

/**
 * The policy's system message in a workspace session. The chat template adds the tools and how
 * to call them; this says only that the files are there, as the agent's own prompt does.
 */
export const WORKSPACE_SYSTEM_PROMPT =
  'You are a helpful assistant with a workspace of files. Use the read, write and append tools to work with them; ' +
  'a tool result comes back in the next message. When you are done with the tools, reply to the user in plain text.';
