/**
 * The response headers the lab needs, in one place: the dev and preview servers send them, the
 * build writes them into each static host's headers file and into the page (the CSP as a meta
 * tag), and the service-worker fallback adds the isolation pair (and the framing refusal) where a
 * host sends none.
 *
 * COOP/COEP make the page cross-origin isolated, which multi-threaded WASM in onnxruntime-web
 * needs (SharedArrayBuffer). The CSP lets the page connect to itself, the Hugging Face hub and
 * its CDNs, the default address of `nextstate serve`, the Setup's default endpoint (OpenAI's
 * API), and the endpoints named at build time
 * (NEXTSTATE_CONNECT_SRC, see vite-plugin.ts), nothing else; it lets workers start from blob:
 * URLs, forbids inline scripts, form submissions and being framed.
 */

/** Models, datasets and shared run files on the Hugging Face hub, with the CDNs its downloads redirect to. */
export const HUB_SOURCES = ['https://huggingface.co', 'https://*.huggingface.co', 'https://*.hf.co'] as const;
/** `nextstate serve`'s default address, which the lab watches (`#/watch?url=`). */
export const LOCAL_SERVER_SOURCES = ['http://127.0.0.1:30000', 'http://localhost:30000'] as const;
/** The endpoint a role starts from when the Setup switches it to an OpenAI-compatible endpoint. */
export const DEFAULT_ENDPOINT_SOURCES = ['https://api.openai.com'] as const;

export class ConnectSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectSourceError';
  }
}

/** An origin as a CSP host source: scheme, host (`*.` allowed in front) and an optional port or `:*`. */
const ORIGIN_SOURCE = /^https?:\/\/(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*(?::(?:\d{1,5}|\*))?$/i;

/**
 * The endpoints a person adds to connect-src (the NEXTSTATE_CONNECT_SRC build option): origins
 * separated by spaces or commas, such as `http://localhost:11434 https://api.openai.com`.
 *
 * @throws ConnectSourceError naming an entry that is not an http(s) origin
 */
export function parseConnectSources(text: string | undefined): string[] {
  const entries = (text ?? '').split(/[\s,]+/).filter(Boolean);
  for (const e of entries) {
    if (!ORIGIN_SOURCE.test(e))
      throw new ConnectSourceError(
        `NEXTSTATE_CONNECT_SRC: "${e}" is not an origin; give each endpoint as scheme://host[:port], such as http://localhost:11434 or https://api.openai.com, separated by spaces.`,
      );
  }
  return entries;
}

/** Everything the page may connect to: itself, the hub, the local server, the default endpoint, and `extra`. */
export function connectSources(extra: readonly string[] = []): string[] {
  return [...new Set(["'self'", ...HUB_SOURCES, ...LOCAL_SERVER_SOURCES, ...DEFAULT_ENDPOINT_SOURCES, ...extra])];
}

/**
 * The lab's CSP. `meta`: the form a meta tag can carry, without frame-ancestors (browsers ignore
 * it there, with a console warning; only the header can refuse framing). `dev`: the dev server's,
 * whose hot reloading puts each stylesheet in an inline style element.
 */
export function contentSecurityPolicy(o: { connect?: readonly string[]; meta?: boolean; dev?: boolean } = {}): string {
  return [
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval'",
    "worker-src 'self' blob:",
    // The built page's styles are files; Svelte and the chart library set inline styles through
    // the CSSOM, which style-src does not govern.
    `style-src 'self'${o.dev ? " 'unsafe-inline'" : ''}`,
    "img-src 'self' data: blob:",
    `connect-src ${connectSources(o.connect).join(' ')}`,
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'none'",
    ...(o.meta ? [] : ["frame-ancestors 'none'"]),
  ].join('; ');
}

/** The pair that makes a page cross-origin isolated. */
export const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;

/** No other site may frame the page (and so trigger an import from an iframe); X-Frame-Options for browsers before CSP 2. */
export const framingHeaders = {
  'X-Frame-Options': 'DENY',
} as const;

/** Every header the lab's responses carry, with `connect` added to connect-src (`dev`: the dev server's). */
export function labHeaders(connect: readonly string[] = [], o: { dev?: boolean } = {}): Record<string, string> {
  return {
    ...isolationHeaders,
    'Content-Security-Policy': contentSecurityPolicy({ connect, dev: o.dev }),
    ...framingHeaders,
  };
}

/** The headers without a build option. */
export const securityHeaders: Record<string, string> = labHeaders();
export const CONTENT_SECURITY_POLICY = securityHeaders['Content-Security-Policy'];
export const META_CONTENT_SECURITY_POLICY = contentSecurityPolicy({ meta: true });

type Headers = Readonly<Record<string, string>>;
const entries = (headers: Headers) => Object.entries(headers);

/** Netlify and Cloudflare Pages read `_headers` at the site's root. */
export function netlifyHeaders(headers: Headers = securityHeaders): string {
  return ['/*', ...entries(headers).map(([k, v]) => `  ${k}: ${v}`), ''].join('\n');
}

/** Vercel reads `vercel.json` at the root of what it deploys. */
export function vercelJson(headers: Headers = securityHeaders): string {
  return `${JSON.stringify({ headers: [{ source: '/(.*)', headers: entries(headers).map(([key, value]) => ({ key, value })) }] }, null, 2)}\n`;
}

/** Apache, in a `.htaccess` (needs mod_headers and AllowOverride FileInfo) or the site's config. */
export function apacheLines(headers: Headers = securityHeaders): string {
  return entries(headers)
    .map(([k, v]) => `Header always set ${k} "${v}"`)
    .join('\n');
}

export function apacheHtaccess(headers: Headers = securityHeaders): string {
  return [
    '<IfModule mod_headers.c>',
    ...apacheLines(headers)
      .split('\n')
      .map((l) => `  ${l}`),
    '</IfModule>',
    '',
  ].join('\n');
}

/** nginx, inside the `server` or `location` block that serves the folder. */
export function nginxLines(headers: Headers = securityHeaders): string {
  return entries(headers)
    .map(([k, v]) => `add_header ${k} "${v}" always;`)
    .join('\n');
}

/** The files the build writes beside index.html, by name. */
export function hostHeaderFiles(headers: Headers = securityHeaders): Record<string, string> {
  return { _headers: netlifyHeaders(headers), 'vercel.json': vercelJson(headers), '.htaccess': apacheHtaccess(headers) };
}
