/**
 * What a run's homework workspaces held: every file's content as the run left it and each change
 * that led there (the scenario's own write, the policy's tool calls), from the workspace_file
 * records; and a policy reply read as its text and its tool calls. Pure; tested in Node.
 */
import type { RunRecord, WorkspaceFileRecord } from '../../rl/records';
import { replyMessage } from '../../rl/tool-calls';

export interface FileChange {
  op: WorkspaceFileRecord['op'];
  /** The session whose turn made it; for the scenario's own write, the one it was made for. */
  session: string;
  /** The turn whose tool call made it; null when the scenario wrote the file. */
  turn: number | null;
  version: number;
  /** The whole file after the change. */
  content: string;
}

export interface FileView {
  path: string;
  /** The file as the run left it. */
  content: string;
  changes: FileChange[];
}

export interface WorkspaceView {
  workspace: string;
  /** By path. */
  files: FileView[];
}

/** Every workspace in the order its first record appears, its files by path. */
export function workspaces(records: readonly RunRecord[]): WorkspaceView[] {
  const byWorkspace = new Map<string, Map<string, FileView>>();
  for (const r of records) {
    if (r.kind !== 'workspace_file') continue;
    let files = byWorkspace.get(r.workspace);
    if (!files) byWorkspace.set(r.workspace, (files = new Map()));
    let file = files.get(r.path);
    if (!file) files.set(r.path, (file = { path: r.path, content: '', changes: [] }));
    file.content = r.content;
    file.changes.push({ op: r.op, session: r.session, turn: r.turn ?? null, version: r.version, content: r.content });
  }
  return [...byWorkspace].map(([workspace, files]) => ({ workspace, files: [...files.values()].sort((a, b) => a.path.localeCompare(b.path)) }));
}

/** One tool call of a reply, as the feed shows it. */
export interface CallView {
  name: string;
  /** The arguments as the policy wrote them (JSON text). */
  arguments: string;
}

/**
 * A reply as its text and its `<tool_call>` blocks, read by the reader the workspace runs them
 * with; a reply without calls is all text.
 */
export function replyParts(response: string): { text: string; calls: CallView[] } {
  const message = replyMessage(response, true, 'call');
  return { text: message.content, calls: (message.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments })) };
}
