import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLabClient, isLabPage } from './coi-scope';
import { directiveSources, sourcesAllow } from './csp-match';
import {
  apacheHtaccess,
  apacheLines,
  CONTENT_SECURITY_POLICY,
  ConnectSourceError,
  contentSecurityPolicy,
  hostHeaderFiles,
  isolationHeaders,
  labHeaders,
  META_CONTENT_SECURITY_POLICY,
  netlifyHeaders,
  nginxLines,
  parseConnectSources,
  securityHeaders,
  vercelJson,
} from './headers';
import { builtHeaders, builtMetaPolicy } from './vite-plugin';
import { securityHeaders as viteHeaders } from '../../vite.config';

const LAB = new URL('https://lab.example/');
const connect = (policy: string, url: string) => sourcesAllow(directiveSources(policy, 'connect-src')!, new URL(url), LAB);

describe('the security headers', () => {
  it('are one set: what the dev and preview servers send is what the hosts get', () => {
    expect(viteHeaders).toEqual(securityHeaders);
    expect(Object.keys(securityHeaders)).toEqual(['Cross-Origin-Opener-Policy', 'Cross-Origin-Embedder-Policy', 'Content-Security-Policy', 'X-Frame-Options']);
    expect(securityHeaders).toMatchObject(isolationHeaders);
    expect(securityHeaders['Content-Security-Policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(securityHeaders['X-Frame-Options']).toBe('DENY');
  });

  it('connect only to the page, the hub and its CDNs, nextstate serve’s default address and the Setup’s default endpoint', () => {
    for (const url of [
      'https://lab.example/models/x/config.json',
      'https://huggingface.co/Qwen/Qwen3-0.6B/resolve/main/config.json',
      'https://cdn-lfs.huggingface.co/repos/x',
      'https://cas-bridge.xethub.hf.co/xet-bridge-us/x',
      'http://127.0.0.1:30000/v1/records',
      'http://localhost:30000/healthz',
      'https://api.openai.com/v1/chat/completions',
    ])
      expect(connect(CONTENT_SECURITY_POLICY, url), url).toBe(true);
    for (const url of [
      'https://files.example/run.nsrun',
      'https://huggingface.co.evil.example/x',
      'http://huggingface.co/x',
      'http://127.0.0.1:8000/v1',
      'http://localhost:11434/v1',
      'data:application/gzip;base64,H4s=',
      'blob:https://lab.example/1234',
    ])
      expect(connect(CONTENT_SECURITY_POLICY, url), url).toBe(false);
  });

  it('refuse framing and form submissions, and keep scripts and styles to the site’s own files', () => {
    const directives = Object.fromEntries(CONTENT_SECURITY_POLICY.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives).toMatchObject({
      'frame-ancestors': "'none'",
      'form-action': "'none'",
      'object-src': "'none'",
      'base-uri': "'self'",
      'script-src': "'self' 'wasm-unsafe-eval'",
      'style-src': "'self'",
    });
    // The dev server's hot reloading needs inline style elements; nothing else does.
    expect(labHeaders([], { dev: true })['Content-Security-Policy']).toContain("style-src 'self' 'unsafe-inline'");
  });

  it('add the endpoints of the build option to connect-src, and refuse what is not an origin', () => {
    expect(parseConnectSources(undefined)).toEqual([]);
    expect(parseConnectSources(' http://localhost:11434, https://api.example.com  https://*.example.org:* ')).toEqual([
      'http://localhost:11434',
      'https://api.example.com',
      'https://*.example.org:*',
    ]);
    const env = { NEXTSTATE_CONNECT_SRC: 'http://localhost:11434 https://api.example.com' };
    const policy = builtHeaders(env)['Content-Security-Policy'];
    expect(connect(policy, 'http://localhost:11434/v1/chat/completions')).toBe(true);
    expect(connect(policy, 'https://api.example.com/v1/chat/completions')).toBe(true);
    expect(connect(policy, 'http://localhost:1234/v1')).toBe(false);
    expect(builtMetaPolicy(env)).toBe(contentSecurityPolicy({ connect: ['http://localhost:11434', 'https://api.example.com'], meta: true }));
    for (const bad of ["'unsafe-inline'", 'https:', '*', 'localhost:11434', 'https://x.example/path', 'javascript:alert(1)'])
      expect(() => parseConnectSources(bad), bad).toThrow(ConnectSourceError);
    expect(() => parseConnectSources('https:')).toThrow('NEXTSTATE_CONNECT_SRC: "https:" is not an origin; give each endpoint as scheme://host[:port]');
  });

  it('fit a meta tag and every host file: no quote, newline, and in the meta tag no directive a meta CSP ignores', () => {
    for (const v of Object.values(securityHeaders)) expect(v).not.toMatch(/["\n\r<>&]/);
    expect(META_CONTENT_SECURITY_POLICY).not.toMatch(/frame-ancestors|report-uri|sandbox/);
    expect(META_CONTENT_SECURITY_POLICY).toBe(CONTENT_SECURITY_POLICY.replace("; frame-ancestors 'none'", ''));
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

  it('match the Apache and nginx lines of docs/deploying.md', () => {
    const readme = readFileSync(resolve(import.meta.dirname, '../../docs/deploying.md'), 'utf8');
    const block = (lang: string) =>
      readme
        .match(new RegExp('```' + lang + '\\n([^`]*)```'))?.[1]
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .join('\n');
    expect(block('apache'), 'docs/deploying.md: paste apacheLines() from src/deploy/headers.ts').toBe(apacheLines());
    expect(block('nginx'), 'docs/deploying.md: paste nginxLines() from src/deploy/headers.ts').toBe(nginxLines());
  });
});

describe('CSP source matching', () => {
  it('reads sources as browsers do: schemes, hosts with *. and ports, self, and default-src as the fallback', () => {
    const self = new URL('http://127.0.0.1:4173/');
    const allow = (sources: string, url: string) => sourcesAllow(sources.split(' '), new URL(url), self);
    expect(allow("'self'", 'http://127.0.0.1:4173/x')).toBe(true);
    expect(allow("'self'", 'http://127.0.0.1:4174/x')).toBe(false);
    expect(allow('https:', 'https://anything.example/')).toBe(true);
    expect(allow('https://*.hf.co', 'https://cdn.hf.co/x')).toBe(true);
    expect(allow('https://*.hf.co', 'https://hf.co/x')).toBe(false);
    expect(allow('http://localhost:*', 'http://localhost:11434/')).toBe(true);
    expect(allow('http://localhost', 'http://localhost:11434/')).toBe(false);
    expect(allow('http://example.org', 'https://example.org/')).toBe(true);
    expect(allow('example.org', 'http://example.org/')).toBe(true);
    expect(allow("'none'", 'http://127.0.0.1:4173/')).toBe(false);
    expect(directiveSources("default-src 'self'; img-src data:", 'connect-src')).toEqual(["'self'"]);
    expect(directiveSources('img-src data:', 'connect-src')).toBeNull();
  });
});

describe('the isolation worker’s reach', () => {
  const root = 'https://user.github.io/';
  const sub = 'https://user.github.io/lab/';

  it('is the lab’s page and what the lab’s pages and workers load, not the other pages of the origin', () => {
    expect(isLabPage('https://user.github.io/#/runs', root)).toBe(true);
    expect(isLabPage('https://user.github.io/index.html?x=1', root)).toBe(true);
    expect(isLabPage('https://user.github.io/blog/post.html', root)).toBe(false);
    expect(isLabPage('https://user.github.io/lab/', sub)).toBe(true);
    expect(isLabPage('https://user.github.io/', sub)).toBe(false);
    expect(isLabClient({ type: 'window', url: 'https://user.github.io/#/setup' }, root)).toBe(true);
    expect(isLabClient({ type: 'window', url: 'https://user.github.io/blog/' }, root)).toBe(false);
    expect(isLabClient({ type: 'worker', url: 'https://user.github.io/lab/assets/policy-worker.js' }, sub)).toBe(true);
    expect(isLabClient({ type: 'worker', url: 'blob:https://user.github.io/8c1e' }, sub)).toBe(true);
    expect(isLabClient({ type: 'worker', url: 'https://user.github.io/other/w.js' }, sub)).toBe(false);
    expect(isLabClient(null, root)).toBe(false);
  });
});
