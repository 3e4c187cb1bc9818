/**
 * The agent's workspace: a small file system the policy reaches through its read, write and
 * append tools (tools.ts), as the reference's OpenClaw agent reaches `homework/i.txt` in its
 * workspace. Each homework gets its own (its student and teacher phases share it), so sessions
 * running at once never see each other's files. In the page it lives in memory; in Node it is a
 * folder (runtime/workspace-node.ts); both keep to the same paths and limits.
 */

/** Bounds that keep a policy that writes in a loop from filling memory or a disk. */
export const WORKSPACE_LIMITS = {
  /** Characters in one path. */
  pathChars: 200,
  /** Characters in one file. */
  fileChars: 100_000,
  /** Files in one workspace. */
  files: 64,
} as const;

/** A path the workspace refuses; the message is for the policy (it reads it as the tool's result). */
export class WorkspacePathError extends Error {
  override name = 'WorkspacePathError';
}

/** A write the workspace refuses (too large, too many files); the message is for the policy. */
export class WorkspaceFullError extends Error {
  override name = 'WorkspaceFullError';
}

/** Files by relative path ("homework/0.txt"); every method takes a path checkWorkspacePath accepts. */
export interface Workspace {
  /** The file's text, or null when there is no such file. */
  read(path: string): Promise<string | null>;
  /** Creates the file or replaces its content. */
  write(path: string, content: string): Promise<void>;
  /** Adds to the end of the file, creating it when there is none. */
  append(path: string, content: string): Promise<void>;
  /** Every file's path, sorted. */
  list(): Promise<string[]>;
}

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/**
 * The path as the workspace stores it: relative, "/"-separated, made of plain names (letters,
 * digits, ".", "_", "-"); a leading "./" is dropped. Nothing can climb out ("..") or start at the
 * root, so a folder workspace never touches a file outside its folder.
 *
 * @throws WorkspacePathError saying what is wrong, in words a model can act on
 */
export function checkWorkspacePath(path: string): string {
  if (typeof path !== 'string' || path.trim() === '') throw new WorkspacePathError('The path is empty; give a file path such as "homework/0.txt".');
  const trimmed = path.trim().replace(/^(?:\.\/)+/, '');
  if (trimmed.length > WORKSPACE_LIMITS.pathChars) throw new WorkspacePathError(`The path is longer than ${WORKSPACE_LIMITS.pathChars} characters.`);
  if (trimmed.startsWith('/') || trimmed.startsWith('~')) {
    throw new WorkspacePathError(`"${trimmed.slice(0, 60)}" starts at the root; give a path inside the workspace, such as "homework/0.txt".`);
  }
  const segments = trimmed.split('/');
  if (segments.some((s) => s === '..')) throw new WorkspacePathError('The path climbs out of the workspace with ".."; give a path inside it.');
  if (!segments.every((s) => SEGMENT.test(s))) {
    throw new WorkspacePathError(
      `"${trimmed.slice(0, 60)}" is not a plain file path: use letters, digits, ".", "_" and "-" between "/", such as "homework/0.txt".`,
    );
  }
  return segments.join('/');
}

/** Refuses content that would make a file larger than the limit. */
export function checkFileSize(path: string, chars: number): void {
  if (chars > WORKSPACE_LIMITS.fileChars) {
    throw new WorkspaceFullError(`${path} would hold ${chars} characters; a file holds at most ${WORKSPACE_LIMITS.fileChars}.`);
  }
}

/** Refuses a new file past the limit on files. */
export function checkFileCount(path: string, existing: number): void {
  if (existing >= WORKSPACE_LIMITS.files) {
    throw new WorkspaceFullError(`${path} cannot be created: the workspace already holds ${WORKSPACE_LIMITS.files} files, the most it may.`);
  }
}

/** A workspace in memory: the page's, and the tests'. */
export class MemoryWorkspace implements Workspace {
  private readonly files = new Map<string, string>();

  async read(path: string): Promise<string | null> {
    return this.files.get(checkWorkspacePath(path)) ?? null;
  }

  async write(path: string, content: string): Promise<void> {
    const p = checkWorkspacePath(path);
    if (!this.files.has(p)) checkFileCount(p, this.files.size);
    checkFileSize(p, content.length);
    this.files.set(p, content);
  }

  async append(path: string, content: string): Promise<void> {
    const p = checkWorkspacePath(path);
    const before = this.files.get(p);
    if (before === undefined) checkFileCount(p, this.files.size);
    checkFileSize(p, (before ?? '').length + content.length);
    this.files.set(p, (before ?? '') + content);
  }

  async list(): Promise<string[]> {
    return [...this.files.keys()].sort();
  }
}

/** Makes the workspace of one homework, by its id (the run loop's session of that homework). */
export type WorkspaceFactory = (id: string) => Workspace | Promise<Workspace>;

export const memoryWorkspaces: WorkspaceFactory = () => new MemoryWorkspace();
