/**
 * Small typed checkers for untrusted JSON (imported run files, presets). Each checker takes
 * a value and its field path, returns the value typed, or throws FieldError naming the path.
 * Objects are rebuilt from their known keys only, so nothing unexpected (extra fields,
 * `__proto__`) survives into the app.
 */

/** A field failed a check; callers turn it into their own error class. */
export class FieldError extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`field "${path}" ${problem}`);
    this.name = 'FieldError';
  }
}

/** Checks `value` found at `path`; returns it typed or throws FieldError. */
export type Checker<T> = (value: unknown, path: string) => T;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length > 40 ? 'a long string' : JSON.stringify(value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}

function fail(path: string, expected: string, value: unknown): never {
  throw new FieldError(path, `must be ${expected}, got ${describe(value)}`);
}

function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

/** String of at most `maxLength` (and at least `minLength`) UTF-16 units. */
export function str(maxLength: number, minLength = 0): Checker<string> {
  return (value, path) => {
    if (typeof value !== 'string') fail(path, 'a string', value);
    if (value.length > maxLength) {
      throw new FieldError(path, `is ${value.length} characters long; the limit is ${maxLength}`);
    }
    if (value.length < minLength) fail(path, `a string of at least ${minLength} characters`, value);
    return value;
  };
}

/** Finite number within [min, max]. */
export function num(min = -Infinity, max = Infinity): Checker<number> {
  return (value, path) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) fail(path, 'a finite number', value);
    if (value < min || value > max) fail(path, `a number in [${min}, ${max}]`, value);
    return value;
  };
}

/** The largest time `Date` accepts, in ms since the epoch (ECMA-262's time value range). */
export const MAX_TIME_MS = 8.64e15;

/**
 * A time in ms since the epoch that `Date` can represent: anything past it renders as
 * "Invalid Date" and throws RangeError from toISOString, so it is refused on the way in.
 */
export const timestamp: Checker<number> = num(0, MAX_TIME_MS);

/** Finite number strictly greater than `min`. */
export function above(min: number): Checker<number> {
  const finite = num();
  return (value, path) => {
    const n = finite(value, path);
    if (!(n > min)) fail(path, `a number greater than ${min}`, n);
    return n;
  };
}

/** Integer within [min, max]. */
export function int(min = 0, max = Number.MAX_SAFE_INTEGER): Checker<number> {
  return (value, path) => {
    if (typeof value !== 'number' || !Number.isInteger(value)) fail(path, 'an integer', value);
    if (value < min || value > max) fail(path, `an integer in [${min}, ${max}]`, value);
    return value;
  };
}

/** true or false; no truthy strings, since a run file says exactly what it means. */
export const bool: Checker<boolean> = (value, path) => {
  if (typeof value !== 'boolean') fail(path, 'true or false', value);
  return value;
};

/** One of a fixed set of literals. */
export function oneOf<const T extends readonly (string | number)[]>(...allowed: T): Checker<T[number]> {
  const list = allowed.map((a) => JSON.stringify(a)).join(', ');
  return (value, path) => {
    if (!allowed.includes(value as T[number])) fail(path, `one of ${list}`, value);
    return value as T[number];
  };
}

/** null, or what `check` accepts. */
export function nullable<T>(check: Checker<T>): Checker<T | null> {
  return (value, path) => (value === null ? null : check(value, path));
}

/** Array of at most `maxLength` entries, each checked; the length is checked before any entry. */
export function arrayOf<T>(check: Checker<T>, maxLength: number): Checker<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) fail(path, 'an array', value);
    if (value.length > maxLength) {
      throw new FieldError(path, `has ${value.length} entries; the limit is ${maxLength}`);
    }
    return value.map((v, i) => check(v, child(path, i)));
  };
}

/** Array of exactly two checked values (Adam betas). */
export function pair<T>(check: Checker<T>): Checker<[T, T]> {
  return (value, path) => {
    if (!Array.isArray(value) || value.length !== 2) fail(path, 'an array of two values', value);
    return [check(value[0], child(path, 0)), check(value[1], child(path, 1))];
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON object used as a map with checked keys and values. */
export function mapOf<T>(key: Checker<string>, check: Checker<T>, maxKeys: number): Checker<Record<string, T>> {
  return (value, path) => {
    if (!isPlainObject(value)) fail(path, 'an object', value);
    const entries = Object.entries(value);
    if (entries.length > maxKeys) throw new FieldError(path, `has ${entries.length} keys; the limit is ${maxKeys}`);
    // fromEntries defines own properties, so a key "__proto__" cannot change the prototype.
    return Object.fromEntries(entries.map(([k, v]) => [key(k, `${child(path, k)} (key)`), check(v, child(path, k))]));
  };
}

type Spec = Record<string, Checker<unknown>>;
type Out<S extends Spec> = { [K in keyof S]: S[K] extends Checker<infer T> ? T : never };

/**
 * A JSON object with exactly the given fields: required ones must be present, optional ones
 * may be absent, anything else is rejected (a misspelt field is a bug, not an extension).
 */
export function object<R extends Spec, O extends Spec = Record<never, never>>(required: R, optional?: O): Checker<Out<R> & Partial<Out<O>>> {
  return (value, path) => {
    if (!isPlainObject(value)) fail(path === '' ? '(root)' : path, 'a JSON object', value);
    for (const key of Object.keys(value)) {
      if (!Object.hasOwn(required, key) && !(optional && Object.hasOwn(optional, key))) {
        throw new FieldError(child(path, key), 'is not a known field');
      }
    }
    const out: Record<string, unknown> = {};
    for (const [key, check] of Object.entries(required)) {
      if (!Object.hasOwn(value, key)) throw new FieldError(child(path, key), 'is missing');
      out[key] = check(value[key], child(path, key));
    }
    for (const [key, check] of Object.entries(optional ?? {})) {
      if (Object.hasOwn(value, key) && value[key] !== undefined) out[key] = check(value[key], child(path, key));
    }
    return out as Out<R> & Partial<Out<O>>;
  };
}

/** Runs a checker, turning a FieldError into the caller's error. */
export function runChecker<T>(check: Checker<T>, value: unknown, onError: (e: FieldError) => Error): T {
  try {
    return check(value, '');
  } catch (e) {
    if (e instanceof FieldError) throw onError(e);
    throw e;
  }
}
