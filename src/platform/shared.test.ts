import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot, sharedDir, sharedPath } from './shared';

describe('sharedDir', () => {
  it('defaults to ../shared beside the project', () => {
    expect(sharedDir({})).toBe(resolve(projectRoot, '..', 'shared'));
    expect(existsSync(join(projectRoot, 'package.json'))).toBe(true);
  });

  it('follows NEXTSTATE_SHARED, absolute or relative to the project root', () => {
    expect(sharedDir({ NEXTSTATE_SHARED: '/data/shared' })).toBe('/data/shared');
    expect(sharedDir({ NEXTSTATE_SHARED: 'fixtures/shared' })).toBe(resolve(projectRoot, 'fixtures/shared'));
    expect(sharedDir({ NEXTSTATE_SHARED: '  ' })).toBe(resolve(projectRoot, '..', 'shared'));
  });

  it('finds the design notes in the shared folder this run uses', () => {
    const design = readFileSync(sharedPath('DESIGN.md'), 'utf8');
    expect(design).toContain('Next-State Lab');
  });

  it('says where it looked when a file is missing', () => {
    expect(() => sharedPath('no-such-file.txt', { NEXTSTATE_SHARED: '/nonexistent' })).toThrow(/\/nonexistent.*NEXTSTATE_SHARED/);
  });
});
