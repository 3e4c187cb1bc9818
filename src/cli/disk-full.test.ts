/** A disk that fills while a run is journaled: one line, exit 1, no temp file, and the journal resumes. */
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunRecord } from '../rl/records';
import { exampleConfig } from '../runtime/run-config';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { until } from '../../test/support/cli/serve';
import { DiskFullError } from '../runtime/disk-full';
import { main } from './main';
import { journalPath, readJournal, RunJournal } from '../runtime/run-journal';

const end = (i: number): RunRecord => ({ kind: 'session_end', version: 0, ts: i, session: `s${i}`, reason: 'timeout', turns: 1, mainTurns: 1 });
const temps = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.tmp'));
const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/**
 * Makes every FileHandle write fail as a full disk does: the first call writes half of what it
 * was given (a write cut short), the later ones nothing. Returns the spy, to restore.
 */
async function fillDisk(dir: string) {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const write = proto.write;
  let calls = 0;
  return vi.spyOn(proto, 'write').mockImplementation(async function (this: FileHandle, ...args: unknown[]) {
    const [buffer, offset, length] = args as [Uint8Array, number, number];
    if (++calls === 1 && length > 1)
      return (write as (b: Uint8Array, o: number, l: number) => Promise<unknown>).call(this, buffer, offset, length >> 1) as never;
    throw enospc();
  });
}

afterEach(() => {
  vi.restoreAllMocks();
});

const ONE_LINE = /^disk full while writing run\.nsrun\.journal: \d+ bytes free; free some space in .+, then continue with --resume$/;

describe('a full disk while journaling', () => {
  it('fails the commit in one line, cuts the line it cut short, fails every later commit, and the journal resumes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-full-'));
    const file = join(dir, 'run.nsrun');
    const run = await RunJournal.create(file, exampleConfig('student'), 'full', {});
    await run.append([end(1), end(2)]);
    // The run file is current, so only the journal writes while the disk is full.
    await run.snapshot();
    const committed = statSync(journalPath(file)).size;
    const spy = await fillDisk(dir);
    const failed = await run.append([end(3)]).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(DiskFullError);
    expect((failed as Error).message).toMatch(ONE_LINE);
    expect(statSync(journalPath(file)).size).toBe(committed);
    spy.mockRestore();
    // The disk has room again, but the run has failed: nothing more goes after the failure.
    await expect(run.append([end(4)])).rejects.toBe(failed);
    await run.close();
    expect(temps(dir)).toEqual([]);
    const { run: resumed } = await RunJournal.resume(file, {});
    expect(resumed.all).toEqual([end(1), end(2)]);
    await resumed.append([end(5)]);
    await resumed.close();
    expect(readJournal(journalPath(file)).records).toEqual([end(1), end(2), end(5)]);
  });

  it('a run file rewrite that fills the disk leaves no temp file, and fails the next commit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-full-'));
    const file = join(dir, 'run.nsrun');
    const run = await RunJournal.create(file, exampleConfig('student'), 'full', {});
    await run.append([end(1)]);
    const spy = await fillDisk(dir);
    await expect(run.snapshot()).rejects.toThrow(/^disk full while writing run\.nsrun: \d+ bytes free; /);
    expect(temps(dir)).toEqual([]);
    spy.mockRestore();
    await expect(run.append([end(2)])).rejects.toThrow(DiskFullError);
    await run.close();
    expect(temps(dir)).toEqual([]);
    expect(readJournal(journalPath(file)).records).toEqual([end(1)]);
  });

  it('nextstate serve: the request gets the line, the server exits 1 with it and no stack trace, and --resume starts from the journal', async () => {
    const { dir: modelDir } = await tinyModel({ family: 'qwen3' });
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-full-'));
    const file = join(dir, 'run.nsrun');
    const out: string[] = [];
    const err: string[] = [];
    const args = ['serve', '--model', modelDir, '--out', file, '--port', '0', '--json', '--max-tokens', '2'];
    const code = main(
      args,
      (l) => out.push(l),
      (l) => err.push(l),
    );
    await until(() => out.some((l) => l.includes('"listening"')), 60_000, 'the server to listen');
    const { url } = JSON.parse(out.find((l) => l.includes('"listening"'))!) as { url: string };
    await fillDisk(dir);
    const res = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(500);
    expect(JSON.parse(await res.text()).error.message).toMatch(ONE_LINE);
    expect(await code).toBe(1);
    vi.restoreAllMocks();
    expect(err.filter((l) => l.includes('disk full'))).toEqual([
      expect.stringMatching(/^nextstate serve: disk full while writing run\.nsrun\.journal: \d+ bytes free; /),
    ]);
    expect(err.join('\n')).not.toMatch(/\n\s+at /);
    expect(temps(dir)).toEqual([]);
    const { run: resumed } = await RunJournal.resume(file, {});
    expect(resumed.all).toEqual([]);
    await resumed.close();
  });
});
