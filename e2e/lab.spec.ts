/**
 * The lab end to end in real Chromium against the built app: a storyteller run on the real
 * stories260K model loaded through the file picker, rules for every role, two training steps
 * with evaluations, the token view of a judged turn, the run found again after a reload, and its
 * exported .nsrun file imported into a fresh browser profile. Screenshots of the main views go to
 * e2e/artifacts/.
 */
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { watchProblems } from './watch';
import { dataPath } from '../test/data-dir';

const ARTIFACTS = 'e2e/artifacts';
const modelDir = dataPath('models/stories260K');

test.describe('the lab (built app under vite preview)', () => {
  test('configures, runs, reloads, exports and imports a storyteller run on stories260K', async ({ page, browser }) => {
    test.setTimeout(360_000);
    mkdirSync(ARTIFACTS, { recursive: true });
    const problems = watchProblems(page);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto('/#/setup');
    await expect(page.getByRole('heading', { name: 'Set up a run' })).toBeVisible();

    // Scenario and method: the defaults are storyteller and Combined.
    await expect(page.getByRole('radio', { name: /Storyteller/ })).toBeChecked();
    await expect(page.getByRole('radio', { name: /^Combined/ })).toBeChecked();

    // The policy from data/models/stories260K, through the file picker.
    await page.getByRole('radio', { name: 'A folder on this computer' }).check();
    const files = readdirSync(modelDir).map((f) => join(modelDir, f));
    await page.getByTestId('policy-files').setInputFiles(files);
    await expect(page.getByTestId('model-estimate')).toContainText('260,032 parameters');
    await page.getByLabel(/^Model name/).fill('stories260K');

    await page.getByRole('radio', { name: /^CPU/ }).check();
    await page.getByLabel('Training steps').fill('2');
    await page.getByLabel('Evaluate every K steps (0 = never)').fill('1');
    await page.getByLabel('Evaluation problems').fill('3');
    await page.getByLabel('Evaluator votes').fill('1');
    await page.getByLabel('Answer length (max new tokens)').fill('12');
    await page.getByLabel('Run label (optional)').fill('e2e storyteller');
    await page.getByText('Advanced: every hyperparameter').click();
    await page.getByLabel('Samples per step').fill('4');
    await page.getByLabel('Rank', { exact: true }).fill('2');
    await page.screenshot({ path: `${ARTIFACTS}/lab-setup.png`, fullPage: true });
    // A narrow window: one column, nothing wider than the screen.
    await page.setViewportSize({ width: 420, height: 900 });
    await page.screenshot({ path: `${ARTIFACTS}/lab-setup-narrow.png`, fullPage: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.getByRole('button', { name: 'Start the run' }).click();
    await expect(page.getByRole('heading', { name: 'e2e storyteller' })).toBeVisible();
    // Live: the status bar and the training progress appear while it runs.
    await expect(page.getByTestId('status-bar')).toBeVisible({ timeout: 60_000 });
    await page.screenshot({ path: `${ARTIFACTS}/lab-run-live.png`, fullPage: true });

    const summary = page.getByTestId('run-summary');
    await expect(summary).toContainText('2 training steps', { timeout: 240_000 });
    await expect(summary).toContainText(/[1-9]\d* evaluations?/);
    await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 60_000 });
    // The charts show both steps and the evaluations.
    const charts = page.getByRole('region', { name: 'Training metrics' });
    await expect(charts).toBeVisible();

    // The token view of a judged turn.
    const picker = page.getByTestId('turn-picker');
    await expect(picker.locator('option')).not.toHaveCount(1);
    const first = await picker.locator('option:not([disabled])').first().getAttribute('value');
    await picker.selectOption(first!);
    const tokens = page.getByRole('region', { name: 'Token view' });
    await expect(tokens.getByRole('region', { name: /Token advantages/ })).toBeVisible();
    await page.screenshot({ path: `${ARTIFACTS}/lab-run-finished.png`, fullPage: true });
    await tokens.screenshot({ path: `${ARTIFACTS}/lab-token-view.png` });

    // After a reload the run and its data are still there: first the run page it was on, then Runs.
    await page.reload();
    await expect(page.getByTestId('run-status')).toHaveText('finished');
    await expect(page.getByTestId('run-summary')).toContainText('2 training steps');
    await page.getByRole('link', { name: 'Runs' }).click();
    const item = page.getByTestId('run-item').filter({ hasText: 'e2e storyteller' });
    await expect(item).toBeVisible();
    await expect(item).toContainText('finished');
    await page.screenshot({ path: `${ARTIFACTS}/lab-runs.png`, fullPage: true });
    await item.getByRole('button', { name: 'e2e storyteller' }).click();
    await expect(page.getByTestId('run-summary')).toContainText('2 training steps');

    // Export the run file...
    await page.getByRole('link', { name: 'Runs' }).click();
    const [download] = await Promise.all([page.waitForEvent('download'), item.getByRole('button', { name: 'Export .nsrun' }).click()]);
    const file = join(ARTIFACTS, 'e2e-storyteller.nsrun');
    await download.saveAs(file);
    // ...the adapter in the PEFT layout (two files) and the training samples as JSONL.
    const adapterFiles: string[] = [];
    page.on('download', (d) => adapterFiles.push(d.suggestedFilename()));
    await item.getByRole('button', { name: 'Adapter (PEFT)' }).click();
    await expect.poll(() => adapterFiles.sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
    const [samples] = await Promise.all([page.waitForEvent('download'), item.getByRole('button', { name: 'Samples (JSONL)' }).click()]);
    const jsonl = readFileSync(await samples.path(), 'utf8')
      .trim()
      .split('\n');
    expect(jsonl.length).toBeGreaterThanOrEqual(8);
    expect(Object.keys(JSON.parse(jsonl[0]))).toEqual(expect.arrayContaining(['prompt', 'completion', 'advantages', 'policy_version']));

    // ...and import it into a fresh browser profile, where it opens read-only with its data.
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const other = await fresh.newPage();
    const otherProblems = watchProblems(other);
    await other.goto('/#/runs');
    await expect(other.getByText('No runs yet')).toBeVisible();
    await other.getByTestId('import-file').setInputFiles(file);
    await expect(other.getByRole('heading', { name: 'e2e storyteller' })).toBeVisible();
    await expect(other.getByTestId('read-only')).toBeVisible();
    await expect(other.getByTestId('run-summary')).toContainText('2 training steps');
    await expect(other.getByTestId('run-summary')).toContainText(/[1-9]\d* evaluations?/);
    await other.screenshot({ path: `${ARTIFACTS}/lab-imported.png`, fullPage: true });

    // A narrow window still works: one column, nothing cut off.
    await other.setViewportSize({ width: 420, height: 900 });
    await other.screenshot({ path: `${ARTIFACTS}/lab-imported-narrow.png`, fullPage: true });
    const overflow = await other.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await fresh.close();

    expect(problems).toEqual([]);
    expect(otherProblems).toEqual([]);
  });
});

test.describe('talk yourself (built app)', () => {
  test('the person chats, the judge reads each reply, and New conversation starts over', async ({ page }) => {
    test.setTimeout(240_000);
    mkdirSync(ARTIFACTS, { recursive: true });
    const problems = watchProblems(page);
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto('/#/setup');
    await page.getByRole('radio', { name: /Talk yourself/ }).check();
    await page.getByRole('radio', { name: 'A folder on this computer' }).check();
    await page.getByTestId('policy-files').setInputFiles(readdirSync(modelDir).map((f) => join(modelDir, f)));
    await page.getByLabel(/^Model name/).fill('stories260K');
    await page.getByRole('radio', { name: /^CPU/ }).check();
    await page.getByLabel('Answer length (max new tokens)').fill('10');
    await page.getByLabel('Run label (optional)').fill('e2e talk');
    await page.getByText('Advanced: every hyperparameter').click();
    await page.getByLabel('Samples per step').fill('2');
    await page.getByRole('button', { name: 'Start the run' }).click();

    const reply = page.getByLabel('Your reply');
    const chat = page.getByRole('list', { name: 'Conversation with the policy' });
    await expect(reply).toBeEnabled({ timeout: 60_000 });
    await reply.fill('Once upon a time there was a little cat.');
    await reply.press('Enter');
    await expect(chat).toContainText('Policy v0', { timeout: 60_000 });
    await expect(reply).toBeEnabled();
    await reply.fill('No, that is wrong. Please redo it with a dog.');
    await page.getByRole('button', { name: 'Send' }).click();
    // The reply was the next state of the first answer: once the policy answers again, the
    // judge's reading of it shows under that first answer.
    await expect(chat).toContainText(/reward −1/, { timeout: 60_000 });
    await page.screenshot({ path: `${ARTIFACTS}/lab-talk.png`, fullPage: true });

    // A second reply judges the second answer: two judged turns fill the batch of 2, and a
    // training step follows. (A turn the person never answers has no next state: no sample.)
    await expect(reply).toBeEnabled();
    await reply.fill('No, make it about my cat Biscuit.');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.getByTestId('run-summary')).toContainText('1 training step', { timeout: 120_000 });
    await expect(reply).toBeEnabled();
    await page.getByRole('button', { name: 'New conversation' }).click();
    // stories260K has no chat template: the first message of the new conversation is a story beginning.
    await expect(chat).toContainText('your first message is the beginning of a story');
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 60_000 });
    expect(problems).toEqual([]);
  });
});

test.describe('resume after a reload (built app)', () => {
  test('a run interrupted by a reload resumes from its last saved step and finishes', async ({ page }) => {
    test.setTimeout(240_000);
    const problems = watchProblems(page);
    await page.goto('/#/setup');
    await page.getByRole('radio', { name: 'A folder on this computer' }).check();
    await page.getByTestId('policy-files').setInputFiles(readdirSync(modelDir).map((f) => join(modelDir, f)));
    await page.getByLabel(/^Model name/).fill('stories260K');
    await page.getByRole('radio', { name: /^CPU/ }).check();
    // Enough steps that the reload comes well before the end.
    await page.getByLabel('Training steps').fill('5');
    await page.getByLabel('Evaluate every K steps (0 = never)').fill('0');
    await page.getByLabel('Answer length (max new tokens)').fill('8');
    await page.getByLabel('Run label (optional)').fill('e2e resume');
    await page.getByText('Advanced: every hyperparameter').click();
    await page.getByLabel('Samples per step').fill('4');
    await page.getByRole('button', { name: 'Start the run' }).click();
    await expect(page.getByTestId('run-summary')).toContainText(/[1-3] training steps?/, { timeout: 120_000 });

    // The tab "closes" mid-run: after the reload the run is interrupted and can resume.
    await page.reload();
    // The app has opened its storage and marked the run when it says so; a click on Runs before
    // that raced the boot's own routing back to the run's page (seen once in CI).
    await expect(page.getByRole('status').filter({ hasText: 'were interrupted' })).toBeVisible();
    await page.getByRole('link', { name: 'Runs' }).click();
    const item = page.getByTestId('run-item').filter({ hasText: 'e2e resume' });
    await expect(item).toContainText('interrupted');
    // Its policy came from picked files: Resume asks for the folder again.
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), item.getByRole('button', { name: /^Resume/ }).click()]);
    await chooser.setFiles(modelDir);
    await expect(page.getByRole('heading', { name: 'e2e resume' })).toBeVisible();
    await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 180_000 });
    // Steps 1..5 each logged once: the resumed loop continued the numbering (a step whose
    // adapter was not saved would have been repeated and counted twice).
    await expect(page.getByTestId('run-summary')).toContainText('5 training steps');
    expect(problems).toEqual([]);
  });
});

test.describe('GPU device loss (built app, WebGPU)', () => {
  test('the debug menu destroys the device; the run logs it, recovers and finishes', async ({ page }) => {
    test.setTimeout(300_000);
    const problems = watchProblems(page);
    await page.goto('/#/setup');
    await page.getByRole('radio', { name: 'A folder on this computer' }).check();
    await page.getByTestId('policy-files').setInputFiles(readdirSync(modelDir).map((f) => join(modelDir, f)));
    await page.getByLabel(/^Model name/).fill('stories260K');
    await page.getByRole('radio', { name: /^WebGPU/ }).check();
    await page.getByLabel('Training steps').fill('1');
    await page.getByLabel('Evaluate every K steps (0 = never)').fill('0');
    await page.getByLabel('Answer length (max new tokens)').fill('6');
    await page.getByLabel('Run label (optional)').fill('e2e device loss');
    await page.getByText('Advanced: every hyperparameter').click();
    await page.getByLabel('Samples per step').fill('4');
    await page.getByLabel('Rank', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Start the run' }).click();
    await expect(page.getByTestId('run-summary')).toContainText(/[1-9]\d* conversations?/, { timeout: 120_000 });
    await page.getByText('Debug', { exact: true }).click();
    await page.getByRole('button', { name: 'Simulate GPU device loss' }).click();
    await expect(page.getByTestId('run-status')).toHaveText(/finished|stopped/, { timeout: 240_000 });
    // A failed run says why in the alert; show it in the test's own failure.
    await expect(page.getByTestId('error')).toHaveCount(0);
    await expect(page.getByTestId('run-status')).toHaveText('finished');
    await expect(page.getByTestId('run-summary')).toContainText('1 training step');
    const events = page.getByTestId('runtime-events');
    await events.getByText(/Runtime events/).click();
    await expect(events).toContainText('device lost');
    await expect(events).toContainText('recovered');
    expect(problems).toEqual([]);
  });
});
