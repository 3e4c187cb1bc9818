/**
 * A run shared as a link, `#/open?url=…`, in the built app: the file is fetched from another
 * origin (served here by a route that answers with CORS, as a file host would), imported as a
 * dropped file is, opened read-only with the address it came from, and not imported again on
 * reload; a link the server refuses says why.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type ConsoleMessage } from '@playwright/test';
import { dataPath } from '../test/data-dir';

const FILE = 'https://files.example/shared%20story.nsrun';
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

test('a #/open?url= link fetches the run, opens it read-only and says where it came from', async ({ page, context }) => {
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

  await page.goto(`/#/open?url=${encodeURIComponent(FILE)}`);
  await expect(page.getByTestId('read-only')).toBeVisible();
  await expect(page.getByTestId('run-source')).toHaveText(`from ${FILE}`);
  await expect(page.getByRole('heading', { level: 2, name: 'storyteller (combined, rules)' })).toBeVisible();
  await expect(page.getByTestId('announcement')).toContainText('Imported shared story.nsrun as a read-only run; its integrity hashes match.');
  // The address bar holds the run's own address now: a reload opens it, without fetching again.
  await expect(page).toHaveURL(/#\/run\/[^/]+$/);
  await page.reload();
  await expect(page.getByTestId('run-source')).toHaveText(`from ${FILE}`);
  expect(fetches).toBe(1);
  await page.getByRole('link', { name: 'Runs' }).click();
  await expect(page.getByText('storyteller (combined, rules)')).toHaveCount(1);
  expect(problems).toEqual([]);
});

test('a link the server refuses says why, on the Runs page', async ({ page, context }) => {
  await context.route('https://files.example/gone.nsrun', (route) =>
    route.fulfill({ status: 404, body: 'no', headers: { 'access-control-allow-origin': '*' } }),
  );
  await page.goto(`/#/open?url=${encodeURIComponent('https://files.example/gone.nsrun')}`);
  await expect(page.getByTestId('error')).toContainText('Could not open the shared run: https://files.example/gone.nsrun answered HTTP 404');
  await expect(page).toHaveURL(/#\/runs$/);
});
