/** test/data-dir.ts: the repository's data/ by default, NEXTSTATE_SHARED's shared layout when set. */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

async function load(shared: string | undefined) {
  vi.resetModules();
  vi.stubEnv('NEXTSTATE_SHARED', shared);
  return import('./data-dir');
}

afterEach(() => vi.unstubAllEnvs());

describe('dataPath', () => {
  it("maps the shared layout's subpaths onto the repository's data/ by default", async () => {
    const { dataPath, dataRoot } = await load(undefined);
    expect(dataRoot).toBe(join(repoRoot, 'data'));
    expect(dataPath('models/stories260K')).toBe(join(repoRoot, 'data/models/stories260K'));
    expect(dataPath('models/TinyStories-656K/config.json')).toBe(join(repoRoot, 'data/models/TinyStories-656K/config.json'));
    expect(dataPath('data/gsm8k/test.jsonl')).toBe(join(repoRoot, 'data/gsm8k/test.jsonl'));
    expect(existsSync(dataPath('data/gsm8k/openclaw-order.json'))).toBe(true);
  });

  it('reads the shared layout under NEXTSTATE_SHARED, resolved from the repository root', async () => {
    const { dataRoot, resolveDataPath } = await load('../elsewhere');
    expect(dataRoot).toBe(resolve(repoRoot, '../elsewhere'));
    expect(resolveDataPath('models/stories260K')).toBe(resolve(repoRoot, '../elsewhere/models/stories260K'));
    expect(resolveDataPath('data/gsm8k/test.jsonl')).toBe(resolve(repoRoot, '../elsewhere/data/gsm8k/test.jsonl'));
  });

  it('throws, naming the path, when the data is missing or the subpath is outside the layout', async () => {
    const { dataPath } = await load(undefined);
    expect(() => dataPath('models/no-such-model')).toThrow(join(repoRoot, 'data/models/no-such-model'));
    expect(() => dataPath('gsm8k/test.jsonl')).toThrow(/not under models\/ or data\//);
    const elsewhere = await load('/nonexistent-nextstate-data');
    expect(() => elsewhere.dataPath('models/stories260K')).toThrow(/NEXTSTATE_SHARED=\/nonexistent-nextstate-data/);
  });
});
