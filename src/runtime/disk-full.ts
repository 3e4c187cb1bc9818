/**
 * Writing a run's files when the disk may fill: whole writes or none, and a full disk told in one
 * line with the room left, instead of an unhandled rejection's stack trace.
 */
import { statfsSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

/** The disk (or the user's quota) had no room for a write to a run's file. */
export class DiskFullError extends Error {
  override name = 'DiskFullError';
}

const FULL = new Set(['ENOSPC', 'EDQUOT']);

/** Bytes free to this user on the file system of `path`'s folder; null when it cannot be told. */
function bytesFree(path: string): number | null {
  try {
    const s = statfsSync(dirname(path));
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}

/**
 * `e` as a DiskFullError naming `path` (as `name`, by default its file name) when it says the
 * disk is full; otherwise `e` itself.
 */
export function diskError(e: unknown, path: string, name = basename(path)): unknown {
  if (!FULL.has((e as NodeJS.ErrnoException)?.code ?? '')) return e;
  const free = bytesFree(path);
  return new DiskFullError(
    `disk full while writing ${name}: ${free ?? 'an unknown number of'} bytes free; free some space in ${dirname(path)}, then continue with --resume`,
  );
}

/** Writes all of `bytes` at the handle's position: one write may take only part when the disk fills. */
export async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) {
    const { bytesWritten } = await handle.write(bytes, at, bytes.length - at);
    if (bytesWritten === 0) throw Object.assign(new Error('no byte was written'), { code: 'ENOSPC' });
    at += bytesWritten;
  }
}
