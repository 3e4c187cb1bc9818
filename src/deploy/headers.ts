/**
 * The response headers the lab needs, in one place: the dev and preview servers send them, the
 * build writes them into each static host's headers file and into the page (the CSP as a meta
 * tag), and the service-worker fallback adds the isolation pair where a host sends none.
 *
 * COOP/COEP make the page cross-origin isolated, which multi-threaded WASM in onnxruntime-web
 * needs (SharedArrayBuffer). The CSP lets models come from the Hugging Face hub and its CDN,
 * lets workers start from blob: URLs, and forbids inline scripts.
 */
const HUB = 'https://huggingface.co https://*.huggingface.co https://*.hf.co';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self' blob:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  // http(s): for OpenAI-compatible endpoints the user configures (local vLLM, Ollama, ...).
  `connect-src 'self' blob: data: ${HUB} https: http://localhost:* http://127.0.0.1:*`,
  "object-src 'none'",
  "base-uri 'self'",
].join('; ');

/** The pair that makes a page cross-origin isolated. */
export const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;

export const securityHeaders: Record<string, string> = {
  ...isolationHeaders,
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
};

const entries = () => Object.entries(securityHeaders);

/** Netlify and Cloudflare Pages read `_headers` at the site's root. */
export function netlifyHeaders(): string {
  return ['/*', ...entries().map(([k, v]) => `  ${k}: ${v}`), ''].join('\n');
}

/** Vercel reads `vercel.json` at the root of what it deploys. */
export function vercelJson(): string {
  return `${JSON.stringify({ headers: [{ source: '/(.*)', headers: entries().map(([key, value]) => ({ key, value })) }] }, null, 2)}\n`;
}

/** Apache, in a `.htaccess` (needs mod_headers and AllowOverride FileInfo) or the site's config. */
export function apacheLines(): string {
  return entries()
    .map(([k, v]) => `Header always set ${k} "${v}"`)
    .join('\n');
}

export function apacheHtaccess(): string {
  return [
    '<IfModule mod_headers.c>',
    ...apacheLines()
      .split('\n')
      .map((l) => `  ${l}`),
    '</IfModule>',
    '',
  ].join('\n');
}

/** nginx, inside the `server` or `location` block that serves the folder. */
export function nginxLines(): string {
  return entries()
    .map(([k, v]) => `add_header ${k} "${v}" always;`)
    .join('\n');
}

/** The files the build writes beside index.html, by name. */
export function hostHeaderFiles(): Record<string, string> {
  return { _headers: netlifyHeaders(), 'vercel.json': vercelJson(), '.htaccess': apacheHtaccess() };
}
