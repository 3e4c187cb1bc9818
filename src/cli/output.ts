/** Output paths: `-` is stdout wherever a command writes one text file, and nowhere else. */
import { writeFileSync } from 'node:fs';
import { UsageError } from './args';
import type { CliIo } from './io';

export const STDOUT = '-';

/**
 * Writes `text` to `path`, or line by line to stdout for `-`; returns where it went, for the
 * command's note ("... written to samples.jsonl").
 */
export function writeText(path: string, text: string, io: CliIo): string {
  if (path !== STDOUT) {
    writeFileSync(path, text);
    return path;
  }
  if (text) for (const line of text.replace(/\n$/, '').split('\n')) io.out(line);
  return 'stdout';
}

/**
 * Refuses `-` for an option that names a folder or a file written in place over time, which
 * stdout cannot be, instead of making a file or folder called `-`.
 */
export function notStdout(path: string, option: string, what: string): string {
  if (path === STDOUT) throw new UsageError(`--${option} names ${what}, which cannot be stdout; give a path`);
  return path;
}

/** At most one output may be stdout: two would interleave there. */
export function oneStdout(paths: Record<string, unknown>): void {
  const onStdout = Object.entries(paths).filter(([, p]) => p === STDOUT);
  if (onStdout.length > 1) throw new UsageError(`${onStdout.map(([o]) => `--${o}`).join(' and ')} cannot both be - (stdout); write one to a file`);
}
