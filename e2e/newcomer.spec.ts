/**
 * The lab as a newcomer meets it, offline, on the demo model: one walk through the Setup, a
 * comparison, the run page, the Runs page, an import and Talk yourself, at 1440x900 and 390x844,
 * checking on each page what got in a new user's way: the start out of sight, a page opening in
 * the middle of the last one's scroll, overlays leaking between runs, baselines drawn on top of
 * each other, Talk yourself switching to a hub model, labels carrying over, cut-off choices, sums
 * that do not add up, status lines left behind, model files answered with the app's page,
 * duplicate imports, a blank token view; and at a second look: "�" or control bytes in the text,
 * legends too long for a phone, runs of one name told apart only by a badge, a page wider than a
 * phone, the open run lost on a reload, a talk run silent about its next step, Setup left on a
 * talk run; and at a fresh look, every page on a phone (each Setup form, the Run page empty, live,
 * imported, talking and finished, Runs, System, a shared link's offer, a watched server run): no
 * wider than the phone, no unreadable character, no text cut off with an ellipsis. Small shapes
 * throughout: this suite runs in CI.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { blockOutside, watchProblems } from './watch';

const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

/** Choices whose longest option does not fit the box it is shown in: their labels. */
function cutOffChoices(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const ctx = document.createElement('canvas').getContext('2d')!;
    return [...document.querySelectorAll('select')]
      .filter((s) => s.offsetParent !== null)
      .filter((s) => {
        const cs = getComputedStyle(s);
        ctx.font = cs.font;
        const widest = Math.max(...[...s.options].map((o) => ctx.measureText(o.text).width));
        // The drop-down arrow takes about 20 px of the box.
        return widest > s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20;
      })
      .map((s) => s.closest('label')?.querySelector('span')?.textContent ?? s.id);
  });
}

/** Characters of the page's text that no reader can read: U+FFFD, and control characters other than tab and line breaks (C0, DEL, C1). */
const unreadable = (page: Page) =>
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  page.evaluate(() => [...document.body.innerText.matchAll(/[\uFFFD\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g)].map((m) => m[0].charCodeAt(0)));

/**
 * Text on screen cut off with an ellipsis: elements with text that end it in one and are narrower
 * than it (a field's own scrolling and what only screen readers get are not text on screen).
 */
const cutOffText = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('body *')]
      .filter((el) => el.offsetParent !== null && !el.closest('.nsv-visually-hidden') && el.textContent?.trim())
      .filter((el) => getComputedStyle(el).textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth)
      .map((el) => el.textContent!),
  );

/** Chart legend entries of 40 characters or more: they wrap over lines on a phone. */
const longLegends = (page: Page) =>
  page.evaluate(() => [...document.querySelectorAll('.u-legend .u-series .u-label')].map((l) => l.textContent ?? '').filter((t) => t.length >= 40));

const sidewaysScroll = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/**
 * The page as a phone shows it (390x844), then back to the window it was in: checked softly, so
 * one walk lists every page that fails: wider than the phone, a character no reader can read,
 * text cut off.
 */
async function onPhone(page: Page, where: string): Promise<void> {
  const before = page.viewportSize()!;
  await page.setViewportSize(PHONE);
  expect.soft(await sidewaysScroll(page), `${where}: pixels wider than a phone`).toBeLessThanOrEqual(0);
  expect.soft(await unreadable(page), `${where}: characters no reader can read`).toEqual([]);
  expect.soft(await cutOffText(page), `${where}: text cut off`).toEqual([]);
  await page.setViewportSize(before);
}

/** Whether the element is on screen now, without scrolling. */
async function inView(page: Page, locator: Locator): Promise<boolean> {
  const box = await locator.boundingBox();
  const viewport = page.viewportSize()!;
  return box !== null && box.y >= 0 && box.y + box.height <= viewport.height;
}

function legend(charts: Locator, title: string): Locator {
  return charts
    .locator('figure.chart', { has: charts.page().getByRole('heading', { name: title, exact: true }) })
    .locator('.u-legend .u-series:not(:first-child) .u-label');
}

test('a newcomer’s walk through the lab, offline on the demo model', async ({ page, context }, testInfo) => {
  test.setTimeout(240_000);
  const problems = watchProblems(page);
  const outside = await blockOutside(context);
  // Model files answered with a web page (a static host's answer for a path it does not have).
  const htmlModelFiles: string[] = [];
  page.on('response', (r) => {
    if (/\/models\//.test(r.url()) && r.request().method() === 'GET' && (r.headers()['content-type'] ?? '').startsWith('text/html'))
      htmlModelFiles.push(r.url());
  });

  await page.setViewportSize(WIDE);
  await page.goto('/#/setup');
  const start = page.getByRole('button', { name: 'Start the run' });

  // -- Finding the start: in view on the first screen, wide and on a phone.
  await expect(start).toBeVisible();
  expect(await inView(page, start)).toBe(true);
  await page.setViewportSize(PHONE);
  expect(await inView(page, start)).toBe(true);
  await page.setViewportSize(WIDE);
  await onPhone(page, 'Setup');
  // The run label's default, shown as its placeholder, is read whole.
  const placeholderFits = await page.getByLabel('Run label (optional)').evaluate((el: HTMLInputElement) => {
    const ctx = document.createElement('canvas').getContext('2d')!;
    ctx.font = getComputedStyle(el).font;
    return ctx.measureText(el.placeholder).width <= el.clientWidth;
  });
  expect(placeholderFits).toBe(true);

  // -- Before any run: the Run page with none open, a shared link's offer, the empty Runs page.
  await page.getByRole('link', { name: 'Run', exact: true }).click();
  await expect(page.getByRole('heading', { name: 'No run open' })).toBeVisible();
  await onPhone(page, 'Run, no run open');
  await page.goto(`/#/open?url=${encodeURIComponent('https://huggingface.co/datasets/me/runs/resolve/main/walk.nsrun')}`);
  await expect(page.getByRole('heading', { name: 'Open a shared run?' })).toBeVisible();
  await onPhone(page, 'a shared link’s offer');
  await page.getByRole('button', { name: 'No, go to Runs' }).click();
  await expect(page.getByRole('heading', { name: 'Runs in this browser' })).toBeVisible();
  await onPhone(page, 'Runs, none yet');
  await page.getByRole('link', { name: 'Setup' }).click();

  // -- Talk yourself keeps the policy the form names; another scenario says it changed it.
  const hubId = page.getByLabel('Hub id or URL');
  await page.getByRole('radio', { name: /Talk yourself/ }).check();
  await expect(hubId).toHaveValue('bundled:storyteller-demo');
  await expect(page.getByTestId('model-note')).toHaveCount(0);
  await onPhone(page, 'Setup, Talk yourself');
  await page.getByRole('radio', { name: /^Student/ }).check();
  await expect(page.getByTestId('model-note')).toContainText('The policy model is now HuggingFaceTB/SmolLM2-135M-Instruct');
  await onPhone(page, 'Setup, Student');
  // -- Every other form of the Setup on a phone: the other scenarios, the tool-call track, each place a policy comes from.
  for (const scenario of [/^Teacher/, /^Custom persona/]) {
    await page.getByRole('radio', { name: scenario }).check();
    await onPhone(page, `Setup, ${scenario.source.slice(1)}`);
  }
  await page.getByRole('radio', { name: /^General agent: tool calls/ }).check();
  await expect(page.getByRole('button', { name: 'Compare integrated and outcome-only rewards' })).toBeVisible();
  await onPhone(page, 'Setup, tool calls');
  await page.getByRole('radio', { name: /^Personal agent/ }).check();
  await page.getByRole('radio', { name: /^Storyteller/ }).check();
  await expect(hubId).toHaveValue('bundled:storyteller-demo');
  for (const source of ['A folder on this computer', 'Policy on a server']) {
    await page.getByRole('radio', { name: source }).check();
    await onPhone(page, `Setup, ${source}`);
  }
  await page.getByRole('radio', { name: 'Hugging Face hub' }).check();
  await expect(hubId).toHaveValue('bundled:storyteller-demo');

  // -- Consistency: the Method line and the advanced panel agree on the votes; no choice is cut
  // off; the micro-batches add up to the step.
  await page.getByText('Advanced: every hyperparameter').click();
  const combinedVotes = page
    .getByRole('radio', { name: /^Combined/ })
    .locator('xpath=..')
    .getByTestId('method-votes');
  const [binaryVotes, hintVotes] = [await page.getByLabel('Binary votes m').inputValue(), await page.getByLabel('Hint votes m').inputValue()];
  await expect(combinedVotes).toHaveText(new RegExp(`^m = ${binaryVotes} binary votes? and ${hintVotes} hint votes?$`));
  expect(await cutOffChoices(page)).toEqual([]);
  await page.setViewportSize(PHONE);
  expect(await cutOffChoices(page)).toEqual([]);
  await page.setViewportSize(WIDE);
  await onPhone(page, 'Setup, every hyperparameter');
  await page.getByRole('button', { name: 'Check size and memory' }).click();
  const plan = page.getByTestId('memory-plan').locator('xpath=following-sibling::p[1]');
  await expect(plan).toContainText('micro-batch');
  const [, total, parts] =
    /One training step of (\d+) sequences × \d+ tokens runs as \d+ micro-batch(?:es \(([^)]*?) sequences|.*)/.exec((await plan.textContent())!) ?? [];
  const sum = (parts ?? total).split('+').reduce((n, p) => n + p.split('×').reduce((a, b) => a * Number(b), 1), 0);
  expect(sum).toBe(Number(total));

  // A comparison in small shapes: the first two of its four runs.
  await page.getByRole('radio', { name: /^CPU/ }).check();
  await page.getByLabel('Training steps').fill('2');
  await page.getByLabel('Evaluate every K steps (0 = never)').fill('1');
  await page.getByLabel('Evaluation problems').fill('2');
  await page.getByLabel('Evaluator votes').fill('1');
  await page.getByLabel('Answer length (max new tokens)').fill('8');
  await page.getByLabel('Run label (optional)').fill('walk');
  await page.getByLabel('Samples per step').fill('2');
  // -- A page opens at its top, not at the last page's scroll.
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await page.getByRole('button', { name: 'Compare base, Binary RL, OPD, Combined and the shuffled-hint control' }).click();
  await expect(page.getByTestId('comparison-position')).toHaveText(/^run [12] of 4$/);
  expect(await page.evaluate(() => window.scrollY)).toBe(0);

  // -- Overlays: the second run shows the first, with one baseline for the two.
  await expect(page.getByRole('heading', { name: 'walk · OPD · seed 1' })).toBeVisible({ timeout: 60_000 });
  // Paused at its next step (two to go), the second run holds still while its overlays are read:
  // on the fast CPU backend a small run ends in under a second.
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('paused');
  await expect(page.getByTestId('comparison-position')).toHaveText('run 2 of 4');
  const charts = page.getByRole('region', { name: 'Training metrics' });
  // Legends name each run by what tells it apart ("walk" and "seed 1" are in both names above).
  await expect(legend(charts, 'Personalization score')).toHaveText(['OPD', 'Binary RL', 'baseline of all 2 runs (step 0)'], {
    timeout: 60_000,
  });
  await expect(legend(charts, 'Tokens per second')).toHaveText(['OPD · generate', 'OPD · train', 'Binary RL · generate', 'Binary RL · train']);
  expect(await longLegends(page)).toEqual([]);
  await onPhone(page, 'Run, a comparison running');
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 60_000 });
  // -- The live status bar gives way to what the run came to.
  await expect(page.getByTestId('status-bar')).toHaveCount(0);
  await expect(page.getByTestId('run-outcome')).toContainText(/^stopped: \d of 2 steps/);
  await expect(page.getByTestId('announcement')).toContainText('Run stopped');

  // -- The label named that comparison only; status lines stay with their page.
  await page.getByRole('link', { name: 'Setup' }).click();
  await expect(page.getByTestId('announcement')).toHaveText('');
  await expect(page.getByLabel('Run label (optional)')).toHaveValue('');
  await expect(page.getByLabel('Run label (optional)')).toHaveAttribute('placeholder', 'storyteller · Combined · storyteller-demo');

  // -- Run library: each row's summary, sizes that say what they hold, a share link, an export.
  await page.getByRole('link', { name: 'Runs' }).click();
  const first = page.getByTestId('run-item').filter({ hasText: 'walk · Binary RL · seed 1' }).filter({ hasNotText: 'read-only' });
  await expect(first.getByTestId('run-row-outcome')).toHaveText(/^2 of 2 steps · score \d\.\d\d \(\d\.\d\d before training\) · \d+ s$/);
  await expect(first.getByTestId('run-size')).toContainText('adapter of every step');
  await first.getByText('Share link').click();
  // A host the lab's CSP does not reach is said before anyone follows the link.
  await first.getByLabel('Address of the run file').fill('https://files.example/walk.nsrun');
  await expect(first.getByTestId('share-warning')).toContainText('does not let it fetch from https://files.example');
  await first.getByLabel('Address of the run file').fill('https://huggingface.co/datasets/me/runs/resolve/main/walk.nsrun');
  await expect(first.getByTestId('share-warning')).toHaveCount(0);
  await expect(first.getByTestId('share-link')).toHaveValue(
    new RegExp(`#/open\\?url=${encodeURIComponent('https://huggingface.co/datasets/me/runs/resolve/main/walk.nsrun').replace(/[.?*+()]/g, '\\$&')}$`),
  );
  await onPhone(page, 'Runs');
  // The System page's limits table wraps its long names on a phone rather than scroll sideways.
  await page.getByRole('link', { name: 'System' }).click();
  await expect(page.getByTestId('adapter-limits')).toBeVisible();
  await onPhone(page, 'System');
  await page.getByRole('link', { name: 'Runs' }).click();
  const [download] = await Promise.all([page.waitForEvent('download'), first.getByRole('button', { name: 'Export .nsrun' }).click()]);
  const file = testInfo.outputPath('walk.nsrun');
  await download.saveAs(file);
  // Ticked on Runs: belongs to the runs of this scenario, not to what opens next.
  await first.getByLabel('compare on charts').check();

  // -- The same file imported twice: one row, the second time the first copy opens.
  await page.getByTestId('import-file').setInputFiles(file);
  await expect(page.getByTestId('read-only')).toBeVisible();
  await expect(page.getByTestId('hashes-match')).toBeVisible();
  await expect(page.locator('#run-heading')).toHaveText('walk · Binary RL · seed 1');
  // The tick on Runs was for the runs of this browser, not for a file opened after it: one run,
  // whose legends name each series only (the run is named above the charts).
  await expect(legend(charts, 'Loss')).toHaveText(['Loss']);
  expect(await longLegends(page)).toEqual([]);
  // -- The token view shows the first judged turn, not a blank area.
  await expect(page.getByRole('region', { name: 'Token view' }).getByRole('region', { name: /Token advantages/ })).toBeVisible();
  // -- The stories read as the model wrote them: its byte tokens decoded, no "�" or control byte.
  expect(await unreadable(page)).toEqual([]);
  // -- The score says what it measures, wish by wish, and that one seed may be noise.
  await expect(page.getByTestId('score-meaning')).toContainText('five of the child’s wishes');
  await expect(page.getByTestId('one-seed')).toContainText('One run is one seed');
  await onPhone(page, 'Run, an imported run');
  // -- The open run comes back after a reload, and on the Run tab after a reload elsewhere.
  await page.reload();
  await expect(page.locator('#run-heading')).toHaveText('walk · Binary RL · seed 1');
  await page.getByRole('link', { name: 'Runs' }).click();
  await page.reload();
  await page.getByRole('link', { name: 'Run', exact: true }).click();
  await expect(page.locator('#run-heading')).toHaveText('walk · Binary RL · seed 1');
  await page.getByRole('link', { name: 'Runs' }).click();
  await expect(page.getByTestId('run-item').filter({ has: page.getByText('read-only') })).toHaveCount(1);
  await expect(
    page
      .getByTestId('run-item')
      .filter({ has: page.getByText('read-only') })
      .getByTestId('run-size'),
  ).toContainText('the last adapter');
  await page.getByTestId('import-file').setInputFiles(file);
  await expect(page.getByTestId('announcement')).toHaveText('walk.nsrun was imported before: this is that copy, “walk · Binary RL · seed 1”.');
  await page.getByRole('link', { name: 'Runs' }).click();
  await expect(page.getByTestId('run-item').filter({ has: page.getByText('read-only') })).toHaveCount(1);
  // -- The run and its import share a name: a short id and the time each started tell them apart.
  const namesakes = page.getByTestId('run-item').filter({ hasText: 'walk · Binary RL · seed 1' }).getByTestId('run-which');
  await expect(namesakes).toHaveCount(2);
  const [one, other] = await namesakes.allTextContents();
  expect(one).toMatch(/^#\w{6} · /);
  expect(one).not.toBe(other);

  // -- Talk yourself on the demo model: told what to write first, answers in view, a clear
  // correction read as one. No overlay follows it from the runs ticked before.
  await first.getByLabel('compare on charts').check();
  await page.getByRole('link', { name: 'Setup' }).click();
  await page.getByRole('radio', { name: /Talk yourself/ }).check();
  await page.getByLabel('Answer length (max new tokens)').fill('24');
  await start.click();
  const talk = page.getByTestId('talk');
  await expect(talk.getByTestId('talk-first')).toContainText('your first message is the beginning of a story', { timeout: 60_000 });
  const reply = page.getByLabel('Your reply');
  await expect(reply).toHaveAttribute('placeholder', /story beginning/);
  await expect(legend(charts, 'Loss')).toHaveText(['Loss']);
  // -- No evaluator, so no score chart that could never fill; the next step's distance instead.
  await expect(charts.getByRole('heading', { name: 'Personalization score' })).toHaveCount(0);
  await expect(talk.getByTestId('talk-progress')).toHaveText(/^\d+ more judged repl(y|ies) until step 1 \(\d+ of \d+ samples in\)\.$/);
  await reply.fill('Once upon a time, there was a little boy.');
  await reply.press('Enter');
  const answers = talk.locator('li.assistant');
  await expect(answers).toHaveCount(1, { timeout: 60_000 });
  await expect(reply).toHaveAttribute('placeholder', 'Say what you think of the answer…', { timeout: 60_000 });
  await reply.fill('It should be about my cat Biscuit, not a boy.');
  await reply.press('Enter');
  await expect(answers).toHaveCount(2, { timeout: 60_000 });
  await expect(answers.first()).toContainText('reward −1 (redo / correction)');
  await expect(answers.first()).toContainText('hint accepted: “The user asked for a different answer: "It should be about my cat Biscuit, not a boy."');
  expect(await unreadable(page)).toEqual([]);
  await onPhone(page, 'Run, talking');
  // The newest answer is in view in the chat's own scroll box.
  expect(
    await talk
      .getByRole('list', { name: 'Conversation with the policy' })
      .evaluate((el) => el.scrollHeight - el.clientHeight - el.scrollTop <= 2 || el.scrollHeight <= el.clientHeight),
  ).toBe(true);
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('stopped', { timeout: 60_000 });
  // -- Setup is back on the default scenario: the next run is not another thousand-step talk.
  await page.getByRole('link', { name: 'Setup' }).click();
  await expect(page.getByRole('radio', { name: /^Storyteller/ })).toBeChecked();

  // -- The imported run resumes as a copy, one step on from its last adapter; the import stays.
  await page.getByRole('link', { name: 'Runs' }).click();
  const imported = page.getByTestId('run-item').filter({ has: page.getByText('read-only') });
  await imported.getByTestId('copy-steps').fill('3');
  await imported.getByRole('button', { name: 'Resume a copy' }).click();
  await expect(page.locator('#run-heading')).toHaveText('walk · Binary RL · seed 1, resumed from walk.nsrun', { timeout: 60_000 });
  await expect(page.getByTestId('run-status')).toHaveText('finished', { timeout: 120_000 });
  await expect(page.getByTestId('run-outcome')).toContainText(/^finished: 3 of 3 steps/);
  await onPhone(page, 'Run, a finished run');
  await page.getByRole('link', { name: 'Runs' }).click();
  await expect(page.getByTestId('run-item').filter({ has: page.getByText('read-only') })).toHaveCount(1);

  // -- A server run watched live: here a server's record feed played from the exported run's records.
  const [headerLine, ...recordLines] = gunzipSync(readFileSync(file)).toString('utf8').split('\n').filter(Boolean);
  const { run } = JSON.parse(headerLine) as { run: { label: string; created: number; config: object } };
  const records = recordLines.map((line) => JSON.parse(line) as { kind?: string }).filter((r) => r.kind !== undefined);
  await context.route('http://127.0.0.1:30000/v1/nextstate/records*', (route) => {
    const from = Number(new URL(route.request().url()).searchParams.get('from'));
    const events = [
      { type: 'run', label: run.label, created: run.created, config: run.config },
      { type: 'records', from, records: records.slice(from - 1) },
    ];
    return route.fulfill({
      headers: { 'content-type': 'text/event-stream', 'access-control-allow-origin': '*' },
      body: events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''),
    });
  });
  await page.goto(`/#/watch?url=${encodeURIComponent('http://127.0.0.1:30000')}`);
  await expect(page.getByRole('heading', { name: run.label, exact: true })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Training metrics' })).toBeVisible();
  await onPhone(page, 'a watched server run');

  expect(htmlModelFiles).toEqual([]);
  expect(outside).toEqual([]);
  expect(problems).toEqual([]);
});
