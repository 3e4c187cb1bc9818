/**
 * Runs first in the built page (a classic script, so before the app's module): where the host
 * sent no COOP/COEP and the page is not cross-origin isolated, it installs coi-sw.js, which adds
 * them, and reloads once that worker controls the page. Where the headers arrive, it does nothing.
 */
const RELOADED = 'nextstate-coi-reloaded';

function reloadOnce(): void {
  // A browser that ignores the worker's headers would otherwise reload forever.
  try {
    if (sessionStorage.getItem(RELOADED)) {
      console.warn(
        'Next-State Lab: this page is not cross-origin isolated, even through its service worker; multi-threaded WASM is off. Serve it with the headers in docs/deploying.md.',
      );
      return;
    }
    sessionStorage.setItem(RELOADED, '1');
  } catch {
    return;
  }
  location.reload();
}

if (globalThis.crossOriginIsolated) {
  try {
    sessionStorage.removeItem(RELOADED);
  } catch {
    // Storage refused: nothing to clear.
  }
} else if ('serviceWorker' in navigator && window.isSecureContext) {
  const worker = new URL('coi-sw.js', (document.currentScript as HTMLScriptElement).src);
  if (navigator.serviceWorker.controller) {
    // Controlled yet not isolated: the worker was installed by an older page or bypassed.
    reloadOnce();
  } else {
    navigator.serviceWorker.addEventListener('controllerchange', reloadOnce);
    // The lab's own folder (where index.html is), never wider: at an origin's root that is the
    // whole origin, and coi-sw.js itself then touches only the lab's page and what it loads.
    navigator.serviceWorker.register(worker, { scope: new URL('./', document.baseURI).pathname }).catch((e: unknown) => {
      console.warn(
        `Next-State Lab: the cross-origin isolation service worker did not install (${(e as Error).message}); serve the site with the headers in docs/deploying.md.`,
      );
    });
  }
}

// A module to the type checker (its names stay its own); the build wraps it as a classic script.
export {};
