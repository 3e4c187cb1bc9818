/**
 * The cross-origin isolation fallback for hosts that cannot send headers (GitHub Pages, a plain
 * file server): this service worker re-serves the site's own responses with COOP/COEP added, so
 * once it controls the page, the page is cross-origin isolated. coi-register.ts installs it.
 * The build compiles this file to coi-sw.js at the site's root (src/deploy/vite-plugin.ts).
 */
import { isolationHeaders } from './headers';

declare const self: ServiceWorkerGlobalScope;

// Take over at once: the page reloads as soon as this worker controls it.
self.addEventListener('install', () => void self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const request = event.request;
  // Other origins (the model hub) answer with CORS, which require-corp accepts as it is.
  if (new URL(request.url).origin !== self.location.origin) return;
  // A fetch the browser itself would refuse to make through a worker (a Chromium quirk).
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  event.respondWith(fetch(request).then(withIsolation));
});

function withIsolation(response: Response): Response {
  // Opaque responses have no headers to change.
  if (response.status === 0) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of Object.entries(isolationHeaders)) headers.set(name, value);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
