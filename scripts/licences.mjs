#!/usr/bin/env node
// The licence of every package in package-lock.json, checked against what an MIT project may
// depend on. `node scripts/licences.mjs` prints the listing; test/docs/licences.test.ts fails on a
// package whose licence is missing or not listed here.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Licences that ask only for notice: any use is compatible with MIT. */
export const PERMISSIVE = ['MIT', 'ISC', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD', 'CC0-1.0', 'BlueOak-1.0.0'];

/**
 * Weak-copyleft licences, compatible here because the project links the library unmodified and
 * does not ship it: LGPL-3.0 is libvips's prebuilt binaries, loaded by sharp through transformers.js
 * in Node (in the tests only: the installed command does not carry transformers.js); MPL-2.0 is lightningcss, a build tool (file-level copyleft, only on its own files).
 */
export const WEAK_COPYLEFT = ['LGPL-3.0-or-later', 'MPL-2.0'];

/** The SPDX ids an expression names: "(MIT OR CC0-1.0)" and "Apache-2.0 AND MIT" give each id. */
function spdxIds(expression) {
  return expression
    .replace(/[()]/g, ' ')
    .split(/\s+(?:AND|OR)\s+|\s+/)
    .filter(Boolean);
}

/** Every installed package: its path in the lock, licence, and whether only development needs it. */
export function lockedPackages(lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8'))) {
  return Object.entries(lock.packages)
    .filter(([path]) => path !== '')
    .map(([path, entry]) => ({ name: path.replace(/^.*node_modules\//, ''), license: entry.license ?? null, dev: entry.dev === true }));
}

/** The packages whose licence is missing or names an id in neither list, each as one line. */
export function licenceProblems(packages = lockedPackages()) {
  const allowed = new Set([...PERMISSIVE, ...WEAK_COPYLEFT]);
  return packages
    .filter((p) => p.license === null || !spdxIds(p.license).every((id) => allowed.has(id)))
    .map(
      (p) =>
        `${p.name}: licence ${p.license === null ? 'not declared' : `"${p.license}"`}; read it and add it to scripts/licences.mjs only if an MIT project may depend on it`,
    );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const packages = lockedPackages();
  const counts = new Map();
  for (const p of packages) {
    const key = `${p.dev ? 'development' : 'runtime'}  ${p.license ?? 'none'}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  for (const [key, n] of [...counts].sort()) console.log(`${String(n).padStart(4)}  ${key}`);
  const problems = licenceProblems(packages);
  for (const line of problems) console.error(line);
  process.exitCode = problems.length > 0 ? 1 : 0;
}
