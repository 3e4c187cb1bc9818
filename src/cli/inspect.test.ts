import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../rl';
import { startTestServer, until, type TestServer } from '../../test/support/cli/serve';
import { exampleConfig } from '../runtime/run-config';
import { runCli } from '../../test/support/cli/run-cli';
import { sampleRun } from '../../test/support/storage/fixtures';
import { RunJournal } from '../runtime/run-journal';

async function runFile(records: RunRecord[]): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'nextstate-inspect-')), 'run.nsrun');
  const run = await RunJournal.create(file, exampleConfig('toolcall'), 'inspect', {});
  await run.append(records);
  await run.close({ status: 'finished' });
  return file;
}

describe('nextstate inspect', () => {
  it('counts the trajectories trained one sample per step, and why', async () => {
    // alice's trajectories lacked prompt ids, bob's did not join; each has a turn-1 sample (the
    // trajectory, counted once) and later steps that log the reason again.
    const records = sampleRun().map((r) =>
      r.kind === 'sample' ? { ...r, trajectoryFallback: r.session === 'alice' ? ('no-prompt-ids' as const) : ('prompt-mismatch' as const) } : r,
    );
    expect(records.filter((r) => r.kind === 'sample').map((r) => `${r.session}#${r.turn}`)).toEqual(['alice#1', 'bob#1', 'alice#2', 'bob#2', 'alice#3']);
    const file = await runFile(records);
    const inspected = JSON.parse((await runCli('inspect', file, '--json')).out[0]);
    expect(inspected.summary.trajectoryFallbacks).toEqual({ 'no-prompt-ids': 1, 'prompt-mismatch': 1 });
    expect((await runCli('inspect', file)).out).toContain(
      'trajectories trained one sample per step: 2 (the preset asks for one sample each, but their steps did not join into one sequence: ' +
        "1 whose policy reported no prompt ids, 1 where a step's prompt did not continue the ids before it)",
    );
  });

  it('says nothing of fallbacks for a run that had none', async () => {
    const text = (await runCli('inspect', await runFile(sampleRun()))).out;
    expect(text.some((l) => l.startsWith('trajectories trained'))).toBe(false);
  });
});

describe('nextstate inspect on a run still serving', () => {
  let server: TestServer | null = null;
  afterEach(async () => {
    await server?.handle.stop();
    server = null;
  });

  it('counts the sessions begun, not only those ended, and names the ones still open', async () => {
    server = await startTestServer(['--max-tokens', '4']);
    const { client, model, handle, file } = server;
    const ask = (session: string, done = false) =>
      client.chat.completions.create(
        { model, messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'X-Session-Id': session, 'X-Turn-Type': 'main', ...(done ? { 'X-Session-Done': 'true' } : {}) } },
      );
    await ask('alice');
    await ask('bob');
    await ask('alice');
    await ask('carol', true);
    await until(() => handle.runFile.all.some((r) => r.kind === 'session_end'), 30_000, "carol's session_end");
    // The file as the live server last rewrote it: alice and bob have begun and not ended.
    await handle.runFile.snapshot();

    const inspected = JSON.parse((await runCli('inspect', file, '--json')).out[0]);
    expect(inspected.header.run.status).toBe('running');
    expect(inspected.summary.sessions).toBe(1);
    expect(inspected.sessions).toEqual({ begun: 3, ended: 1, open: ['alice', 'bob'] });
    expect((await runCli('inspect', file)).out).toContain('sessions: 3 begun, 1 ended; still open: alice, bob');
  });
});
