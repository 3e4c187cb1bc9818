/**
 * How the lab gets its headers on every server: the dev and preview servers send them; the build
 * writes each static host's headers file, puts the CSP in the page as a meta tag (for hosts that
 * take no headers file), and adds the service-worker fallback for cross-origin isolation. The
 * values are headers.ts's, with the endpoints of the NEXTSTATE_CONNECT_SRC build option added to
 * connect-src (`NEXTSTATE_CONNECT_SRC="http://localhost:11434" npm run build`).
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Plugin } from 'vite';
import { contentSecurityPolicy, hostHeaderFiles, labHeaders, parseConnectSources } from './headers.ts';

/** The endpoints the build option adds to connect-src. @throws ConnectSourceError for one that is not an origin */
export function connectOption(env: Record<string, string | undefined> = process.env): string[] {
  return parseConnectSources(env.NEXTSTATE_CONNECT_SRC);
}

/** The headers a build or server sends, the build option applied. */
export function builtHeaders(env: Record<string, string | undefined> = process.env): Record<string, string> {
  return labHeaders(connectOption(env));
}

/** The CSP the built page carries as a meta tag, the build option applied. */
export function builtMetaPolicy(env: Record<string, string | undefined> = process.env): string {
  return contentSecurityPolicy({ connect: connectOption(env), meta: true });
}

/** The fallback's two scripts, as the built site names them (at its root, beside index.html). */
export const COI_REGISTER = 'coi-register.js';
export const COI_WORKER = 'coi-sw.js';

/** A browser script from its TypeScript source, self-contained (headers.ts compiled in). */
async function compile(source: string): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL(source, import.meta.url))],
    bundle: true,
    format: 'iife',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'warning',
  });
  return result.outputFiles[0].text;
}

export class IndexHtmlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IndexHtmlError';
  }
}

const attribute = (value: string) => value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');

type Middleware = (_req: unknown, res: { setHeader(k: string, v: string): void }, next: () => void) => void;

const sending =
  (headers: Record<string, string>): Middleware =>
  (_req, res, next) => {
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    next();
  };

export function staticHosting(): Plugin {
  let base = '/';
  const connect = connectOption();
  const headers = labHeaders(connect);
  return {
    name: 'nextstate-static-hosting',
    configResolved: (config) => void (base = config.base),
    configureServer: (server) => void server.middlewares.use(sending(labHeaders(connect, { dev: true }))),
    configurePreviewServer: (server) => void server.middlewares.use(sending(headers)),
    transformIndexHtml: {
      order: 'post',
      handler(html, ctx) {
        // The dev server sends the headers itself, and is always isolated.
        if (ctx.server) return html;
        // Right after the charset (which must come first): a meta CSP governs only what follows
        // it, and the fallback must run before the app does.
        const charset = /<meta charset="[^"]*"\s*\/?>/i;
        if (!charset.test(html))
          throw new IndexHtmlError('index.html needs <meta charset="UTF-8" /> in its head: the CSP and the isolation fallback go right after it');
        const tags = [
          `<meta http-equiv="Content-Security-Policy" content="${attribute(contentSecurityPolicy({ connect, meta: true }))}" />`,
          `<script src="${attribute(`${base}${COI_REGISTER}`)}"></script>`,
        ];
        return html.replace(charset, (m) => [m, ...tags].join('\n    '));
      },
    },
    async generateBundle() {
      for (const [fileName, source] of Object.entries(hostHeaderFiles(headers))) this.emitFile({ type: 'asset', fileName, source });
      this.emitFile({ type: 'asset', fileName: COI_REGISTER, source: await compile('./coi-register.ts') });
      this.emitFile({ type: 'asset', fileName: COI_WORKER, source: await compile('./coi-sw.ts') });
    },
  };
}
