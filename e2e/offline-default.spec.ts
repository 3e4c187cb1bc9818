/**
 * The first Setup a person sees runs offline: the storyteller on the demo model the app serves
 * itself (no hub, no picked folder), and one action compares the three methods on one chart.
 */
import { expect, test } from '@playwright/test';
import { blockOutside, watchProblems } from './watch';

test('the default storyteller loads the bundled demo model and the three methods run and overlay', async ({ page, context }) => {
  test.setTimeout(600_000);
  const problems = watchProblems(page);
  // Nothing may come from outside the app's own origin.
  const outside = await blockOutside(context);
  await page.goto('/#/setup');
  await expect(page.getByRole('radio', { name: /Storyteller/ })).toBeChecked();
  await expect(page.getByLabel('Hub id or URL')).toHaveValue('bundled:storyteller-demo');
  await expect(page.getByLabel('Its name')).toHaveValue('Max');
  await page.getByRole('button', { name: 'Check size and memory' }).click();
  await expect(page.getByTestId('model-estimate')).toContainText('260,032 parameters');

  // Small shapes for the CPU emulator these machines have.
  await page.getByRole('radio', { name: /^CPU/ }).check();
  await page.getByLabel('Training steps').fill('1');
  await page.getByLabel('Evaluate every K steps (0 = never)').fill('1');
  await page.getByLabel('Evaluation problems').fill('2');
  await page.getByLabel('Answer length (max new tokens)').fill('8');
  await page.getByLabel('Run label (optional)').fill('e2e methods');
  await page.getByText('Advanced: every hyperparameter').click();
  await page.getByLabel('Samples per step').fill('2');
  await page.getByRole('button', { name: 'Compare base, Binary RL, OPD, Combined and the shuffled-hint control' }).click();

  // The fourth run is the shuffled-hint control, with the other three overlaid on its charts.
  await expect(page.getByRole('heading', { name: 'e2e methods · Combined, shuffled hints · seed 1' })).toBeVisible({ timeout: 450_000 });
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 120_000 });
  const charts = page.getByRole('region', { name: 'Training metrics' });
  for (const m of ['Binary RL', 'OPD', 'Combined']) await expect(charts).toContainText(`e2e methods · ${m} · seed 1`);
  await page.getByRole('link', { name: 'Runs' }).click();
  for (const m of ['Binary RL', 'OPD', 'Combined', 'Combined, shuffled hints'])
    await expect(page.getByText(`e2e methods · ${m} · seed 1`).first()).toBeVisible();
  expect(outside).toEqual([]);
  expect(problems).toEqual([]);
});
