/**
 * The cross-origin isolation fallback for hosts that cannot send headers (GitHub Pages, a plain
 * file server): this service worker re-serves the lab's own responses with COOP/COEP added (and
 * the refusal to be framed, which a meta CSP cannot say), so once it controls the page, the page
 * is cross-origin isolated. Other pages of the origin are left alone (coi-scope.ts).
 * coi-register.ts installs it; the build compiles this file to coi-sw.js at the site's root
 * (src/deploy/vite-plugin.ts).
 */
import { isLabClient, isLabPage } from './coi-scope';
import { framingHeaders, isolationHeaders } from './headers';

declare const self: ServiceWorkerGlobalScope;

// Take over at once: the page reloads as soon as this worker controls it.
self.addEventListener('install', () => void self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const scope = self.registration.scope;
  // Other origins (the model hub) answer with CORS, which require-corp accepts as it is.
  if (new URL(request.url).origin !== self.location.origin) return;
  // A fetch the browser itself would refuse to make through a worker (a Chromium quirk).
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  if (request.mode === 'navigate') {
    // Another page of the origin: not this worker's business.
    if (isLabPage(request.url, scope)) event.respondWith(fetch(request).then((r) => withHeaders(r, true)));
    return;
  }
  // Nothing asked for it (a prefetch): nothing of the lab's needs it isolated.
  if (!event.clientId) return;
  event.respondWith(
    (async () => {
      const [client, response] = await Promise.all([self.clients.get(event.clientId), fetch(request)]);
      return isLabClient(client, scope) ? withHeaders(response, false) : response;
    })(),
  );
});

function withHeaders(response: Response, page: boolean): Response {
  // Opaque responses have no headers to change.
  if (response.status === 0) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(isolationHeaders)) headers.set(name, value);
  if (page) {
    for (const [name, value] of Object.entries(framingHeaders)) headers.set(name, value);
    // A second policy with one directive: it adds the refusal and restricts nothing else.
    headers.append('Content-Security-Policy', "frame-ancestors 'none'");
  }
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
