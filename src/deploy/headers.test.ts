import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  apacheHtaccess,
  apacheLines,
  CONTENT_SECURITY_POLICY,
  hostHeaderFiles,
  isolationHeaders,
  netlifyHeaders,
  nginxLines,
  securityHeaders,
  vercelJson,
} from './headers';
import { securityHeaders as viteHeaders } from '../../vite.config';

describe('the security headers', () => {
  it('are one set: what the dev and preview servers send is what the hosts get', () => {
    expect(viteHeaders).toBe(securityHeaders);
    expect(Object.keys(securityHeaders)).toEqual(['Cross-Origin-Opener-Policy', 'Cross-Origin-Embedder-Policy', 'Content-Security-Policy']);
    expect(securityHeaders).toMatchObject(isolationHeaders);
    expect(securityHeaders['Content-Security-Policy']).toBe(CONTENT_SECURITY_POLICY);
  });

  it('fit a meta tag and every host file: no quote, newline or directive a meta CSP ignores', () => {
    for (const v of Object.values(securityHeaders)) expect(v).not.toMatch(/["\n\r<>&]/);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/frame-ancestors|report-uri|sandbox/);
  });

  it('are written in each host format', () => {
    const netlify = netlifyHeaders().split('\n');
    expect(netlify[0]).toBe('/*');
    expect(netlify).toContain('  Cross-Origin-Embedder-Policy: require-corp');
    expect(JSON.parse(vercelJson())).toEqual({
      headers: [{ source: '/(.*)', headers: Object.entries(securityHeaders).map(([key, value]) => ({ key, value })) }],
    });
    expect(apacheHtaccess()).toMatch(/^<IfModule mod_headers\.c>\n {2}Header always set Cross-Origin-Opener-Policy "same-origin"\n/);
    expect(nginxLines().split('\n')).toContain('add_header Cross-Origin-Opener-Policy "same-origin" always;');
    expect(Object.keys(hostHeaderFiles())).toEqual(['_headers', 'vercel.json', '.htaccess']);
  });

  it("match the README's Deploying lines for Apache and nginx", () => {
    const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
    const block = (lang: string) =>
      readme
        .match(new RegExp('```' + lang + '\\n([^`]*)```'))?.[1]
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .join('\n');
    expect(block('apache'), 'README (Deploying): paste apacheLines() from src/deploy/headers.ts').toBe(apacheLines());
    expect(block('nginx'), 'README (Deploying): paste nginxLines() from src/deploy/headers.ts').toBe(nginxLines());
  });
});
