/**
 * The lab with its policy on a real `nextstate serve` (a second process on the tiny fixture,
 * started by a browser command): the storyteller's simulated users drive it through
 * RemotePolicyService with session headers, the server pairs, judges and trains, and the lab
 * keeps the conversations and evaluations. A wrong model or a missing key fails in one line.
 */
import '../app.css';
import { flushSync } from 'svelte';
import { describe, expect, inject, it } from 'vitest';
import { commands } from 'vitest/browser';
import type { RunRecord } from '../../rl/records';
import type { LabController } from '../lab/controller.svelte';
import { readWatchStream, recordsUrl } from '../lab/watch-stream';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { render } from '../../../test/support/views/testing';
import RunList from './RunList.svelte';
import RunView from './RunView.svelte';
import Setup from './Setup.svelte';

const controller = labControllers('remote-policy-test');
const KEY = 'sk-lab-remote';

/** The storyteller, small, with its policy on the server at `url` serving `model`. */
function onServer(lab: LabController, url: string, model: string): void {
  lab.setup.policy = { ...lab.setup.policy, source: 'server', server: { url, model } };
  lab.setup.preset.batch.size = 2;
  lab.setup.schedule = { concurrentSessions: 2, steps: 2, evalEvery: 2, evalProblems: 2, evalVotes: 1 };
  lab.setup.sampling.policy.maxNewTokens = 4;
}

/** What the server logged so far, read through its record feed. */
async function serverRecords(root: string): Promise<RunRecord[]> {
  const abort = new AbortController();
  const res = await fetch(recordsUrl(root, 1), { headers: { authorization: `Bearer ${KEY}` }, signal: abort.signal });
  const out: RunRecord[] = [];
  let quiet: ReturnType<typeof setTimeout> | undefined;
  const stopSoon = () => {
    clearTimeout(quiet);
    quiet = setTimeout(() => abort.abort(), 300);
  };
  stopSoon();
  await readWatchStream(
    res.body!,
    (e) => {
      if (e.type === 'records') out.push(...e.records);
      stopSoon();
    },
    undefined,
    abort.signal,
  ).catch(() => {});
  return out;
}

describe('the lab’s policy on a server', () => {
  it('drives nextstate serve with its simulated users; the server judges and trains; errors are one line and lose nothing', async () => {
    const modelDir = inject('tinyModelDir');
    const model = modelDir.split('/').pop()!;
    const root = await commands.startServe(modelDir, ['--max-tokens', '4', '--batch-size', '2', '--api-key', KEY, '--allow-origin', location.origin]);
    try {
      const url = `${root}/v1`;
      const lab = await controller();
      onServer(lab, url, 'not-served');
      {
        using view = render(Setup, { lab });
        flushSync();
        const t = view.target;
        expect(t.querySelector('[data-testid="training-off"]')?.textContent).toMatch(/^\s*Training is off here: the server judges and trains/);
        expect(t.querySelector('[data-testid="policy-server-hint"]')?.textContent).toContain(`--allow-origin ${location.origin}`);
        // No method, preset or judge to choose: they are the server's.
        expect(t.textContent).not.toContain('Advanced');
        expect([...t.querySelectorAll('legend')].map((l) => l.textContent?.trim())).toContain('Simulated user and evaluator (the server judges)');
      }

      // No key, then a model the server does not serve: each stops the run with one line saying what to fix.
      await lab.start();
      await expect.poll(() => lab.phase, { timeout: 30_000, interval: 100 }).toBe('idle');
      expect(lab.error).toMatch(/^The run failed: The endpoint .* \(model "not-served"\) refused the request with HTTP 401: check the API key\.$/);
      const failed = lab.runs.find((r) => (r.config as unknown as { models: { policy: { model: string } } }).models.policy.model === 'not-served');
      // What the run had is kept: a stopped run in Runs.
      expect(failed?.status).toBe('stopped');
      // The server holds what it learned: nothing here to resume it from.
      expect(lab.canResume(failed!)).toBe(false);
      lab.error = null;
      await lab.setApiKey(url, KEY);
      await lab.start();
      await expect.poll(() => lab.phase, { timeout: 30_000, interval: 100 }).toBe('idle');
      expect(lab.error).toMatch(/HTTP 404 \(model "not-served" is not served here; this server serves ".+"/);
      expect(lab.error).not.toContain('\n');
      lab.error = null;
      onServer(lab, url, model);

      // With the key (kept in settings, never in the run) and the served model it runs: two steps counted, evaluated at 0 and 2.
      await lab.start();
      expect(lab.error).toBeNull();
      const runId = lab.liveRunId!;
      {
        using view = render(RunView, { lab });
        flushSync();
        expect(view.target.querySelector('[data-testid="remote-policy"]')?.textContent).toBe('remote policy');
        await expect.poll(() => lab.phase, { timeout: 120_000, interval: 200 }).toBe('idle');
      }
      expect(lab.error).toBeNull();
      const info = await lab.store.getRun(runId);
      expect(info?.status).toBe('finished');
      expect(info?.config).toMatchObject({ models: { policy: { kind: 'server', url, model } } });
      expect(JSON.stringify(info?.config)).not.toContain(KEY);
      const records = (await lab.store.records(runId)).map((r) => r.record);
      const kinds = new Set(records.map((r) => r.kind));
      for (const k of ['judge_result', 'sample', 'train_step', 'version_boundary'] as const) expect(kinds.has(k)).toBe(false);
      expect(records.filter((r) => r.kind === 'interaction' && r.turnType === 'main').length).toBeGreaterThanOrEqual(4);
      expect(records.filter((r) => r.kind === 'evaluation').map((r) => r.step)).toEqual([0, 2]);
      {
        using list = render(RunList, { lab });
        flushSync();
        const row = [...list.target.querySelectorAll('[data-testid="run-item"]')].find((li) => li.textContent?.includes(info!.label))!;
        expect(row.querySelector('[data-testid="run-remote-policy"]')?.textContent).toBe('remote policy');
      }

      // The server paired the lab's turns by their session headers and judged them.
      const served = await serverRecords(root);
      const sessions = new Set(served.flatMap((r) => (r.kind === 'interaction' && r.turnType === 'main' ? [r.session] : [])));
      expect(sessions.size).toBeGreaterThanOrEqual(2);
      for (const s of sessions) expect(s).toMatch(/^run-[0-9a-f]{8}-s\d+$/);
      expect(served.some((r) => r.kind === 'judge_result')).toBe(true);
    } finally {
      await commands.stopServe(root);
    }
  });
});
