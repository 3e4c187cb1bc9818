/**
 * Output paths: `-` is stdout wherever a command writes one text file, and nowhere else. Files
 * and folders are written beside their place and renamed into it, never through a symbolic link,
 * and never over a file that is there unless the command was given --force.
 */
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from './args';
import type { CliIo } from './io';

export const STDOUT = '-';

/**
 * Writes `text` to `path`, or line by line to stdout for `-`; returns where it went, for the
 * command's note ("... written to samples.jsonl").
 */
export function writeText(path: string, text: string, io: CliIo, o: WriteOptions): string {
  if (path !== STDOUT) {
    writeOutputFile(path, text, o);
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

/** How a command writes its outputs: which option names the path, and whether it may replace files. */
export interface WriteOptions {
  option: string;
  /** --force: replace files that are there. */
  force: boolean;
}

export const FORCE_OPTION = { force: { type: 'boolean' as const } };

const lstatOrNull = (path: string) => {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
};

/** Refuses a path that is a symbolic link: a write must never land where a link points. */
function notALink(path: string, o: WriteOptions, what: string): ReturnType<typeof lstatOrNull> {
  const info = lstatOrNull(path);
  if (info?.isSymbolicLink()) {
    throw new UsageError(`--${o.option} ${path} is a symbolic link; name the ${what} itself, so that nothing is written where the link points`);
  }
  return info;
}

/**
 * Checks, before any work, that `dir` can take files named `names`: a folder or nothing (never a
 * link), and without --force none of the names already there.
 *
 * @throws UsageError saying what is in the way
 */
export function checkOutputFolder(dir: string, names: readonly string[], o: WriteOptions): void {
  const info = notALink(dir, o, 'folder');
  if (!info) return;
  if (!info.isDirectory()) throw new UsageError(`--${o.option} ${dir} is not a folder; name a folder (it is made if missing)`);
  const present = names.filter((n) => lstatOrNull(join(dir, n)) !== null);
  const folders = present.filter((n) => lstatOrNull(join(dir, n))!.isDirectory());
  if (folders.length) throw new UsageError(`--${o.option} ${dir} holds a folder named ${folders[0]}; name another folder`);
  if (present.length && !o.force) {
    throw new UsageError(
      `--${o.option} ${dir} already holds ${present.join(', ')}; pass --force to replace ${present.length > 1 ? 'them' : 'it'}, or name another folder`,
    );
  }
}

/** A fresh sibling of `path` on the same file system, for writing and then renaming into place. */
const scratchName = (path: string) => join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);

/**
 * Writes `files` into `dir`: each into a scratch folder beside it first, then renamed into place,
 * so a write that fails (a full disk, a kill) leaves every file that was there as it was, and no
 * file is ever half written. A missing folder appears whole; into an existing one (--force) each
 * file arrives whole. Checks as checkOutputFolder does first.
 */
export function writeOutputFolder(dir: string, files: Iterable<readonly [string, Uint8Array | string]>, o: WriteOptions): void {
  const entries = [...files];
  checkOutputFolder(
    dir,
    entries.map(([n]) => n),
    o,
  );
  mkdirSync(dirname(resolve(dir)), { recursive: true });
  const scratch = scratchName(resolve(dir));
  mkdirSync(scratch);
  try {
    for (const [name, data] of entries) writeFileSync(join(scratch, name), data, { flag: 'wx' });
    if (!lstatOrNull(dir)) {
      renameSync(scratch, dir);
      return;
    }
    for (const [name] of entries) renameSync(join(scratch, name), join(dir, name));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Writes one file through a scratch sibling renamed into place; refuses a link, anything but a
 * regular file, and (without --force) a file that is there.
 */
export function writeOutputFile(path: string, data: Uint8Array | string, o: WriteOptions): void {
  const info = notALink(path, o, 'file');
  if (info && !info.isFile()) throw new UsageError(`--${o.option} ${path} is not a regular file; name a file to write`);
  if (info && !o.force) throw new UsageError(`--${o.option} ${path} already exists; pass --force to replace it, or name another file`);
  const scratch = scratchName(resolve(path));
  try {
    writeFileSync(scratch, data, { flag: 'wx' });
    renameSync(scratch, path);
  } finally {
    rmSync(scratch, { force: true });
  }
}
