import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { CpuBackend } from '../gpu/cpu/backend';
import { Policy } from '../gpu/policy';
import { DEMO_STORY_MODEL } from '../models/bundled';
import { DirSource, modelSource } from '../models/source-node';
import { nameSlot } from './name-slot';

describe('the name at its slot', () => {
  it("the demo model's teacher puts a name it met after 'was called', and not one it never met; stories260K reads no hint", async () => {
    const demo = await Policy.load(modelSource(DEMO_STORY_MODEL), new CpuBackend());
    const max = await nameSlot(demo, { subject: 'dog', name: 'Max', favourite: 'ball' });
    expect(max.cases).toBe(36);
    expect(max.hinted).toBeGreaterThan(0.3);
    expect(max.hinted).toBeGreaterThan(4 * max.unhinted);
    expect(max.hintedFirstToken).toBeGreaterThanOrEqual(max.hinted);
    // Held out of its fine-tuning: the teacher starts the name and cannot finish it.
    const noodle = await nameSlot(demo, { subject: 'duck', name: 'Noodle', favourite: 'boat' });
    expect(noodle.hinted).toBeLessThan(0.05);
    const base = await Policy.load(new DirSource(dataPath('models/stories260K')), new CpuBackend());
    const plain = await nameSlot(base, { subject: 'dog', name: 'Max', favourite: 'ball' });
    expect(plain.hinted).toBeLessThan(2 * plain.unhinted + 0.02);
  }, 60_000);
});
