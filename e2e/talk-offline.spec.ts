/**
 * Talk yourself, offline: the person talks to the bundled demo model with the rules judge, and a
 * plain request changes the stories within a few turns. The request reaches the story model the
 * way a chat model would read it, in front of the story beginning (Policy.promptText), and the
 * rules judge turns the same words into the turn's hint.
 */
import { expect, test } from '@playwright/test';
import { blockOutside, watchProblems } from './watch';

const BEGINNING = 'Once upon a time, there was a little cat.';
/**
 * A short name, which the demo model copies from a request; a long one it may spell its own way
 * ("Biscuit" comes out "Bistuit", docs/limits.md).
 */
const REQUEST = 'make it about my cat Pip';
const NAMED = /\bPip\b/;

test('a request to the demo model changes its stories within a few turns, with no network', async ({ page, context }) => {
  test.setTimeout(300_000);
  const problems = watchProblems(page);
  // Nothing may come from outside the app's own origin.
  const outside = await blockOutside(context);
  await page.goto('/#/setup');
  await page.getByRole('radio', { name: /Talk yourself/ }).check();
  await page.getByLabel('Hub id or URL').fill('bundled:storyteller-demo');
  await page.getByRole('radio', { name: /^CPU/ }).check();
  await page.getByLabel('Answer length (max new tokens)').fill('48');
  await page.getByLabel('Run label (optional)').fill('e2e talk offline');
  await page.getByRole('button', { name: 'Start the run' }).click();
  await expect(page.getByText(/Judge: rules/)).toBeVisible({ timeout: 60_000 });

  const reply = page.getByLabel('Your reply');
  const answers = page.getByRole('list', { name: 'Conversation with the policy' }).locator('li.assistant > p:not(.judge)');
  const say = async (text: string, count: number) => {
    await expect(reply).toBeEnabled({ timeout: 120_000 });
    await reply.fill(text);
    await reply.press('Enter');
    await expect(answers).toHaveCount(count, { timeout: 120_000 });
    return (await answers.nth(count - 1).textContent()) ?? '';
  };
  const before = await say(BEGINNING, 1);
  expect(before).not.toMatch(NAMED);
  // The person asks, and asks again while the story is not right yet: a few turns at most.
  const after: string[] = [];
  for (let turn = 2; turn <= 5 && !after.some((a) => NAMED.test(a)); turn++) after.push(await say(REQUEST, turn));
  expect(after.some((a) => NAMED.test(a))).toBe(true);
  // The rules judge read the request as the first answer's next state and quoted it as the hint.
  await expect(page.getByRole('list', { name: 'Conversation with the policy' })).toContainText(
    `hint accepted: “The user asked for a different answer: "${REQUEST}"`,
  );
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 60_000 });
  expect(outside).toEqual([]);
  expect(problems).toEqual([]);
});
