import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../rl/records';
import { spawnServe, until, type ServeProcess } from '../../test/support/cli/serve';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { exampleConfig, parseRunConfig, type RunConfig } from '../runtime/run-config';
import { RemotePolicyError, RemotePolicyService } from '../runtime/remote-policy';
import { runToFile } from './run';
import { journalPath, readJournal } from '../runtime/run-journal';

const KEY = 'remote-policy-test-key-8f3a';

let server: ServeProcess | null = null;
afterEach(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  server = null;
});

/** The storyteller with rules roles, its policy on `url`, small enough for the tiny fixture. */
function storyOnServer(url: string, model: string): RunConfig {
  const config = exampleConfig('storyteller');
  config.models.policy = { kind: 'server', url, model, apiKey: KEY };
  config.preset.batch.size = 2;
  config.schedule = { concurrentSessions: 2, steps: 3, evalEvery: 3, evalProblems: 2, evalVotes: 1 };
  config.sampling.policy.maxNewTokens = 4;
  return config;
}

describe('a remote policy on nextstate serve in a second process', () => {
  it('drives the storyteller through the session headers; the server pairs, judges and trains, the client only records and evaluates', async () => {
    const { dir: modelDir } = await tinyModel({ family: 'qwen3' });
    const dir = mkdtempSync(join(tmpdir(), 'nextstate-remote-'));
    const serverFile = join(dir, 'server.nsrun');
    server = await spawnServe(['--model', modelDir, '--out', serverFile, '--api-key', KEY, '--batch-size', '2', '--max-tokens', '4']);
    const clientFile = join(dir, 'client.nsrun');
    const config = storyOnServer(server.url, basename(modelDir));
    const { status, records } = await runToFile(config, { file: clientFile });
    expect(status).toBe('finished');

    // Client side: the conversations and the evaluations, and nothing judged or trained here.
    const kinds = new Set(records.map((r) => r.kind));
    for (const k of ['judge_vote', 'judge_result', 'sample', 'train_step', 'version_boundary']) expect(kinds.has(k as RunRecord['kind'])).toBe(false);
    const main = records.filter((r) => r.kind === 'interaction' && r.turnType === 'main');
    expect(main.length).toBeGreaterThanOrEqual(6);
    expect(records.filter((r) => r.kind === 'evaluation').map((r) => r.step)).toEqual([0, 3]);
    // The run file says where the policy was, and never holds the key.
    const written = gunzipSync(readFileSync(clientFile)).toString('utf8');
    expect(written).not.toContain(KEY);
    const stored = parseRunConfig(JSON.parse(written.split('\n')[0]).run.config);
    expect(stored.models.policy).toEqual({ kind: 'server', url: server.url, model: basename(modelDir) });

    // Server side: the same turns, paired by their headers, judged, and at least one step trained.
    await until(() => readJournal(journalPath(serverFile)).records.some((r) => r.kind === 'version_boundary'), 120_000, 'a training step on the server');
    const served = readJournal(journalPath(serverFile)).records;
    const servedMain = served.filter((r) => r.kind === 'interaction' && r.turnType === 'main');
    const sessions = new Set(servedMain.map((r) => (r.kind === 'interaction' ? r.session : '')));
    for (const s of sessions) expect(s).toMatch(/^run-[0-9a-f]{8}-s\d+$/);
    // Each client session is one server session, its turns numbered in order.
    const s0 = [...sessions].find((s) => s.endsWith('-s0'))!;
    const turns = servedMain.filter((r) => r.kind === 'interaction' && r.session === s0).map((r) => (r.kind === 'interaction' ? r.turn : 0));
    expect(turns).toEqual(turns.map((_, i) => i + 1));
    expect(served.some((r) => r.kind === 'judge_result' && r.session === s0)).toBe(true);
    // The evaluation's answers went as side turns, never trained on.
    expect(served.some((r) => r.kind === 'interaction' && r.turnType === 'side' && r.session.endsWith('-side'))).toBe(true);
    expect(served.some((r) => r.kind === 'train_step')).toBe(true);
    // The client's records carry the ids the server read and wrote (return_token_ids), as a local policy's do.
    for (const r of main) {
      if (r.kind !== 'interaction') continue;
      expect(r.tokenIds.length).toBeGreaterThan(0);
      const there = served.find((x) => x.kind === 'interaction' && x.session.endsWith(`-${r.session}`) && x.turn === r.turn);
      expect(there).toMatchObject({ response: r.response, tokenIds: r.tokenIds, logprobs: r.logprobs, tokenTexts: r.tokenTexts, promptIds: r.promptIds });
      expect(r.promptIds!.length).toBeGreaterThan(0);
    }
  });

  it('refuses what only the server can do, in one line', async () => {
    const policy = new RemotePolicyService({ url: 'http://127.0.0.1:9/v1', model: 'm' });
    for (const call of [() => policy.train(), () => policy.exportAdapter(), () => policy.score([]), () => policy.scoreTopK()]) {
      const e = await call().catch((x: unknown) => x);
      expect(e).toBeInstanceOf(RemotePolicyError);
      expect((e as Error).message).not.toContain('\n');
    }
  });
});
