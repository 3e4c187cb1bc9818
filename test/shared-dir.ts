/**
 * Where tests find `../shared` (GSM8K test split, real model weights): beside the repository,
 * or wherever NEXTSTATE_SHARED points, resolved from the repository root so that a test's own
 * working directory does not matter.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const sharedDir: string = resolve(repoRoot, process.env.NEXTSTATE_SHARED ?? '../shared');

/**
 * The absolute path of `subpath` inside the shared folder, or null when it is missing. A missing
 * folder is announced loudly, because the tests that need it are then skipped rather than failed
 * and a quiet skip would look like a pass.
 */
export function requireShared(subpath: string): string | null {
  const path = resolve(sharedDir, subpath);
  if (existsSync(path)) return path;
  console.warn(
    `!!! ../shared not found: ${path} does not exist. Tests that need it are SKIPPED. ` +
      'Put the shared folder beside the repository or set NEXTSTATE_SHARED to its path.',
  );
  return null;
}
