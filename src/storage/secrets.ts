/**
 * Credentials must never leave the browser inside a run file or land in a run's config:
 * endpoint API keys live in the settings table only. Any key that names a credential is
 * dropped, at any depth, in objects and arrays alike.
 */

/** Normalized key names (lower case, no separators) that always hold a credential. */
const EXACT = new Set(['authorization', 'auth', 'bearer', 'cookie', 'token', 'password', 'passwd', 'credentials']);
/** Suffixes that mark a credential: openaiApiKey, hf_token, clientSecret, x-api-key. */
const SUFFIXES = ['apikey', 'secret', 'password', 'token', 'accesskey', 'privatekey'];

/**
 * True for key names like apiKey, api_key, Authorization, token, hfToken, client_secret.
 * "maxNewTokens" (a count) stays: it ends in "tokens", not "token".
 */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  return EXACT.has(k) || SUFFIXES.some((s) => k.endsWith(s));
}

/** Deeper than this is not a config; refusing it also keeps the recursion off the stack limit. */
export const MAX_CONFIG_DEPTH = 32;

export class ConfigTooDeepError extends Error {
  constructor(readonly path: string) {
    super(`nests deeper than ${MAX_CONFIG_DEPTH} levels`);
  }
}

/**
 * A deep copy of a JSON value without secret-named keys. Non-JSON values (functions,
 * undefined) are dropped as JSON.stringify would drop them.
 *
 * @throws ConfigTooDeepError past MAX_CONFIG_DEPTH
 */
export function stripSecrets<T>(value: T): T {
  return strip(value, '', 0) as T;
}

function strip(value: unknown, path: string, depth: number): unknown {
  if (depth > MAX_CONFIG_DEPTH) throw new ConfigTooDeepError(path);
  if (Array.isArray(value)) return value.map((v, i) => strip(v, `${path}[${i}]`, depth + 1) ?? null);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      // "__proto__" is never app data; dropped so that no later copy by assignment (Dexie
      // clones objects that way) can turn it into a prototype.
      if (isSecretKey(key) || key === '__proto__') continue;
      const copy = strip(v, path ? `${path}.${key}` : key, depth + 1);
      if (copy !== undefined) out[key] = copy;
    }
    return out;
  }
  if (typeof value === 'function' || typeof value === 'symbol' || value === undefined) return undefined;
  if (typeof value === 'bigint') return undefined;
  return value;
}
