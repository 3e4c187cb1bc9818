/**
 * A model load's progress lines: a download's bytes, share, speed and time left, then storing
 * the weights, at most one line an interval, nothing for quick work or cached files; and, through
 * the real `nextstate generate` on a slow mock hub, on a terminal only.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCliWith } from '../../test/support/cli/run-cli';
import { startStoriesHub, STORIES_REPO, type MockHub } from '../../test/support/gpu/mock-hub';
import { loadProgress } from './load-progress';

/** A reporter on a clock the test moves, and the lines it wrote. */
function reporter() {
  let t = 0;
  const lines: string[] = [];
  const hooks = loadProgress(
    (l) => lines.push(l),
    'org/model',
    () => t,
    1000,
  );
  return { ...hooks, lines, at: (ms: number) => (t = ms) };
}

const file = (loaded: number, total: number | null, fromCache = false) => ({ file: 'model.safetensors', loaded, total, fromCache });

describe('load progress lines', () => {
  it('a download: a line an interval with bytes, share, speed and time left, then one with the mean speed', () => {
    const r = reporter();
    r.onProgress!(file(0, 8e6));
    r.at(400);
    r.onProgress!(file(1e6, 8e6)); // within the interval: no line
    r.at(1000);
    r.onProgress!(file(2e6, 8e6));
    r.at(1500);
    r.onProgress!(file(3e6, 8e6));
    r.at(2000);
    r.onProgress!(file(4e6, 8e6));
    r.at(4000);
    r.onProgress!(file(8e6, 8e6));
    expect(r.lines).toEqual([
      'downloading model.safetensors of org/model: 2.0 MB of 8.0 MB (25%), 2.0 MB/s (about 3 s left)',
      'downloading model.safetensors of org/model: 4.0 MB of 8.0 MB (50%), 2.0 MB/s (about 2 s left)',
      'downloaded model.safetensors of org/model: 8.0 MB in 4.0 s (2.0 MB/s)',
    ]);
    // The loader's own last event for the file, after it was done, adds nothing.
    r.onProgress!(file(8e6, 8e6));
    expect(r.lines).toHaveLength(3);
  });

  it('a download of unknown size says what came and how fast', () => {
    const r = reporter();
    r.onProgress!(file(0, null));
    r.at(2000);
    r.onProgress!(file(3e6, null));
    expect(r.lines).toEqual(['downloading model.safetensors of org/model: 3.0 MB, 1.5 MB/s']);
  });

  it('nothing for a file from the cache, or one that came within the interval', () => {
    const r = reporter();
    r.onProgress!(file(8e6, 8e6, true));
    r.onProgress!({ ...file(0, 500), file: 'config.json' });
    r.at(300);
    r.onProgress!({ ...file(500, 500), file: 'config.json' });
    expect(r.lines).toEqual([]);
  });

  it('storing the weights: its share and time left an interval, then how long it took', () => {
    const r = reporter();
    const total = 135e6;
    r.onConvert!({ done: 0, total, format: 'q4' });
    r.at(1000);
    r.onConvert!({ done: total / 4, total, format: 'q4' });
    r.at(1200);
    r.onConvert!({ done: total / 2, total, format: 'q4' });
    r.at(2500);
    r.onConvert!({ done: total, total, format: 'q4' });
    expect(r.lines).toEqual(['storing the weights of org/model as q4: 25% (about 3 s left)', 'stored the weights of org/model as q4 in 2.5 s']);

    const quick = reporter();
    quick.onConvert!({ done: 0, total, format: 'f32' });
    quick.at(200);
    quick.onConvert!({ done: total, total, format: 'f32' });
    expect(quick.lines).toEqual([]);
  });
});

describe('nextstate generate on a slow hub', () => {
  const REPO = STORIES_REPO;
  let hub: MockHub;
  beforeAll(async () => {
    const { hub: started, commits } = await startStoriesHub(1);
    hub = started;
    // About 1 MB over 2.4 s: two or more lines at one a second.
    hub.slow(commits[0], 'model.safetensors', 2400);
    vi.stubEnv('HF_ENDPOINT', hub.url);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await hub.close();
  });

  /** `generate` into an empty cache, as a terminal (or a log file) sees stderr. */
  const generate = async (stderrIsTTY: boolean, ...more: string[]) => {
    vi.stubEnv('HF_HOME', mkdtempSync(join(tmpdir(), 'nextstate-load-progress-')));
    return runCliWith({ stderrIsTTY }, 'generate', '--model', REPO, '--prompt', 'Once upon a time', '--max-new-tokens', '4', ...more);
  };

  it('shows the download on a terminal, on stderr, and the data alone on stdout', async () => {
    const watched = await generate(true);
    expect(watched.code).toBe(0);
    expect(watched.out).toHaveLength(1);
    const lines = watched.err.filter((l) => l.includes('model.safetensors'));
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(
      lines.slice(0, -1).every((l) => /^downloading model\.safetensors of karpathy\/stories260K: [\d.]+ \w+ of 1\.0 MB \(\d+%\), [\d.]+ \w+\/s/.test(l)),
    ).toBe(true);
    expect(lines.at(-1)).toMatch(/^downloaded model\.safetensors of karpathy\/stories260K: 1\.0 MB in \d\.\d s \([\d.]+ \w+\/s\)$/);
  }, 30_000);

  it('is quiet when stderr is not a terminal, and with --quiet', async () => {
    const logged = await generate(false);
    expect(logged.code).toBe(0);
    expect(logged.err).toEqual([]);
    const quiet = await generate(true, '--quiet');
    expect(quiet.code).toBe(0);
    expect(quiet.err).toEqual([]);
  }, 30_000);
});
