/** The bench's durability measurement runs as the bench page runs it, on a small plan. */
import { describe, expect, it } from 'vitest';
import { measureDurability } from '../../bench/lib/durability';

describe('measureDurability', () => {
  it('times a step of writes in both modes and leaves no database behind', async () => {
    const before = (await indexedDB.databases()).map((d) => d.name);
    const cell = await measureDurability({ steps: 3, turnsPerStep: 2, adapterBytes: 1000 });
    expect(cell).toMatchObject({ turnsPerStep: 2, transactionsPerStep: 8, strictTransactionsPerStep: 2 });
    expect(cell.adapterBytes).toBeGreaterThan(1000);
    for (const mode of ['default', 'strict'] as const) {
      expect(cell.msPerStep[mode]).toMatchObject({ reps: 3, warmups: 1 });
      expect(cell.msPerStep[mode].median).toBeGreaterThan(0);
    }
    expect(Number.isFinite(cell.extraMsPerStep)).toBe(true);
    expect((await indexedDB.databases()).map((d) => d.name)).toEqual(before);
  });
});
