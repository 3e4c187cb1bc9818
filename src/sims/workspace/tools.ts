/**
 * The workspace's tools as the policy sees them: read, write and append, in the OpenAI function
 * format a chat template lists (Qwen's `<tools>` block), and what each call returns. The calls
 * come out of the policy's text through the one `<tool_call>` reader the server also uses
 * (rl/tool-calls.ts). A call that cannot run (an unknown tool, arguments that are not the ones
 * listed, a path outside the workspace, a missing file) returns an error result that starts with
 * `Error: `, as an environment reports a failed call: the judge reads it as the call's failure.
 */
import type { ToolCall } from '../../rl/messages';
import type { WorkspaceFileRecord } from '../../rl/records';
import { TOOL_ERROR_PREFIX } from '../toolcall/calculator';
import { checkWorkspacePath, WorkspaceFullError, WorkspacePathError, type Workspace } from './workspace';

export const READ_TOOL_NAME = 'read';
export const WRITE_TOOL_NAME = 'write';
export const APPEND_TOOL_NAME = 'append';

const pathParameter = { type: 'string', description: 'The file path inside the workspace, e.g. "homework/0.txt".' } as const;

/** The tools every prompt of a workspace session lists, in the OpenAI function format. */
export const WORKSPACE_TOOLS: readonly object[] = [
  {
    type: 'function',
    function: {
      name: READ_TOOL_NAME,
      description: 'Reads a file of your workspace and returns its whole text.',
      parameters: { type: 'object', properties: { path: pathParameter }, required: ['path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: WRITE_TOOL_NAME,
      description: 'Writes a file of your workspace: creates it, or replaces everything in it with the new content.',
      parameters: {
        type: 'object',
        properties: { path: pathParameter, content: { type: 'string', description: 'The whole new text of the file.' } },
        required: ['path', 'content'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: APPEND_TOOL_NAME,
      description: 'Adds text to the end of a file of your workspace, keeping what is already in it (creates the file if there is none).',
      parameters: {
        type: 'object',
        properties: { path: pathParameter, content: { type: 'string', description: 'The text to add at the end of the file.' } },
        required: ['path', 'content'],
      },
    },
  },
];

const NAMES = [READ_TOOL_NAME, WRITE_TOOL_NAME, APPEND_TOOL_NAME] as const;
type ToolName = (typeof NAMES)[number];
const PARAMETERS: Record<ToolName, readonly string[]> = { read: ['path'], write: ['path', 'content'], append: ['path', 'content'] };

/** What a call changed: the file and its whole text afterwards. */
export interface WorkspaceChange {
  path: string;
  op: WorkspaceFileRecord['op'];
  content: string;
}

/** One call's result: the tool message's text, whether it ran, and the change it made (null for a read or a failure). */
export interface WorkspaceCallResult {
  call: ToolCall;
  ok: boolean;
  content: string;
  change: WorkspaceChange | null;
}

/** Thrown inside a call for a result the policy should read as an error. */
class CallError extends Error {}

function toolArguments(call: ToolCall): { name: ToolName; args: Record<string, string> } {
  const name = call.function.name as ToolName;
  if (!NAMES.includes(name)) {
    throw new CallError(`There is no tool named ${JSON.stringify(call.function.name.slice(0, 60))}; the tools are ${NAMES.join(', ')}.`);
  }
  let args: unknown;
  try {
    args = JSON.parse(call.function.arguments);
  } catch {
    throw new CallError(`The arguments of ${name} are not a JSON object; write them as {${PARAMETERS[name].map((p) => `"${p}": "..."`).join(', ')}}.`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new CallError(`The arguments of ${name} must be a JSON object.`);
  const given = args as Record<string, unknown>;
  const extra = Object.keys(given).filter((k) => !PARAMETERS[name].includes(k));
  if (extra.length)
    throw new CallError(`${name} takes only ${PARAMETERS[name].join(' and ')}, not ${extra.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}.`);
  for (const p of PARAMETERS[name]) {
    if (typeof given[p] !== 'string') throw new CallError(`${name} needs "${p}" as a string.`);
  }
  return { name, args: given as Record<string, string> };
}

/**
 * Runs one call against the workspace. Failures the policy can fix become error results;
 * anything else (a broken disk) is thrown.
 */
export async function runWorkspaceCall(workspace: Workspace, call: ToolCall): Promise<WorkspaceCallResult> {
  try {
    const { name, args } = toolArguments(call);
    const path = checkWorkspacePath(args.path);
    if (name === READ_TOOL_NAME) {
      const text = await workspace.read(path);
      if (text === null) {
        const files = await workspace.list();
        throw new CallError(`${path} does not exist. ${files.length ? `The workspace holds ${files.join(', ')}.` : 'The workspace is empty.'}`);
      }
      return { call, ok: true, content: text === '' ? `(${path} is empty)` : text, change: null };
    }
    if (name === WRITE_TOOL_NAME) await workspace.write(path, args.content);
    else await workspace.append(path, args.content);
    const content = (await workspace.read(path)) ?? '';
    const done =
      name === WRITE_TOOL_NAME ? `Wrote ${args.content.length} characters to ${path}.` : `Appended ${args.content.length} characters to the end of ${path}.`;
    return { call, ok: true, content: `${done} It now holds ${content.length} characters.`, change: { path, op: name, content } };
  } catch (e) {
    if (e instanceof CallError || e instanceof WorkspacePathError || e instanceof WorkspaceFullError) {
      return { call, ok: false, content: TOOL_ERROR_PREFIX + e.message, change: null };
    }
    throw e;
  }
}
