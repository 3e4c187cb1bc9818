/**
 * The homework workspace as a folder, for headless runs in Node: each homework's files are real
 * files under `<root>/<session>/` (homework/0.txt, ...), so a person can open what the policy
 * wrote while the run goes, as in the reference's agent workspace. Paths and limits are the
 * in-memory workspace's (sims/workspace), checked before anything touches the disk.
 */
import { appendFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { checkFileCount, checkFileSize, checkWorkspacePath, type Workspace, type WorkspaceFactory } from '../sims/workspace/workspace';

export class FolderWorkspace implements Workspace {
  constructor(readonly root: string) {}

  private file(path: string): { path: string; abs: string } {
    const p = checkWorkspacePath(path);
    return { path: p, abs: join(this.root, ...p.split('/')) };
  }

  async read(path: string): Promise<string | null> {
    const { abs } = this.file(path);
    try {
      return await readFile(abs, 'utf8');
    } catch (e) {
      if (isMissing(e)) return null;
      throw e;
    }
  }

  async write(path: string, content: string): Promise<void> {
    const f = this.file(path);
    if ((await this.read(f.path)) === null) checkFileCount(f.path, (await this.list()).length);
    checkFileSize(f.path, content.length);
    await mkdir(dirname(f.abs), { recursive: true });
    await writeFile(f.abs, content, 'utf8');
  }

  async append(path: string, content: string): Promise<void> {
    const f = this.file(path);
    const before = await this.read(f.path);
    if (before === null) checkFileCount(f.path, (await this.list()).length);
    checkFileSize(f.path, (before ?? '').length + content.length);
    await mkdir(dirname(f.abs), { recursive: true });
    await appendFile(f.abs, content, 'utf8');
  }

  async list(): Promise<string[]> {
    try {
      await stat(this.root);
    } catch (e) {
      if (isMissing(e)) return [];
      throw e;
    }
    const entries = await readdir(this.root, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => relative(this.root, join(e.parentPath, e.name)).split(sep).join('/'))
      .sort();
  }
}

function isMissing(e: unknown): boolean {
  return (e as { code?: string })?.code === 'ENOENT';
}

/** One folder per homework under `root`, named by its session id (checked like a path). */
export function folderWorkspaces(root: string): WorkspaceFactory {
  return (id) => new FolderWorkspace(join(root, checkWorkspacePath(id)));
}
