import { describe, expect, it } from 'vitest';
import { StorageFullError } from '../../storage/index';
import { DurableWrites } from './durable';

const full = () => new StorageFullError('r1', 'run one', 1024, [], null, null, new Error('QuotaExceededError'));

describe('durable writes', () => {
  it('waits out a full disk and tries the write again, dropping nothing', async () => {
    const heard: string[] = [];
    const writes = new DurableWrites((m) => heard.push(m));
    let tries = 0;
    const done = writes.run(async () => {
      if (++tries === 1) throw full();
      return 'saved';
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(heard).toHaveLength(1);
    expect(heard[0]).toMatch(/Browser storage is full/);
    expect(writes.waiting).toBe(1);
    writes.retry();
    expect(await done).toBe('saved');
    expect(tries).toBe(2);
    expect(writes.waiting).toBe(0);
  });

  it('throws any other error at once', async () => {
    const writes = new DurableWrites(() => {});
    await expect(writes.run(() => Promise.reject(new Error('bad record')))).rejects.toThrow('bad record');
    expect(writes.waiting).toBe(0);
  });
});
