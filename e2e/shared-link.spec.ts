/**
 * A run shared as a link, `#/open?url=…`, in the built app: the link asks before anything is
 * fetched; the file is then fetched from the hub (served here by a route that answers with CORS,
 * as the hub does), imported as a dropped file is, opened read-only with the address it came
 * from, not imported again on reload, and opened as the same copy when the link is followed
 * again; a declined link fetches nothing; a link the server refuses says why.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type ConsoleMessage } from '@playwright/test';
import { dataPath } from '../test/data-dir';

// The hub is among the hosts the lab's CSP lets it fetch from. (Where redirects end is
// shared-link.test.ts's: Chromium follows a redirect that a Playwright route fulfils without
// routing the request it leads to.)
const FILE = 'https://huggingface.co/datasets/someone/runs/resolve/main/shared%20story.nsrun';
let tmp: string;
let runFile: Buffer;

test.beforeAll(() => {
  // A real run file, written by the command (one step on stories260K).
  tmp = mkdtempSync(join(tmpdir(), 'nextstate-shared-'));
  const bin = join(process.cwd(), 'bin/nextstate.mjs');
  const config = execFileSync(process.execPath, [bin, 'run', '--example', 'storyteller'], { encoding: 'utf8' });
  writeFileSync(join(tmp, 'story.json'), config);
  execFileSync(process.execPath, [bin, 'run', '--config', 'story.json', '--steps', '1', '--policy', dataPath('models/stories260K'), '--out', 'story.nsrun'], {
    cwd: tmp,
  });
  runFile = readFileSync(join(tmp, 'story.nsrun'));
});
test.afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test('a #/open?url= link asks first, then fetches the run, opens it read-only and says where it came from', async ({ page, context }) => {
  test.setTimeout(120_000);
  const problems: string[] = [];
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
  });
  let fetches = 0;
  await context.route(FILE, (route) => {
    fetches++;
    return route.fulfill({ status: 200, body: runFile, headers: { 'access-control-allow-origin': '*', 'content-type': 'application/octet-stream' } });
  });

  const link = `/#/open?url=${encodeURIComponent(FILE)}`;
  await page.goto(link);
  // Nothing is fetched until the person says so.
  await expect(page.getByTestId('shared-offer')).toBeVisible();
  await expect(page.getByTestId('shared-address')).toHaveText(FILE);
  expect(fetches).toBe(0);
  await page.getByRole('button', { name: 'Fetch and import' }).click();
  await expect(page.getByTestId('read-only')).toBeVisible();
  await expect(page.getByTestId('run-source')).toHaveText(`from ${FILE}`);
  await expect(page.getByRole('heading', { level: 2, name: 'storyteller (combined, rules)' })).toBeVisible();
  await expect(page.getByTestId('announcement')).toHaveText('Imported shared story.nsrun as a read-only run; hashes match: no accidental damage.');
  // The address bar holds the run's own address now: a reload opens it, without fetching again.
  await expect(page).toHaveURL(/#\/run\/[^/]+$/);
  await page.reload();
  await expect(page.getByTestId('run-source')).toHaveText(`from ${FILE}`);
  expect(fetches).toBe(1);

  // The same link again: the copy made the first time opens; no second row.
  await page.goto(link);
  await page.getByRole('button', { name: 'Fetch and import' }).click();
  await expect(page.getByTestId('announcement')).toContainText('shared story.nsrun was imported before: this is that copy');
  await page.getByRole('link', { name: 'Runs', exact: true }).click();
  await expect(page.getByText('storyteller (combined, rules)')).toHaveCount(1);

  // Declined: nothing fetched, and the Runs page instead.
  await page.goto(link);
  await page.getByRole('button', { name: 'No, go to Runs' }).click();
  await expect(page).toHaveURL(/#\/runs$/);
  expect(fetches).toBe(2);
  expect(problems).toEqual([]);
});

test('a link the server refuses says why, on the Runs page', async ({ page, context }) => {
  const gone = 'https://huggingface.co/datasets/someone/runs/resolve/main/gone.nsrun';
  await context.route(gone, (route) => route.fulfill({ status: 404, body: 'no', headers: { 'access-control-allow-origin': '*' } }));
  await page.goto(`/#/open?url=${encodeURIComponent(gone)}`);
  await page.getByRole('button', { name: 'Fetch and import' }).click();
  await expect(page.getByTestId('error')).toContainText(`Could not open the shared run: ${gone} answered HTTP 404`);
  await expect(page).toHaveURL(/#\/runs$/);
});
