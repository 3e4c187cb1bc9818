import { mkdirSync } from 'node:fs';
import { expect, test, type ConsoleMessage } from '@playwright/test';

const ARTIFACTS = 'e2e/artifacts';

test.describe('boot page (built app under vite preview)', () => {
  test('sends COOP, COEP and a CSP without inline scripts', async ({ request }) => {
    const res = await request.get('/');
    expect(res.status()).toBe(200);
    const h = res.headers();
    expect(h['cross-origin-opener-policy']).toBe('same-origin');
    expect(h['cross-origin-embedder-policy']).toBe('require-corp');
    const csp = h['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(csp).toMatch(/worker-src[^;]*blob:/);
    expect(csp).toMatch(/connect-src[^;]*huggingface\.co/);
    // Never framed, never submitting a form; the page connects to no https host it does not name.
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'none'");
    expect(csp).not.toMatch(/connect-src[^;]*\shttps:(\s|;|$)/);
    expect(h['x-frame-options']).toBe('DENY');
    // The built page itself has no inline script for the CSP to block.
    const html = await res.text();
    for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/\ssrc=/);
  });

  test('another site cannot frame the lab (and so cannot trigger an import from an iframe)', async ({ page, baseURL }) => {
    // A page of another origin (Playwright's about:blank) that frames a shared link.
    await page.setContent(`<iframe src="${baseURL}/#/open?url=https%3A%2F%2Fhuggingface.co%2Fx.nsrun"></iframe>`);
    const frame = page.frames()[1];
    await expect.poll(() => frame.url()).not.toBe('');
    expect(await frame.evaluate(() => document.querySelector('[data-testid="shared-offer"]')).catch(() => null)).toBeNull();
    expect(frame.url()).not.toMatch(/^http:\/\/127\.0\.0\.1/);
  });

  test('reports the WebGPU adapter, passes the compute self-check, logs no errors', async ({ page }) => {
    const problems: string[] = [];
    page.on('console', (m: ConsoleMessage) => {
      if (m.type() === 'error') problems.push(`console.error: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));

    // The adapter report and the self-check live on the lab's System page.
    await page.goto('/#/system');
    await expect(page).toHaveTitle('Next-State Lab');
    await expect(page.getByRole('heading', { level: 1, name: 'Next-State Lab' })).toBeVisible();

    const status = page.getByTestId('adapter-status');
    await expect(status).toContainText('Ready');
    await expect(page.getByTestId('adapter-label')).toHaveText(/swiftshader/i);
    const info = page.getByTestId('adapter-info');
    await expect(info).toContainText(/architecture\s*swiftshader/i);
    // SwiftShader has no shader-f16; the panel must say so rather than leave it out.
    await expect(info).toContainText(/shader-f16\s*no/i);
    const limits = page.getByTestId('adapter-limits');
    for (const name of ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize', 'maxComputeInvocationsPerWorkgroup']) {
      await expect(limits.getByRole('row', { name: new RegExp(name) })).toBeVisible();
    }

    // The worker is a separate built chunk: this proves it loads under COEP/CSP in the build.
    await expect(page.getByTestId('selfcheck-status')).toContainText('Passed');
    await expect(page.getByTestId('isolation')).toContainText('Cross-origin isolated: yes');
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: `${ARTIFACTS}/boot.png`, fullPage: true });

    expect(problems).toEqual([]);
  });
});
