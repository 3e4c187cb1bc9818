/**
 * Credentials must never leave the browser inside a run file or land in a run's config:
 * endpoint API keys live in the settings table only. Any key that names a credential, and
 * any string shaped like one, is dropped, at any depth, in objects and arrays alike.
 */
import { portableModelName } from '../models/source';

/** Normalized key names (lower case, no separators) that always hold a credential. */
const EXACT = new Set(['authorization', 'auth', 'bearer', 'cookie', 'token', 'password', 'passwd', 'credentials', 'key', 'jwt', 'pat', 'pwd']);
/** Suffixes that mark a credential: openaiApiKey, hf_token, clientSecret, x-api-key, secretKey. */
const SUFFIXES = ['apikey', 'secret', 'secretkey', 'password', 'passphrase', 'token', 'accesskey', 'privatekey', 'credential', 'credentials', 'jwt'];
/** Keys whose last word is "key" but that name a lookup or a public value, not a credential. */
const NOT_SECRET_KEYS = new Set([
  'sortkey',
  'cachekey',
  'primarykey',
  'foreignkey',
  'partitionkey',
  'groupkey',
  'rowkey',
  'mapkey',
  'lookupkey',
  'hotkey',
  'shortcutkey',
  'publickey',
  'idempotencykey',
]);

/**
 * True for key names like apiKey, api_key, Authorization, token, hfToken, client_secret,
 * secretKey, openaiKey (any name whose last word is "key", but sortKey and the like),
 * credential, passphrase, jwt. "maxNewTokens" (a count) stays: it ends in "tokens", not
 * "token"; so does "keyboard".
 */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (EXACT.has(k) || SUFFIXES.some((s) => k.endsWith(s))) return true;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return words.length > 1 && words.at(-1)!.toLowerCase() === 'key' && !NOT_SECRET_KEYS.has(k);
}

/**
 * Values shaped like a credential, whatever key holds them: provider API keys (OpenAI and
 * Anthropic sk-..., Hugging Face hf_..., GitHub, Slack, AWS, Google), bearer tokens, JWTs,
 * private keys in PEM.
 */
const SECRET_VALUES = [
  /\bsk-[A-Za-z0-9_-]{20,}/,
  /\bBearer\s+[A-Za-z0-9._~+/-]{8,}/i,
  /\bhf_[A-Za-z0-9]{30,}/,
  /\bgh[pousr]_[A-Za-z0-9]{30,}/,
  /\bgithub_pat_[A-Za-z0-9_]{30,}/,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/,
  /\bAKIA[0-9A-Z]{16}\b/,
  /\bAIza[0-9A-Za-z_-]{35}/,
  /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
];

/** True for a string that holds something shaped like a credential (see SECRET_VALUES). */
export function looksLikeSecret(value: string): boolean {
  return SECRET_VALUES.some((re) => re.test(value));
}

/** Deeper than this is not a config; refusing it also keeps the recursion off the stack limit. */
export const MAX_CONFIG_DEPTH = 32;

export class ConfigTooDeepError extends Error {
  constructor(readonly path: string) {
    super(`nests deeper than ${MAX_CONFIG_DEPTH} levels`);
  }
}

export interface StripOptions {
  /**
   * Also name local folders by their last path segment (portableModelName), for copies that
   * leave this machine: the run's own database keeps the paths it needs to resume.
   */
  localPaths?: 'keep' | 'name';
}

/**
 * A deep copy of a JSON value without secret-named keys or secret-shaped strings. Non-JSON
 * values (functions, undefined) are dropped as JSON.stringify would drop them.
 *
 * @throws ConfigTooDeepError past MAX_CONFIG_DEPTH
 */
export function stripSecrets<T>(value: T, options: StripOptions = {}): T {
  return strip(value, '', 0, options.localPaths === 'name') as T;
}

function strip(value: unknown, path: string, depth: number, namePaths: boolean): unknown {
  if (depth > MAX_CONFIG_DEPTH) throw new ConfigTooDeepError(path);
  if (Array.isArray(value)) return value.map((v, i) => strip(v, `${path}[${i}]`, depth + 1, namePaths) ?? null);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      // "__proto__" is never app data; dropped so that no later copy by assignment (Dexie
      // clones objects that way) can turn it into a prototype.
      if (isSecretKey(key) || key === '__proto__') continue;
      const copy = strip(v, path ? `${path}.${key}` : key, depth + 1, namePaths);
      if (copy !== undefined) out[key] = copy;
    }
    return out;
  }
  if (typeof value === 'string' && looksLikeSecret(value)) return undefined;
  if (typeof value === 'string' && namePaths && !value.includes('\n')) return portableModelName(value);
  if (typeof value === 'function' || typeof value === 'symbol' || value === undefined) return undefined;
  if (typeof value === 'bigint') return undefined;
  return value;
}
