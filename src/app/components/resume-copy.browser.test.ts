/**
 * An imported run resumes as a copy: a real one-step run on stories260K (the CPU engine),
 * exported, deleted and imported back, goes on from its adapter for one more step from the Runs
 * page, while the import stays as its file had it.
 */
import '../app.css';
import { flushSync } from 'svelte';
import { describe, expect, inject, it } from 'vitest';
import { userEvent } from 'vitest/browser';
import { makePreset } from '../../rl/presets';
import { exportRun } from '../../storage/index';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { render } from '../../../test/support/views/testing';
import RunList from './RunList.svelte';

const controller = labControllers('resume-copy-test');
const stories = `${location.origin}/@fs${inject('stories260KDir')}`;

describe('an imported run', () => {
  it('resumes as a new run copied from it, one more step from its last adapter, and the import is untouched', async () => {
    const lab = await controller();
    lab.setup.label = 'short story';
    lab.setup.policy = { source: 'hub', hubId: stories, localName: '', backend: 'cpu', weights: 'f32' };
    lab.setup.preset = makePreset('combined', { batch: { size: 2 }, finetune: { lora: { rank: 2 } }, judge: { maxNewTokens: 8 } });
    lab.setup.problems = { source: 'builtin', count: 2, order: 'reference' };
    lab.setup.schedule = { concurrentSessions: 2, steps: 1, evalEvery: 0, evalProblems: 1, evalVotes: 1 };
    lab.setup.sampling = { policy: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 8 }, user: { temperature: 0.7, maxNewTokens: 8 } };
    await lab.start();
    expect(lab.error).toBeNull();
    const made = lab.liveRunId!;
    await expect.poll(() => lab.phase, { timeout: 60_000, interval: 200 }).toBe('idle');
    expect((await lab.store.getRun(made))?.status).toBe('finished');
    const file = new File([await exportRun(lab.store, made, { includeAdapter: true })], 'short.nsrun');
    await lab.remove(made);

    const imported = (await lab.importFile(file))!.id;
    const before = await lab.store.records(imported);
    expect(before.filter((r) => r.record.kind === 'train_step')).toHaveLength(1);
    using view = render(RunList, { lab });
    flushSync();
    const steps = view.target.querySelector<HTMLInputElement>('[data-testid="copy-steps"]')!;
    // One step of one planned is done: as many again.
    expect(steps.value).toBe('2');
    const button = [...view.target.querySelectorAll('button')].find((b) => b.textContent === 'Resume a copy')!;
    await userEvent.click(button);
    await expect.poll(() => lab.liveRunId !== null || lab.error !== null, { timeout: 60_000, interval: 100 }).toBe(true);
    expect(lab.error).toBeNull();
    const copy = lab.liveRunId!;
    expect(copy).not.toBe(imported);
    await expect.poll(() => lab.phase, { timeout: 60_000, interval: 200 }).toBe('idle');

    const info = await lab.store.getRun(copy);
    expect(info).toMatchObject({ label: 'short story, resumed from short.nsrun', status: 'finished', readOnly: false });
    expect(info!.config).toMatchObject({ schedule: { steps: 2 } });
    const records = await lab.store.records(copy);
    // The imported records come first, as they were; then the one more step, from version 1.
    expect(records.slice(0, before.length).map((r) => r.record)).toEqual(before.map((r) => r.record));
    const trainSteps = records.flatMap((r) => (r.record.kind === 'train_step' ? [r.record] : []));
    expect(trainSteps.map((r) => r.step)).toEqual([1, 2]);
    expect(trainSteps[1].version).toBe(1);
    // The import is as its file had it.
    expect(await lab.store.records(imported)).toEqual(before);
    expect(await lab.store.getRun(imported)).toMatchObject({ status: 'imported', readOnly: true, label: 'short story' });

    // A finished copy is not an import: asked to resume as a copy, it says so.
    await lab.resumeCopy(copy, 3);
    expect(lab.error).toMatch(/^Only an imported run is resumed as a copy/);
  }, 120_000);
});
