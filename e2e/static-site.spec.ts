/**
 * The built dist/ as a static site: the headers files for common hosts, the CSP in the page, no
 * source maps, and, on a host that sends no headers at all, the service-worker fallback that makes
 * the page cross-origin isolated anyway.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { preview, type PreviewServer } from 'vite';
import { hostHeaderFiles } from '../src/deploy/headers';
import { builtHeaders, builtMetaPolicy, COI_REGISTER, COI_WORKER } from '../src/deploy/vite-plugin';
import { PLAIN_PORT } from './ports';

// What the build wrote, with the NEXTSTATE_CONNECT_SRC it was built with (none in CI).
const securityHeaders = builtHeaders();

const DIST = 'dist';
const PLAIN = `http://127.0.0.1:${PLAIN_PORT}`;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

test.describe('the built site (dist/)', () => {
  test('has a headers file for Netlify/Cloudflare, Vercel and Apache, each with the headers the servers send', () => {
    for (const [name, text] of Object.entries(hostHeaderFiles(securityHeaders))) expect(readFileSync(join(DIST, name), 'utf8'), name).toBe(text);
    const headers = readFileSync(join(DIST, '_headers'), 'utf8');
    for (const [k, v] of Object.entries(securityHeaders)) expect(headers).toContain(`${k}: ${v}`);
    const vercel = JSON.parse(readFileSync(join(DIST, 'vercel.json'), 'utf8'));
    expect(vercel.headers[0].headers).toEqual(Object.entries(securityHeaders).map(([key, value]) => ({ key, value })));
  });

  test('carries the CSP as a meta tag before any script, and the isolation fallback', () => {
    const html = readFileSync(join(DIST, 'index.html'), 'utf8');
    const meta = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)"/);
    expect(meta?.[1]).toBe(builtMetaPolicy());
    // A meta CSP cannot refuse framing: browsers ignore frame-ancestors there, with a warning.
    expect(meta?.[1]).not.toContain('frame-ancestors');
    expect(html.indexOf('http-equiv="Content-Security-Policy"')).toBeLessThan(html.indexOf('<script'));
    expect(html).toContain(`<script src="./${COI_REGISTER}"></script>`);
    expect(readFileSync(join(DIST, COI_WORKER), 'utf8')).toContain('require-corp');
  });

  test('has no source maps (a production build makes them only when asked)', () => {
    expect(filesUnder(DIST).filter((f) => f.endsWith('.map'))).toEqual([]);
    for (const f of filesUnder(DIST).filter((f) => f.endsWith('.js'))) expect(readFileSync(f, 'utf8'), f).not.toContain('sourceMappingURL=');
  });

  test.describe('on a host that sends no headers', () => {
    let server: PreviewServer;
    test.beforeAll(async () => {
      // Vite's static server without this project's config: no headers of any kind.
      server = await preview({
        configFile: false,
        logLevel: 'silent',
        build: { outDir: DIST },
        preview: { host: '127.0.0.1', port: PLAIN_PORT, strictPort: true },
      });
    });
    test.afterAll(async () => server?.close());

    test('the service worker makes the page cross-origin isolated, and the meta CSP blocks inline script', async ({ page, request }) => {
      const res = await request.get(`${PLAIN}/`);
      expect(res.headers()['cross-origin-opener-policy']).toBeUndefined();
      expect(res.headers()['content-security-policy']).toBeUndefined();

      await page.goto(`${PLAIN}/#/system`);
      // The fallback installs its worker and reloads once it controls the page.
      await page.waitForFunction(() => globalThis.crossOriginIsolated === true);
      expect(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL)).toBe(`${PLAIN}/${COI_WORKER}`);
      await expect(page.getByTestId('isolation')).toContainText('Cross-origin isolated: yes');

      const ran = await page.evaluate(async () => {
        const reported = new Promise<string>((resolve) =>
          document.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true }),
        );
        const s = document.createElement('script');
        s.textContent = 'window.__inlineRan = true';
        document.head.append(s);
        // A script that ran would never be reported: say so rather than wait.
        if ((window as { __inlineRan?: boolean }).__inlineRan) return 'ran';
        return reported;
      });
      expect(ran).toMatch(/^script-src/);

      // The worker's scope is the lab's folder (here the origin's root), but it changes only the
      // lab's page and what the lab loads: another page of the origin keeps its server's headers.
      expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.scope)).toBe(`${PLAIN}/`);
      const lab = await page.goto(`${PLAIN}/`);
      expect(lab!.headers()['cross-origin-embedder-policy']).toBe('require-corp');
      expect(lab!.headers()['x-frame-options']).toBe('DENY');
      const other = await page.goto(`${PLAIN}/favicon.svg`);
      expect(other!.status()).toBe(200);
      expect(other!.headers()['cross-origin-embedder-policy']).toBeUndefined();
      expect(other!.headers()['cross-origin-opener-policy']).toBeUndefined();
    });
  });
});
