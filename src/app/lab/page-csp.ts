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

/**
 * What to say before a run fails on it: this page's CSP will not let it reach `address` (an
 * endpoint's or a policy server's base URL); '' when it may, or when that cannot be told.
 */
export function connectBlocked(address: string, sources: readonly string[] | null = pageConnectSources(), self?: URL): string {
  let url: URL;
  try {
    url = new URL(address.trim());
  } catch {
    return '';
  }
  return sources && !connectAllowed(url, sources, self)
    ? `This lab’s Content-Security-Policy does not let it reach ${url.origin}. Build the lab with NEXTSTATE_CONNECT_SRC="${url.origin}" (or add it to connect-src in the host’s headers file; docs/deploying.md).`
    : '';
}
