/**
 * What the isolation service worker may change. Its scope is the lab's folder, which at an
 * origin's root is the whole origin: so it adds COOP/COEP only to the lab's own page and to what
 * the lab's pages and workers load, and leaves every other page of the origin as its server sent it.
 */

/** The lab's page: the scope's folder itself or its index.html (query and hash aside). */
export function isLabPage(url: string, scope: string): boolean {
  const u = new URL(url);
  const s = new URL(scope);
  return u.origin === s.origin && (u.pathname === s.pathname || u.pathname === `${s.pathname}index.html`);
}

/**
 * A client (page or worker) of the lab: the lab's page, or a worker started from the lab's folder
 * or from a blob: URL of its origin (workers are only ever started by the lab's pages there).
 */
export function isLabClient(client: { url: string; type: string } | null | undefined, scope: string): boolean {
  if (!client) return false;
  if (client.type === 'window') return isLabPage(client.url, scope);
  const s = new URL(scope);
  if (client.url.startsWith('blob:')) return client.url.startsWith(`blob:${s.origin}/`);
  const u = new URL(client.url);
  return u.origin === s.origin && u.pathname.startsWith(s.pathname);
}
