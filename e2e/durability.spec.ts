/**
 * Faults in real Chromium against the built app, checked against what IndexedDB holds: the tab
 * closed in the middle of a training step, and the storage quota filled in the middle of a run.
 * After each, the log must be whole: seqs 1..N with no gap, train steps 1..K each once, the
 * metrics and the run's byte count agreeing with the records, nothing committed before the
 * fault missing, and the run file exported at the end passing its own integrity check. (Losing
 * the GPU device during a step is lab.spec.ts's test.)
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { watchProblems } from './watch';
import { dataPath } from '../test/data-dir';

const modelDir = dataPath('models/stories260K');
const SAMPLES_PER_STEP = 8;

/** The setup form filled for a storyteller run on stories260K from the file picker, on the CPU. */
async function setUpRun(page: Page, label: string, steps: number): Promise<void> {
  await page.goto('/#/setup');
  await page.getByRole('radio', { name: 'A folder on this computer' }).check();
  await page.getByTestId('policy-files').setInputFiles(readdirSync(modelDir).map((f) => join(modelDir, f)));
  await page.getByLabel(/^Model name/).fill('stories260K');
  await page.getByRole('radio', { name: /^CPU/ }).check();
  await page.getByLabel('Training steps').fill(String(steps));
  await page.getByLabel('Evaluate every K steps (0 = never)').fill('0');
  await page.getByLabel('Answer length (max new tokens)').fill('24');
  await page.getByLabel('Run label (optional)').fill(label);
  await page.getByText('Advanced: every hyperparameter').click();
  await page.getByLabel('Samples per step').fill(String(SAMPLES_PER_STEP));
  await page.getByRole('button', { name: 'Start the run' }).click();
  await expect(page.getByRole('heading', { name: label })).toBeVisible();
}

interface StoredLog {
  status: string;
  seqs: number[];
  steps: number[];
  /** Sample records: 8 a step consumed, the rest waited in the buffer. */
  samples: number;
  metrics: number;
  /** The run row's byte count, and the bytes its records and adapters hold. */
  bytes: number;
  counted: number;
  /** Every record as stored, by seq, to compare before and after a fault. */
  lines: string[];
}

/** What IndexedDB holds for the run with this label, read with the raw API beside the app. */
function storedLog(page: Page, label: string): Promise<StoredLog> {
  return page.evaluate(async (label) => {
    const db = await new Promise<IDBDatabase>((ok, fail) => {
      const req = indexedDB.open('nextstate');
      req.onsuccess = () => ok(req.result);
      req.onerror = () => fail(req.error);
    });
    const all = <T>(store: string): Promise<T[]> =>
      new Promise((ok, fail) => {
        const req = db.transaction(store).objectStore(store).getAll();
        req.onsuccess = () => ok(req.result as T[]);
        req.onerror = () => fail(req.error);
      });
    try {
      const run = (await all<{ id: string; label: string; status: string; bytes: number }>('runs')).find((r) => r.label === label);
      if (!run) throw new Error(`no run labelled ${label}`);
      const mine = <T extends { runId: string }>(rows: T[]) => rows.filter((r) => r.runId === run.id);
      const records = mine(await all<{ runId: string; seq: number; kind: string; step?: number }>('records')).sort((a, b) => a.seq - b.seq);
      const adapters = mine(await all<{ runId: string; weights: Uint8Array; config: string }>('adapters'));
      const utf8 = (s: string) => new TextEncoder().encode(s).length;
      const lines = records.map(({ runId: _r, seq: _s, ...record }) => JSON.stringify(record));
      return {
        status: run.status,
        seqs: records.map((r) => r.seq),
        steps: records.filter((r) => r.kind === 'train_step').map((r) => r.step!),
        samples: records.filter((r) => r.kind === 'sample').length,
        metrics: mine(await all<{ runId: string }>('metrics')).length,
        bytes: run.bytes,
        counted: lines.reduce((n, l) => n + utf8(l), 0) + adapters.reduce((n, a) => n + a.weights.byteLength + utf8(a.config), 0),
        lines,
      };
    } finally {
      db.close();
    }
  }, label);
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** A whole log: no seq missing or repeated, steps 1..K once each, metrics and bytes agreeing. */
function expectWhole(log: StoredLog): void {
  expect(log.seqs).toEqual(upTo(log.seqs.length));
  expect(log.steps).toEqual(upTo(log.steps.length));
  // Evaluations are off in these runs: one metric row per train step.
  expect(log.metrics).toBe(log.steps.length);
  expect(log.bytes).toBe(log.counted);
}

/** Exports the run from the Runs page and reads the file with `nextstate inspect`, which checks it whole, hashes included. */
async function expectExportVerifies(page: Page, label: string, steps: number): Promise<void> {
  await page.getByRole('link', { name: 'Runs' }).click();
  const item = page.getByTestId('run-item').filter({ hasText: label });
  const [download] = await Promise.all([page.waitForEvent('download'), item.getByRole('button', { name: 'Export .nsrun' }).click()]);
  const out = execFileSync(process.execPath, ['bin/nextstate.mjs', 'inspect', (await download.path())!, '--json'], { encoding: 'utf8' });
  const info = JSON.parse(out);
  expect(info.integrity).toBe('verified');
  expect(info.summary).toMatchObject({ steps, lastStep: steps, skippedSteps: 0 });
  // The policy is named by what it was loaded from.
  expect(Object.keys(info.header.models.policy.files).sort()).toEqual(['config.json', 'model.safetensors']);
}

test.describe('fault tests (built app)', () => {
  test('a tab closed in the middle of a training step resumes from its last committed step', async ({ context }) => {
    test.setTimeout(300_000);
    const label = 'e2e closed mid-step';
    const steps = 4;
    const page = await context.newPage();
    const problems = watchProblems(page);
    await setUpRun(page, label, steps);
    await expect(page.getByTestId('run-summary')).toContainText('1 training step', { timeout: 120_000 });

    // Close the tab as soon as the next step reports a micro-batch: the step is under way, its
    // adapter and records not yet written.
    await page.waitForFunction(() => /micro-batch/.test(document.querySelector('[data-testid="train-progress"]')?.textContent ?? ''), undefined, {
      polling: 'raf',
      timeout: 120_000,
    });
    await page.close();

    const reopened = await context.newPage();
    const reopenedProblems = watchProblems(reopened);
    await reopened.goto('/#/runs');
    await expect(reopened.getByRole('status').filter({ hasText: 'were interrupted' })).toBeVisible();
    const atClose = await storedLog(reopened, label);
    expect(atClose.status).toBe('interrupted');
    expectWhole(atClose);
    const committed = atClose.steps.length;
    expect(committed).toBeGreaterThanOrEqual(1);
    expect(committed).toBeLessThan(steps);
    // A full batch had left the buffer for the step that was under way.
    expect(atClose.samples - SAMPLES_PER_STEP * committed).toBeGreaterThanOrEqual(SAMPLES_PER_STEP);

    const item = reopened.getByTestId('run-item').filter({ hasText: label });
    await expect(item).toContainText('interrupted');
    const [chooser] = await Promise.all([reopened.waitForEvent('filechooser'), item.getByRole('button', { name: /^Resume/ }).click()]);
    await chooser.setFiles(modelDir);
    await expect(reopened.getByTestId('run-status')).toHaveText('finished', { timeout: 180_000 });
    await expect(reopened.getByTestId('run-summary')).toContainText(`${steps} training steps`);

    const after = await storedLog(reopened, label);
    expectWhole(after);
    expect(after.steps).toEqual(upTo(steps));
    // Everything committed before the close is still there, unchanged, at the same seqs.
    expect(after.lines.slice(0, atClose.lines.length)).toEqual(atClose.lines);
    await expectExportVerifies(reopened, label, steps);
    // Each run start asked the browser to keep the origin's storage; the System page says what it answered.
    await reopened.getByRole('link', { name: 'System' }).click();
    await expect(reopened.getByTestId('persistence')).toContainText(/asked when the last run started \(.+\):\s*(granted|refused)/);
    expect(problems).toEqual([]);
    expect(reopenedProblems).toEqual([]);
  });

  test('a storage quota filled mid-run pauses it with a clear message, loses nothing, and the run goes on once there is room', async ({ page, baseURL }) => {
    test.setTimeout(300_000);
    const label = 'e2e quota';
    // Chromium logs each refused IndexedDB write; the page shows it as the message tested below.
    const problems = watchProblems(page, [/QuotaExceededError|quota/i]);
    // Many steps: the run must still be writing when Chromium next asks its quota manager.
    await setUpRun(page, label, 50);
    await expect(page.getByTestId('run-summary')).toContainText('1 training step', { timeout: 120_000 });

    // No room for one byte more than the origin holds now. Chromium checks a cached allowance
    // that it lets decay over 30 seconds, so the refusal comes within about that.
    const cdp = await page.context().newCDPSession(page);
    const origin = new URL(baseURL!).origin;
    const { usage } = (await cdp.send('Storage.getUsageAndQuota', { origin })) as { usage: number };
    await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: usage });

    const alert = page.getByRole('alert').filter({ hasText: 'Browser storage is full' });
    await expect(alert).toBeVisible({ timeout: 120_000 });
    await expect(alert).toContainText(
      /Browser storage is full \(.+ of .+ used\): saving run "e2e quota" needs about .+ more\. Nothing was lost: every record saved before this write is intact, and the run should be paused\./,
    );
    await expect(page.getByTestId('run-status')).toHaveText('paused');
    const atFull = await storedLog(page, label);
    expectWhole(atFull);

    // Room again: the write that failed is retried, and the run takes another step.
    await cdp.send('Storage.overrideQuotaForOrigin', { origin });
    await page.getByRole('button', { name: 'I made room: retry and continue' }).click();
    await expect(alert).toHaveCount(0);
    await expect(page.getByTestId('run-summary')).toContainText(`${atFull.steps.length + 1} training steps`, { timeout: 120_000 });
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 60_000 });
    const after = await storedLog(page, label);
    expectWhole(after);
    expect(after.steps.length).toBeGreaterThan(atFull.steps.length);
    expect(after.lines.slice(0, atFull.lines.length)).toEqual(atFull.lines);
    await expectExportVerifies(page, label, after.steps.length);
    expect(problems).toEqual([]);
  });
});
