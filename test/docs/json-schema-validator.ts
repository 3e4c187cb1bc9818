/**
 * A validator for the part of JSON Schema (draft-07) that src/base/check.ts emits, written apart
 * from the checkers so the published files are tested against the standard's meaning rather than
 * against the code that made them. A keyword it does not know fails loudly: the generator must
 * not start emitting something this would silently skip.
 */
import type { JsonSchema } from '../../src/base/check';

const ANNOTATIONS = new Set(['$schema', '$id', 'title', 'description']);
const KEYWORDS = new Set([
  'type', 'const', 'enum', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'pattern',
  'items', 'minItems', 'maxItems', 'properties', 'required', 'additionalProperties', 'propertyNames', 'maxProperties', 'oneOf', 'anyOf',
]);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value);
  return typeOf(value) === type;
}

/** The problems of `value` against `schema`, each as "path: problem"; none when it is valid. */
export function validate(schema: JsonSchema, value: unknown, path = '$'): string[] {
  const s = schema as Record<string, unknown>;
  for (const key of Object.keys(s)) {
    if (!KEYWORDS.has(key) && !ANNOTATIONS.has(key)) throw new Error(`${path}: the schema uses "${key}", which this validator does not read`);
  }
  const out: string[] = [];
  const bad = (problem: string) => out.push(`${path}: ${problem}`);
  if (schema.type !== undefined && !hasType(value, schema.type)) return [`${path}: is ${typeOf(value)}, not ${schema.type}`];
  if (schema.const !== undefined && value !== schema.const) bad(`is not ${JSON.stringify(schema.const)}`);
  if (schema.enum !== undefined && !schema.enum.includes(value as string | number)) bad(`is not one of ${JSON.stringify(schema.enum)}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) bad(`is below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) bad(`is above ${schema.maximum}`);
    if (schema.exclusiveMinimum !== undefined && !(value > schema.exclusiveMinimum)) bad(`is not above ${schema.exclusiveMinimum}`);
    if (schema.exclusiveMaximum !== undefined && !(value < schema.exclusiveMaximum)) bad(`is not below ${schema.exclusiveMaximum}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) bad(`is shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && length > schema.maxLength) bad(`is longer than ${schema.maxLength}`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) bad(`does not match ${schema.pattern}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) bad(`has fewer than ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) bad(`has more than ${schema.maxItems} items`);
    if (schema.items) value.forEach((v, i) => out.push(...validate(schema.items!, v, `${path}[${i}]`)));
  }
  if (typeOf(value) === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) bad(`has more than ${schema.maxProperties} properties`);
    for (const key of schema.required ?? []) if (!Object.hasOwn(obj, key)) bad(`lacks "${key}"`);
    for (const key of keys) {
      const at = `${path}.${key}`;
      if (schema.propertyNames) out.push(...validate(schema.propertyNames, key, `${at} (name)`));
      const own = schema.properties && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
      if (own) out.push(...validate(own, obj[key], at));
      else if (schema.additionalProperties === false) bad(`has "${key}", which is not allowed`);
      else if (typeof schema.additionalProperties === 'object') out.push(...validate(schema.additionalProperties, obj[key], at));
    }
  }
  if (schema.anyOf && !schema.anyOf.some((s) => validate(s, value, path).length === 0)) bad('matches none of anyOf');
  if (schema.oneOf) {
    const matches = schema.oneOf.map((s) => validate(s, value, path));
    const passed = matches.filter((m) => m.length === 0).length;
    if (passed !== 1) {
      bad(`matches ${passed} of oneOf's ${schema.oneOf.length}`);
      // The branch that came closest says what to fix.
      if (passed === 0) out.push(...matches.reduce((a, b) => (b.length < a.length ? b : a)));
    }
  }
  return out;
}
