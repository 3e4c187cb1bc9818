/**
 * `--set PATH=VALUE`: one field of a run config from the command line, e.g.
 * `--set preset.judge.binaryVotes=3`. The override is written into the config's JSON before the
 * config is read, so the config checker that reads config files checks it, and names the field
 * it refuses.
 */
import { UsageError } from './args';

export const SET_OPTION = { set: { type: 'string', multiple: true } } as const;
export const SET_USAGE = '[--set PATH=VALUE ...]';
export const SET_NOTE = '--set writes one field of the run config (repeatable), e.g. --set preset.judge.binaryVotes=3; VALUE is JSON, or text where it is not';

/** Keys that would reach an object's prototype rather than a field of the config. */
const UNSAFE = new Set(['__proto__', 'constructor', 'prototype']);

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The --set values of parsed arguments. */
export function setValues(v: Record<string, unknown>): string[] {
  return (v.set as string[] | undefined) ?? [];
}

/**
 * Writes each `PATH=VALUE` into `config` (a config's JSON, before it is checked). Objects on the
 * path that are missing are made, so an optional setting can be switched on.
 *
 * @throws UsageError for an entry without `=`, an empty or unsafe key, or a path through a value
 */
export function applySets(config: Record<string, unknown>, sets: readonly string[]): void {
  for (const entry of sets) {
    const eq = entry.indexOf('=');
    const keys = eq < 0 ? [] : entry.slice(0, eq).split('.');
    if (eq < 0 || keys.some((k) => k === '' || UNSAFE.has(k)))
      throw new UsageError(`--set ${JSON.stringify(entry)}: give PATH=VALUE with a dotted path of config fields, such as preset.judge.binaryVotes=3`);
    let at = config;
    for (const [i, key] of keys.slice(0, -1).entries()) {
      const next = Object.hasOwn(at, key) ? at[key] : (at[key] = {});
      if (!isPlainObject(next))
        throw new UsageError(`--set ${keys.join('.')}: ${keys.slice(0, i + 1).join('.')} is ${JSON.stringify(next)}, not an object with fields to set`);
      at = next;
    }
    at[keys[keys.length - 1]] = valueOf(entry.slice(eq + 1));
  }
}

/** JSON where the text is JSON (3, true, [0.9, 0.99], "3"), else the text itself (current). */
function valueOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
