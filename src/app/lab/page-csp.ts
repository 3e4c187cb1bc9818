/**
 * What this page's own Content-Security-Policy lets it connect to. The built page carries its CSP
 * as a meta tag (src/deploy/vite-plugin.ts), the same connect-src its headers send; the dev server
 * sends headers only, and there the page cannot read them (null: nothing is said).
 */
import { directiveSources, sourcesAllow } from '../../deploy/csp-match';

export function pageConnectSources(doc: Document = document): string[] | null {
  const meta = doc.querySelector<HTMLMetaElement>('meta[http-equiv="Content-Security-Policy" i]');
  return meta ? directiveSources(meta.content, 'connect-src') : null;
}

/** Whether the page may fetch `url` under `sources` (pageConnectSources). */
export function connectAllowed(url: URL, sources: readonly string[], self: URL = new URL(location.href)): boolean {
  return sourcesAllow(sources, url, self);
}
