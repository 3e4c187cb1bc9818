/**
 * Where the shared fixtures live (DESIGN.md, GSM8K, the tiny pretrained models): the folder
 * named by NEXTSTATE_SHARED, else `../shared` beside the project root. Node only (tests, CLI).
 */
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root: two levels above this file (src/platform/). */
export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Absolute path of the shared folder. A relative NEXTSTATE_SHARED is taken from the project root. */
export function sharedDir(env: Record<string, string | undefined> = process.env): string {
  const named = env.NEXTSTATE_SHARED?.trim();
  if (named) return isAbsolute(named) ? named : resolve(projectRoot, named);
  return resolve(projectRoot, '..', 'shared');
}

/** Absolute path of a file under the shared folder; throws a helpful error when it is missing. */
export function sharedPath(relative: string, env: Record<string, string | undefined> = process.env): string {
  const dir = sharedDir(env);
  const p = join(dir, relative);
  if (!existsSync(p)) {
    throw new Error(`${relative} not found in the shared folder ${dir} (set NEXTSTATE_SHARED to its location)`);
  }
  return p;
}
