/**
 * How much the browser lets this origin store, and whether a failed write was the quota.
 * Everything degrades to "unknown" where navigator.storage is missing (Node, old browsers,
 * some private windows) instead of throwing, so callers need no feature checks.
 */

export interface StorageStatus {
  /** navigator.storage.estimate is available; when false, usage and quota are null. */
  supported: boolean;
  /** Bytes used by this origin (all of IndexedDB, Cache Storage, ...). */
  usage: number | null;
  /** Bytes this origin may use. */
  quota: number | null;
  /** quota - usage. */
  available: number | null;
  /** The browser promised not to evict this origin's data under storage pressure. */
  persisted: boolean | null;
}

function storageManager(): StorageManager | null {
  const nav = (globalThis as { navigator?: Navigator }).navigator;
  return nav?.storage && typeof nav.storage.estimate === 'function' ? nav.storage : null;
}

export async function storageStatus(): Promise<StorageStatus> {
  const storage = storageManager();
  if (!storage) return { supported: false, usage: null, quota: null, available: null, persisted: null };
  const [estimate, persisted] = await Promise.all([
    storage.estimate(),
    typeof storage.persisted === 'function' ? storage.persisted().catch(() => null) : Promise.resolve(null),
  ]);
  const usage = estimate.usage ?? null;
  const quota = estimate.quota ?? null;
  return {
    supported: true,
    usage,
    quota,
    available: usage !== null && quota !== null ? Math.max(0, quota - usage) : null,
    persisted,
  };
}

/**
 * Asks the browser to keep this origin's data under storage pressure (best-effort storage
 * can be evicted, which would lose runs). Chrome decides without a prompt (engagement,
 * installed app); Firefox asks the person. Returns whether storage is now persistent.
 */
export async function requestPersistence(): Promise<boolean> {
  const storage = storageManager();
  if (!storage || typeof storage.persist !== 'function') return false;
  try {
    return await storage.persist();
  } catch {
    return false;
  }
}

/**
 * True when an error (or anything it wraps) is a quota failure. IndexedDB reports it as a
 * DOMException named QuotaExceededError; Dexie re-wraps it (same name, or inside `inner`,
 * a BulkError's `failures`, or an AbortError), so the whole chain is searched.
 */
export function isQuotaError(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 8) return false;
  const e = error as { name?: unknown; inner?: unknown; cause?: unknown; failures?: unknown };
  if (e.name === 'QuotaExceededError') return true;
  if (isQuotaError(e.inner, depth + 1) || isQuotaError(e.cause, depth + 1)) return true;
  const failures = e.failures;
  const list = Array.isArray(failures) ? failures : failures && typeof failures === 'object' ? Object.values(failures) : [];
  return list.some((f) => isQuotaError(f, depth + 1));
}
