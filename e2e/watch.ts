import type { BrowserContext, ConsoleMessage, Page } from '@playwright/test';

/** Console errors and uncaught page errors, collected so a test can ask that there were none. */
export function watchProblems(page: Page, allowed: RegExp[] = []): string[] {
  const problems: string[] = [];
  page.on('console', (m: ConsoleMessage) => {
    if (m.type() === 'error' && !allowed.some((a) => a.test(m.text()))) problems.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return problems;
}

/** Requests for anything outside the app's own origin, aborted and collected so a test can ask that there were none. */
export async function blockOutside(context: BrowserContext): Promise<string[]> {
  const outside: string[] = [];
  await context.route(/^https?:\/\/(?!127\.0\.0\.1|localhost)/, (route) => {
    outside.push(route.request().url());
    return route.abort();
  });
  return outside;
}
