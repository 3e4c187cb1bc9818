/**
 * `nextstate run` on a hub id (a mock hub on 127.0.0.1): the run file records the commit the
 * policy loaded, in the config and its model ref (withPolicyCommit, which the lab uses too), and
 * a run of that recorded config loads that commit after main moved.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../test/support/cli/run-cli';
import { startStoriesHub, STORIES_REPO, type MockHub } from '../../test/support/gpu/mock-hub';

const REPO = STORIES_REPO;
let hub: MockHub;
let first = '';
let second = '';

beforeAll(async () => {
  ({
    hub,
    commits: [first, second],
  } = await startStoriesHub());
  vi.stubEnv('HF_ENDPOINT', hub.url);
  vi.stubEnv('HF_HOME', mkdtempSync(join(tmpdir(), 'nextstate-run-revision-home-')));
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await hub.close();
});

const headerOf = async (file: string) => JSON.parse((await runCli('inspect', file, '--json')).out[0]).header;

describe('nextstate run on a hub id', () => {
  it('records the commit main named, and a run of the recorded config loads that commit after main moved', async () => {
    const config = JSON.parse((await runCli('run', '--example', 'storyteller', '--policy', REPO)).out.join('\n'));
    config.schedule = { ...config.schedule, steps: 1, evalEvery: 0 };
    config.preset.batch.size = 2;
    config.sampling.policy.maxNewTokens = 8;
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-run-revision-'));
    writeFileSync(join(dir, 'run.json'), JSON.stringify(config));
    const file = join(dir, 'run.nsrun');
    expect((await runCli('run', '--config', join(dir, 'run.json'), '--out', file, '--json')).code).toBe(0);
    const header = await headerOf(file);
    expect(header.run.config.models.policy.revision).toBe(first);
    expect(header.run.config.modelRefs.policy).toMatchObject({ id: REPO, revision: first });
    expect(header.models.policy.revision).toBe(first);

    hub.setRef(REPO, 'main', second);
    writeFileSync(join(dir, 'again.json'), JSON.stringify(header.run.config));
    const again = join(dir, 'again.nsrun');
    const from = hub.requests.length;
    expect((await runCli('run', '--config', join(dir, 'again.json'), '--out', again, '--json')).code).toBe(0);
    expect((await headerOf(again)).models.policy.revision).toBe(first);
    // A commit is never asked of the hub's API, and the cache had its files.
    expect(hub.requests.slice(from)).toEqual([]);
  }, 60_000);
});
