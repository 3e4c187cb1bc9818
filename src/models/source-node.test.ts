import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { modelSource, packageRoot } from './source-node';

describe('packageRoot', () => {
  it('is the repository root for the sources', () => {
    expect(packageRoot()).toBe(resolve(import.meta.dirname, '../..'));
    expect(modelSource('bundled:storyteller-demo').id).toBe(resolve(import.meta.dirname, '../../public/models/storyteller-demo'));
  });

  it('is the nearest folder with a package.json, however deep the compiled file sits', () => {
    const root = mkdtempSync(join(tmpdir(), 'nextstate-root-'));
    try {
      writeFileSync(join(root, 'package.json'), '{}');
      mkdirSync(join(root, 'dist-cli/a'), { recursive: true });
      expect(packageRoot(join(root, 'dist-cli'))).toBe(root);
      expect(packageRoot(join(root, 'dist-cli/a'))).toBe(root);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
