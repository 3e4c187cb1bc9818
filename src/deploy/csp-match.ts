/**
 * Reading a Content-Security-Policy the way a browser applies one, as far as the lab needs: the
 * sources of a directive, and whether a URL is among them. The page uses this to say, before it
 * fails, that its CSP will not let it reach an address (an endpoint, a shared run file).
 */

/** The sources of `directive` in `policy` (falling back to default-src, as browsers do); null when neither is there. */
export function directiveSources(policy: string, directive: string): string[] | null {
  const parts = new Map(
    policy
      .split(';')
      .map((p) => p.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...sources]) => [name.toLowerCase(), sources] as const),
  );
  return parts.get(directive) ?? parts.get('default-src') ?? null;
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443' };
const portOf = (url: URL) => url.port || DEFAULT_PORTS[url.protocol] || '';

/**
 * Whether a request to `url` from a page at `self` is allowed by `sources` (CSP source
 * expressions: 'self', a scheme such as https:, a host with an optional scheme, `*.` and `:*`).
 */
export function sourcesAllow(sources: readonly string[], url: URL, self: URL): boolean {
  return sources.some((source) => sourceAllows(source, url, self));
}

function sourceAllows(source: string, url: URL, self: URL): boolean {
  const s = source.toLowerCase();
  // 'self' is the page's origin over a network scheme: not blob: or data: URLs, whatever their origin.
  if (s === "'self'") return url.protocol in DEFAULT_PORTS && url.origin === self.origin;
  if (s.startsWith("'")) return false;
  if (s === '*') return url.protocol === 'http:' || url.protocol === 'https:';
  if (/^[a-z][a-z0-9+.-]*:$/.test(s)) return url.protocol === s;
  const m = /^(?:([a-z][a-z0-9+.-]*):\/\/)?(\*|(?:\*\.)?[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\*|\d+))?(\/.*)?$/.exec(s);
  if (!m) return false;
  const [, scheme, host, port, path] = m;
  // Without a scheme the page's own counts; an http source also allows https (an upgrade).
  const allowed = scheme ? `${scheme}:` : self.protocol;
  if (url.protocol !== allowed && !(allowed === 'http:' && url.protocol === 'https:')) return false;
  const hostname = url.hostname.toLowerCase();
  if (host.startsWith('*.') ? !hostname.endsWith(host.slice(1)) : host !== '*' && hostname !== host) return false;
  if (port !== '*') {
    const wanted = port ?? DEFAULT_PORTS[allowed] ?? '';
    if (portOf(url) !== wanted && !(port === undefined && url.protocol === 'https:' && portOf(url) === '443')) return false;
  }
  if (path && path !== '/' && !(path.endsWith('/') ? url.pathname.startsWith(path) : url.pathname === path)) return false;
  return true;
}
