/**
 * Lab controllers for browser tests, each on its own IndexedDB database, closed and deleted
 * after every test so that no test sees another's runs.
 */
import { afterEach } from 'vitest';
import { LabController } from '../../../src/app/lab/controller.svelte';
import { RunStore } from '../../../src/storage/index';

export function labControllers(prefix: string): (name?: string) => Promise<LabController> {
  let n = 0;
  const labs: LabController[] = [];
  afterEach(async () => {
    for (const lab of labs.splice(0)) {
      lab.dispose();
      lab.store.close();
      await lab.store.db.delete().catch(() => {});
    }
  });
  return async (name = `${prefix}-${Date.now()}-${n++}`) => {
    const lab = new LabController(new RunStore({ name }));
    labs.push(lab);
    await lab.init({ webgpu: false });
    return lab;
  };
}
