/**
 * Where tests find their real data (GSM8K test split, pretrained model weights): the repository's
 * own `data/` folder (see data/README.md), or, when NEXTSTATE_SHARED is set, a folder with the
 * shared layout (`models/...`, `data/gsm8k/...`), resolved from the repository root so that a
 * test's own working directory does not matter.
 *
 * Callers name what they need by its subpath in the shared layout, e.g. `models/stories260K` or
 * `data/gsm8k/test.jsonl`; the repository copy keeps both under data/ (data/models/...,
 * data/gsm8k/...).
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const override = process.env.NEXTSTATE_SHARED ? resolve(repoRoot, process.env.NEXTSTATE_SHARED) : null;

/** The folder the data is read from: NEXTSTATE_SHARED if set, else the repository's data/. */
export const dataRoot: string = override ?? resolve(repoRoot, 'data');

/**
 * The absolute path of `subpath` (a path in the shared layout, under `models/` or `data/`),
 * whether or not it exists.
 */
export function resolveDataPath(subpath: string): string {
  const parts = subpath.split(/[\\/]+/).filter((p) => p !== '' && p !== '.');
  if (parts[0] !== 'models' && parts[0] !== 'data') {
    throw new Error(`dataPath: '${subpath}' is not under models/ or data/ of the shared layout`);
  }
  if (override) return resolve(override, ...parts);
  // The repository copy drops the layout's own data/ level: models/X -> data/models/X,
  // data/gsm8k/X -> data/gsm8k/X.
  return resolve(dataRoot, ...(parts[0] === 'data' ? parts.slice(1) : parts));
}

/**
 * The absolute path of `subpath` (see resolveDataPath). Throws when it does not exist, so that a
 * test that needs the data fails instead of being skipped.
 */
export function dataPath(subpath: string): string {
  const path = resolveDataPath(subpath);
  if (existsSync(path)) return path;
  throw new Error(
    `test data missing: ${path} does not exist. ` +
      (override
        ? `NEXTSTATE_SHARED=${process.env.NEXTSTATE_SHARED} should point at a folder with models/ and data/gsm8k/; unset it to use the repository's data/.`
        : "It belongs to the repository's data/ folder (see data/README.md): restore it from git."),
  );
}
