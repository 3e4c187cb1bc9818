import { describe, expect, it } from 'vitest';
import { licenceProblems, lockedPackages } from '../../scripts/licences.mjs';

describe('dependency licences', () => {
  it('every locked package declares a licence an MIT project may depend on', () => {
    expect(lockedPackages().length).toBeGreaterThan(100);
    expect(licenceProblems()).toEqual([]);
  });

  it('names a package with an undeclared or unlisted licence', () => {
    const problems = licenceProblems([
      { name: 'fine', license: '(MIT OR CC0-1.0)', dev: false },
      { name: 'mixed', license: 'Apache-2.0 AND LGPL-3.0-or-later AND MIT', dev: false },
      { name: 'strong', license: 'GPL-3.0-only', dev: false },
      { name: 'silent', license: null, dev: true },
    ]);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^strong: licence "GPL-3.0-only"; read it/);
    expect(problems[1]).toMatch(/^silent: licence not declared/);
  });
});
