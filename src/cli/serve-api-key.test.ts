/** Where `nextstate serve` takes its key from, and the warning for a key anyone can read in ps. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from './args';
import { serveApiKey } from './serve';

const dir = mkdtempSync(join(tmpdir(), 'serve-key-'));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

function keyOf(options: { key?: string; file?: string }, env: Record<string, string | undefined> = {}) {
  const warnings: string[] = [];
  return { key: serveApiKey(options, env, (l) => warnings.push(l)), warnings };
}

describe('the serve key', () => {
  it("reads a key file's first line, trimmed, ahead of the environment, without a warning", () => {
    expect(keyOf({ file: file('key', '  s3cret  \r\nsecond line\n') }, { NEXTSTATE_SERVE_API_KEY: 'env' })).toEqual({ key: 's3cret', warnings: [] });
  });

  it('takes NEXTSTATE_SERVE_API_KEY without a warning, and no key when none is given', () => {
    expect(keyOf({}, { NEXTSTATE_SERVE_API_KEY: 'env' })).toEqual({ key: 'env', warnings: [] });
    expect(keyOf({}, { NEXTSTATE_SERVE_API_KEY: '' })).toEqual({ key: undefined, warnings: [] });
  });

  it('warns, in one line, that a key on the command line is visible in ps', () => {
    const { key, warnings } = keyOf({ key: 'k' });
    expect(key).toBe('k');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: --api-key is visible .*ps.*--api-key-file/);
  });

  it('refuses both ways at once, an empty first line, and a file that is not there, each in one line', () => {
    expect(() => keyOf({ key: 'k', file: file('k2', 'x') })).toThrow(UsageError);
    expect(() => keyOf({ file: file('empty', '\nkey on the second line\n') })).toThrow(/first line is empty/);
    const missing = () => keyOf({ file: join(dir, 'none') });
    expect(missing).toThrow(/none/);
    try {
      missing();
    } catch (e) {
      expect((e as Error).message).not.toMatch(/\n/);
    }
  });
});
