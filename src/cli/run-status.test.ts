import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exampleConfig } from '../runtime/run-config';
import { sampleRun } from '../../test/support/storage/fixtures';
import { runCli } from '../../test/support/cli/run-cli';
import { RunJournal } from '../runtime/run-journal';
import { describeLiveStatus, readLiveStatus, statusPath } from '../runtime/run-status';

describe('the live status beside a run file', () => {
  it('says a step runs from before it starts, with the run file holding every record so far; clears it with the step; goes when the run closes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'nextstate-status-')), 'run.nsrun');
    const run = await RunJournal.create(file, exampleConfig('student'), 'status', {});
    expect(readLiveStatus(file)).toMatchObject({ pid: process.pid, training: null });
    const records = sampleRun();
    const firstStep = records.findIndex((r) => r.kind === 'train_step');
    await run.append(records.slice(0, firstStep));
    await run.stepStarting({ step: 1, samples: 2, at: 5000 });
    expect(readLiveStatus(file)).toMatchObject({ training: { step: 1, samples: 2, since: 5000 } });
    const during = await runCli('inspect', file);
    expect(during.out.join('\n')).toContain(`records: ${firstStep};`);
    expect(during.out.at(-1)).toBe(`live: process ${process.pid} is training step 1 on 2 samples since ${new Date(5000).toISOString()}`);
    const boundary = records.findIndex((r) => r.kind === 'version_boundary');
    await run.append(records.slice(firstStep, boundary + 1));
    expect(readLiveStatus(file)?.training).toBeNull();
    await run.close();
    expect(existsSync(statusPath(file))).toBe(false);
    const after = (await runCli('inspect', file)).out;
    expect(after.join('\n')).toContain('run "status" (stopped)');
    expect(after.some((l) => l.startsWith('live:'))).toBe(false);
  });

  it('tells a status left by a process that is gone', () => {
    const s = { pid: 123, updated: 0, training: { step: 4, samples: 16, since: 0 } };
    expect(describeLiveStatus(s, () => false)).toBe(
      'live: process 123 is gone; it was training step 4 on 16 samples since 1970-01-01T00:00:00.000Z (continue the run with --resume)',
    );
    expect(describeLiveStatus({ ...s, training: null }, () => true)).toBe('live: process 123 is between steps (updated 1970-01-01T00:00:00.000Z)');
  });
});
