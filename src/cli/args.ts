/** Argument parsing shared by every subcommand: node's parseArgs with typed readers. */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type Options = NonNullable<ParseArgsConfig['options']>;

export function parse(argv: string[], options: Options): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true }).values as Record<string, string | boolean | undefined>;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function positionals(argv: string[], options: Options): string[] {
  return parseArgs({ args: argv, options, allowPositionals: true, strict: false }).positionals;
}

export function required(v: Record<string, unknown>, name: string): string {
  const x = v[name];
  if (typeof x !== 'string' || x === '') throw new UsageError(`--${name} is required`);
  return x;
}

export function number(v: Record<string, unknown>, name: string, fallback: number, check: (x: number) => boolean = Number.isFinite): number {
  const x = v[name];
  if (x === undefined) return fallback;
  const n = Number(x);
  if (typeof x !== 'string' || !check(n)) throw new UsageError(`--${name} must be a valid number, got ${JSON.stringify(x)}`);
  return n;
}

export const isPositiveInt = (n: number) => Number.isInteger(n) && n > 0;
export const isNonNegative = (n: number) => Number.isFinite(n) && n >= 0;

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration option's milliseconds: a number with a unit (90s, 30m, 2h, 1500ms), or 0 for `off`.
 *
 * @throws UsageError naming the option for anything else
 */
export function durationMs(v: Record<string, unknown>, name: string): number | undefined {
  const x = v[name];
  if (x === undefined) return undefined;
  if (x === 'off') return 0;
  const m = typeof x === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(x.trim()) : null;
  const ms = m ? Math.round(Number(m[1]) * DURATION_UNITS[m[2]]) : 0;
  if (!(ms > 0)) throw new UsageError(`--${name} must be a duration such as 90s, 30m or 2h, or off, got ${JSON.stringify(x)}`);
  return ms;
}

const BYTE_UNITS: Record<string, number> = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 };

/**
 * A size option's bytes: a whole number, or a number with K, M or G (binary: 1K = 1024 bytes,
 * as memory is counted), such as 512M or 7.5G.
 *
 * @throws UsageError naming the option for anything else
 */
export function byteSize(v: Record<string, unknown>, name: string): number | undefined {
  const x = v[name];
  if (x === undefined) return undefined;
  const m = typeof x === 'string' ? /^(\d+(?:\.\d+)?)([kmg]?)$/i.exec(x.trim()) : null;
  const bytes = m ? Math.floor(Number(m[1]) * BYTE_UNITS[m[2].toLowerCase()]) : 0;
  if (!(bytes > 0 && Number.isSafeInteger(bytes)))
    throw new UsageError(`--${name} must be a size in bytes such as 8G, 512M or 65536, got ${JSON.stringify(x)}`);
  return bytes;
}

/** A comma-separated option, each item read by `read` (null: not valid). */
export function list<T>(text: string, name: string, read: (item: string) => T | null): T[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const out = items.map((item) => {
    const x = read(item);
    if (x === null) throw new UsageError(`--${name}: ${JSON.stringify(item)} is not valid`);
    return x;
  });
  if (!out.length) throw new UsageError(`--${name} names nothing`);
  return out;
}
