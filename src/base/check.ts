/**
 * Small typed checkers for untrusted JSON (imported run files, presets). Each checker takes
 * a value and its field path, returns the value typed, or throws FieldError naming the path.
 * Objects are rebuilt from their known keys only, so nothing unexpected (extra fields,
 * `__proto__`) survives into the app.
 *
 * Each checker also carries the JSON Schema of what it accepts, and `Infer` gives its type, so
 * one definition per shape yields the TypeScript type, the checker and the published schema
 * (docs/schema/) and the three cannot drift. Rules a schema cannot state (cross-field checks,
 * a URL that parses) stay in code; the schema then accepts a little more than the checker.
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

/** The part of JSON Schema (draft-07, which editors and validators widely read) the checkers emit. */
export interface JsonSchema {
  $schema?: string;
  $id?: string;
  title?: string;
  description?: string;
  type?: 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';
  const?: string | number | boolean;
  enum?: readonly (string | number)[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  maxProperties?: number;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
}

/** Checks `value` found at `path`; returns it typed or throws FieldError. `schema` states the same shape as JSON Schema. */
export interface Checker<T> {
  (value: unknown, path: string): T;
  readonly schema: JsonSchema;
}

/** The type a checker returns: the one TypeScript type of its shape. */
export type Infer<C> = C extends Checker<infer T> ? T : never;

/**
 * A checker written by hand, for rules the combinators do not express; `schema` must say what it
 * accepts, as closely as JSON Schema can.
 */
export function checker<T>(schema: JsonSchema, check: (value: unknown, path: string) => T): Checker<T> {
  return Object.assign(check, { schema });
}

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
  return checker({ type: 'string', maxLength, ...(minLength > 0 ? { minLength } : {}) }, (value, path) => {
    if (typeof value !== 'string') fail(path, 'a string', value);
    if (value.length > maxLength) {
      throw new FieldError(path, `is ${value.length} characters long; the limit is ${maxLength}`);
    }
    if (value.length < minLength) fail(path, `a string of at least ${minLength} characters`, value);
    return value;
  });
}

/** Finite number within [min, max]. */
export function num(min = -Infinity, max = Infinity): Checker<number> {
  return checker({ type: 'number', ...bounds(min, max) }, (value, path) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) fail(path, 'a finite number', value);
    if (value < min || value > max) fail(path, `a number in [${min}, ${max}]`, value);
    return value;
  });
}

/** JSON has no infinities, so an unbounded side is left out of the schema. */
function bounds(min: number, max: number): Pick<JsonSchema, 'minimum' | 'maximum'> {
  return { ...(Number.isFinite(min) ? { minimum: min } : {}), ...(Number.isFinite(max) ? { maximum: max } : {}) };
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
  return checker({ type: 'number', exclusiveMinimum: min }, (value, path) => {
    const n = finite(value, path);
    if (!(n > min)) fail(path, `a number greater than ${min}`, n);
    return n;
  });
}

/** Integer within [min, max]. */
export function int(min = 0, max = Number.MAX_SAFE_INTEGER): Checker<number> {
  return checker({ type: 'integer', ...bounds(min, max) }, (value, path) => {
    if (typeof value !== 'number' || !Number.isInteger(value)) fail(path, 'an integer', value);
    if (value < min || value > max) fail(path, `an integer in [${min}, ${max}]`, value);
    return value;
  });
}

/** true or false; no truthy strings, since a run file says exactly what it means. */
export const bool: Checker<boolean> = checker({ type: 'boolean' }, (value, path) => {
  if (typeof value !== 'boolean') fail(path, 'true or false', value);
  return value;
});

/** One of a fixed set of literals. */
export function oneOf<const T extends readonly (string | number)[]>(...allowed: T): Checker<T[number]> {
  const list = allowed.map((a) => JSON.stringify(a)).join(', ');
  return checker(allowed.length === 1 ? { const: allowed[0] } : { enum: [...allowed] }, (value, path) => {
    if (!allowed.includes(value as T[number])) fail(path, `one of ${list}`, value);
    return value as T[number];
  });
}

/** null, or what `check` accepts. */
export function nullable<T>(check: Checker<T>): Checker<T | null> {
  return checker({ anyOf: [check.schema, { type: 'null' }] }, (value, path) => (value === null ? null : check(value, path)));
}

/** Array of at most `maxLength` entries, each checked; the length is checked before any entry. */
export function arrayOf<T>(check: Checker<T>, maxLength: number): Checker<T[]> {
  return checker({ type: 'array', items: check.schema, maxItems: maxLength }, (value, path) => {
    if (!Array.isArray(value)) fail(path, 'an array', value);
    if (value.length > maxLength) {
      throw new FieldError(path, `has ${value.length} entries; the limit is ${maxLength}`);
    }
    return value.map((v, i) => check(v, child(path, i)));
  });
}

/** Array of exactly two checked values (Adam betas). */
export function pair<T>(check: Checker<T>): Checker<[T, T]> {
  return checker({ type: 'array', items: check.schema, minItems: 2, maxItems: 2 }, (value, path): [T, T] => {
    if (!Array.isArray(value) || value.length !== 2) fail(path, 'an array of two values', value);
    return [check(value[0], child(path, 0)), check(value[1], child(path, 1))];
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON object used as a map with checked keys and values. */
export function mapOf<T>(key: Checker<string>, check: Checker<T>, maxKeys: number): Checker<Record<string, T>> {
  const schema: JsonSchema = { type: 'object', propertyNames: key.schema, additionalProperties: check.schema, maxProperties: maxKeys };
  return checker(schema, (value, path) => {
    if (!isPlainObject(value)) fail(path, 'an object', value);
    const entries = Object.entries(value);
    if (entries.length > maxKeys) throw new FieldError(path, `has ${entries.length} keys; the limit is ${maxKeys}`);
    // fromEntries defines own properties, so a key "__proto__" cannot change the prototype.
    return Object.fromEntries(entries.map(([k, v]) => [key(k, `${child(path, k)} (key)`), check(v, child(path, k))]));
  });
}

export type Spec = Record<string, Checker<unknown>>;
type Out<S extends Spec> = { [K in keyof S]: S[K] extends Checker<infer T> ? T : never };

/**
 * A JSON object with exactly the given fields: required ones must be present, optional ones
 * may be absent, anything else is rejected (a misspelt field is a bug, not an extension).
 */
export function object<R extends Spec, O extends Spec = Record<never, never>>(required: R, optional?: O): Checker<Out<R> & Partial<Out<O>>> {
  const properties = Object.fromEntries(Object.entries({ ...required, ...optional }).map(([k, c]) => [k, c.schema]));
  const schema: JsonSchema = { type: 'object', properties, required: Object.keys(required), additionalProperties: false };
  return checker(schema, (value, path) => {
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
  });
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

/**
 * One of several object shapes, picked by the string at `key` (a record's `kind`, a generator's
 * `kind`). A value whose `key` names no shape fails at `key` with `problem`, so the message says
 * which kinds exist rather than what some other shape lacks.
 */
export function discriminated<S extends Record<string, Checker<object>>>(
  key: string,
  shapes: S,
  problem = `must be one of ${Object.keys(shapes).join(', ')}`,
): Checker<Infer<S[keyof S]>> {
  return checker({ oneOf: Object.values(shapes).map((c) => c.schema) }, (value, path) => {
    const k = isPlainObject(value) ? value[key] : undefined;
    if (typeof k !== 'string' || !Object.hasOwn(shapes, k)) throw new FieldError(child(path, key), problem);
    return shapes[k](value, path) as Infer<S[keyof S]>;
  });
}
