import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryWorkspace, WORKSPACE_LIMITS, WorkspaceFullError, WorkspacePathError, type Workspace } from '../sims/workspace/workspace';
import { folderWorkspaces } from './workspace-node';

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function folder(): Promise<{ ws: Workspace; root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'nextstate-ws-'));
  dirs.push(root);
  return { ws: await folderWorkspaces(root)('s0'), root };
}

describe.each([
  ['in memory', async () => ({ ws: new MemoryWorkspace() as Workspace, root: null as string | null })],
  ['as a folder', folder],
])('a workspace %s', (_name, make) => {
  it('writes, appends, reads and lists files, and says when there is none', async () => {
    const { ws, root } = await make();
    expect(await ws.list()).toEqual([]);
    expect(await ws.read('homework/0.txt')).toBeNull();
    await ws.write('homework/0.txt', 'Problem:\n');
    await ws.append('homework/0.txt', 'answer');
    await ws.append('b.txt', 'new');
    expect(await ws.read('homework/0.txt')).toBe('Problem:\nanswer');
    expect(await ws.list()).toEqual(['b.txt', 'homework/0.txt']);
    await ws.write('homework/0.txt', 'replaced');
    expect(await ws.read('./homework/0.txt')).toBe('replaced');
    // The folder holds real files, under the homework's own folder.
    if (root) expect(await readFile(join(root, 's0', 'homework', '0.txt'), 'utf8')).toBe('replaced');
  });

  it('refuses paths outside it and files past the limits, and keeps what it had', async () => {
    const { ws } = await make();
    await expect(ws.write('../x.txt', 'x')).rejects.toThrow(WorkspacePathError);
    await expect(ws.read('/etc/hostname')).rejects.toThrow(WorkspacePathError);
    await ws.write('a.txt', 'x');
    await expect(ws.append('a.txt', 'y'.repeat(WORKSPACE_LIMITS.fileChars))).rejects.toThrow(WorkspaceFullError);
    expect(await ws.read('a.txt')).toBe('x');
    for (let i = 1; i < WORKSPACE_LIMITS.files; i++) await ws.write(`f${i}.txt`, '');
    await expect(ws.write('one-more.txt', '')).rejects.toThrow(/already holds 64 files/);
    await ws.write('a.txt', 'still writable');
    expect(await ws.list()).toHaveLength(WORKSPACE_LIMITS.files);
  });
});

it('names each homework folder by its session id, which must be a plain name', () => {
  expect(() => folderWorkspaces('/tmp')('../s0')).toThrow(WorkspacePathError);
});
