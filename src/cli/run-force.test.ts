/**
 * An --out that holds a run: `run` and `serve` refuse it unless told --force, which replaces the
 * whole run (file, journal, checkpoints, workspace) once the policy has loaded, never a folder
 * named like one, and never together with --resume.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { runCli } from '../../test/support/cli/run-cli';
import { startTestServer } from '../../test/support/cli/serve';
import type { RunRecord } from '../rl/records';
import { exampleConfig } from '../runtime/run-config';
import { checkpointsPath, journalPath, readJournal, workspacePath } from '../runtime/run-journal';

const dir = mkdtempSync(join(tmpdir(), 'nextstate-force-'));
let configFile = '';

beforeAll(async () => {
  const { dir: model } = await tinyModel({ family: 'qwen3' });
  const config = exampleConfig('storyteller', model, 'binary');
  config.preset.batch.size = 2;
  config.schedule = { concurrentSessions: 2, steps: 1, evalEvery: 1000, evalProblems: 1, evalVotes: 1 };
  config.sampling.policy.maxNewTokens = 4;
  configFile = join(dir, 'run.json');
  writeFileSync(configFile, JSON.stringify(config));
});

const steps = (records: readonly RunRecord[]) => records.flatMap((r) => (r.kind === 'train_step' ? [r.step] : []));

describe('nextstate run --out a run that is there', () => {
  it('refuses it without --force; --force replaces every file of it once the policy loads, and a policy that fails to load leaves it', async () => {
    const file = join(dir, 'a.nsrun');
    const first = await runCli('run', '--config', configFile, '--out', file);
    expect(first.code, first.err.join('\n')).toBe(0);
    const created = readJournal(journalPath(file)).header.created;

    const refused = await runCli('run', '--config', configFile, '--out', file);
    expect(refused.code).toBe(1);
    expect(refused.err[0]).toMatch(/a\.nsrun already exists; pass --resume to continue that run, --force to replace it, or choose another --out/);

    // A policy that is not there: the run that was there stays whole.
    const broken = await runCli('run', '--config', configFile, '--out', file, '--force', '--policy', join(dir, 'no-model'));
    expect(broken.code).not.toBe(0);
    expect(readJournal(journalPath(file)).header.created).toBe(created);

    // What the old run left beside its file goes with it.
    mkdirSync(join(checkpointsPath(file), 'v99'), { recursive: true });
    mkdirSync(join(workspacePath(file), 'old-homework'), { recursive: true });
    const replaced = await runCli('run', '--config', configFile, '--out', file, '--force', '--steps', '2');
    expect(replaced.code, replaced.err.join('\n')).toBe(0);
    const journal = readJournal(journalPath(file));
    expect(journal.header.created).toBeGreaterThan(created);
    expect(steps(journal.records)).toEqual([1, 2]);
    expect(existsSync(join(checkpointsPath(file), 'v99'))).toBe(false);
    expect(existsSync(join(workspacePath(file), 'old-homework'))).toBe(false);
    const info = await runCli('inspect', file, '--json');
    expect(JSON.parse(info.out[0])).toMatchObject({ integrity: 'verified', summary: { records: journal.records.length } });
  });

  it('never removes a folder named like a run file, and takes --force only with --out and without --resume', async () => {
    const folder = join(dir, 'folder.nsrun');
    mkdirSync(join(folder, 'keep'), { recursive: true });
    const r = await runCli('run', '--config', configFile, '--out', folder, '--force');
    expect(r.code).toBe(1);
    expect(r.err[0]).toMatch(/folder\.nsrun is not a run's file; name another --out/);
    // Before any policy is loaded: a model that is not there is not what it says.
    const first = await runCli('run', '--config', configFile, '--out', folder, '--force', '--policy', join(dir, 'no-model'));
    expect(first.err[0]).toMatch(/folder\.nsrun is not a run's file; name another --out/);
    expect(existsSync(join(folder, 'keep'))).toBe(true);
    const resume = await runCli('run', '--resume', join(dir, 'a.nsrun'), '--force');
    expect(resume.code).toBe(2);
    expect(resume.err[0]).toMatch(/--resume continues the run with the config it recorded; leave out --force/);
    const noOut = await runCli('run', '--config', configFile, '--force');
    expect(noOut.code).toBe(2);
    expect(noOut.err[0]).toMatch(/--force replaces the run at --out RUN_FILE; give --out/);
  });
});

describe('nextstate serve --out a run that is there', () => {
  it('refuses it without --force or --resume, refuses both at once, and --force starts a new run there', async () => {
    const first = await startTestServer();
    await first.handle.stop();
    const { file } = first;
    const created = readJournal(journalPath(file)).header.created;
    await expect(startTestServer([], { file })).rejects.toThrow(/run\.nsrun already exists; pass --resume to continue that run, --force to replace it/);
    await expect(startTestServer(['--resume', '--force'], { file })).rejects.toThrow(/--resume continues the run at --out and --force replaces it; give one/);
    const replaced = await startTestServer(['--force'], { file });
    await replaced.handle.stop();
    const journal = readJournal(journalPath(file));
    expect(journal.header.created).toBeGreaterThan(created);
    expect(journal.records.filter((r) => r.kind === 'interaction')).toEqual([]);
  });
});
