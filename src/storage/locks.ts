/**
 * Which runs a live tab is driving, through the Web Locks API. A lock is released by the
 * browser when its tab closes or crashes, which is exactly "is anyone still running this?":
 * a second tab's startup must not mark a run that another tab is training as interrupted,
 * nor delete an import another tab is still writing. Where the API is missing (Node, old
 * browsers) nothing is ever held, i.e. one process owns the database.
 */

function lockManager(): LockManager | null {
  const nav = (globalThis as { navigator?: Navigator }).navigator;
  return nav?.locks && typeof nav.locks.request === 'function' ? nav.locks : null;
}

/** Names of locks currently held by any tab of this origin. */
export async function heldLocks(): Promise<Set<string>> {
  const locks = lockManager();
  if (!locks) return new Set();
  const snapshot = await locks.query();
  return new Set((snapshot.held ?? []).map((l) => l.name).filter((n): n is string => typeof n === 'string'));
}

/**
 * Takes a lock if no one holds it. Resolves with the function that releases it, or null when
 * it is held (by another tab, or already by this one). Without the API: a no-op release.
 */
export function tryHold(name: string): Promise<(() => void) | null> {
  const locks = lockManager();
  if (!locks) return Promise.resolve(() => {});
  return new Promise((resolve, reject) => {
    locks
      .request(name, { ifAvailable: true }, (lock) => {
        if (!lock) return resolve(null);
        // The lock lasts as long as this promise is pending.
        return new Promise<void>((release) => resolve(release as () => void));
      })
      .catch(reject);
  });
}
