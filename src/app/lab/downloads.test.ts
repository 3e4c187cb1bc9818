import { describe, expect, it } from 'vitest';
import { DownloadTracker } from './downloads';

describe('DownloadTracker', () => {
  it('reports bytes, speed and cache hits per model file', () => {
    let t = 0;
    const d = new DownloadTracker(() => t);
    d.update('policy', { file: 'model.safetensors', loaded: 0, total: 4_000_000, fromCache: false });
    t = 2000;
    const rows = d.update('policy', { file: 'model.safetensors', loaded: 1_000_000, total: 4_000_000, fromCache: false });
    expect(rows).toEqual([
      { model: 'policy', file: 'model.safetensors', loaded: 1_000_000, total: 4_000_000, fromCache: false, bytesPerSecond: 500_000, done: false },
    ]);
    const cached = d.update('judge', { file: 'config.json', loaded: 10, total: 10, fromCache: true });
    expect(cached[1]).toMatchObject({ model: 'judge', fromCache: true, bytesPerSecond: null, done: true });
    d.clear();
    expect(d.list()).toEqual([]);
  });
});
