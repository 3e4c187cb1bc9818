/**
 * The Setup's "Weights" choice: each format with its planned memory beside the estimate, into
 * the run config, and through the policy worker's load, new and resumed (stories260K on the CPU
 * engine, q8).
 */
import '../app.css';
import { flushSync } from 'svelte';
import { describe, expect, inject, it, vi } from 'vitest';
import { userEvent } from 'vitest/browser';
import { makePreset } from '../../rl/presets';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { render } from '../../../test/support/views/testing';
import { toAnyRunConfig } from '../lab/setup';
import PolicyModelField from './PolicyModelField.svelte';

const controller = labControllers('weights-test');
const stories = `${location.origin}/@fs${inject('stories260KDir')}`;

const radios = (t: HTMLElement) => [...t.querySelectorAll<HTMLInputElement>('[data-testid="weights"] input[type="radio"]')];
const gib = (label: string) => Number(/about ([\d.]+) GiB/.exec(label)![1]);

describe('the Weights choice in Setup', () => {
  it('offers f16, q8, q4 and f32 with their memory, carries the choice into the run config, and keeps full fine-tuning on f32', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response('', { status: 500 })),
    );
    const lab = await controller();
    lab.setup.policy = { ...lab.setup.policy, source: 'hub', hubId: 'Qwen/Qwen3-4B', backend: 'webgpu' };
    using view = render(PolicyModelField, { lab, shaderF16: true });
    flushSync();
    const choices = radios(view.target);
    expect(choices.map((r) => [r.value, r.checked, r.disabled])).toEqual([
      ['f16', true, false],
      ['q8', false, false],
      ['q4', false, false],
      ['f32', false, false],
    ]);
    const labels = choices.map((r) => r.closest('label')!.textContent!);
    const [f16, q8, q4, f32] = labels.map(gib);
    // What each choice saves, before anything downloads.
    expect(f32).toBeGreaterThan(f16);
    expect(f16).toBeGreaterThan(q8);
    expect(q8).toBeGreaterThan(q4);

    await userEvent.click(choices[2]);
    flushSync();
    expect(lab.setup.policy.weights).toBe('q4');
    expect(view.target.querySelector('[data-testid="memory-plan"]')?.textContent).toContain(`about ${labels[2].split('about ')[1]}`);
    const config = toAnyRunConfig(lab.setup);
    expect(config.models.policy.weightFormat).toBe('q4');
    expect(config.modelRefs.policy.weightFormat).toBe('q4');

    lab.setup.preset = { ...lab.setup.preset, finetune: { ...lab.setup.preset.finetune, mode: 'full' } };
    flushSync();
    expect(radios(view.target).map((r) => [r.value, r.checked, r.disabled])).toEqual([
      ['f16', false, true],
      ['q8', false, true],
      ['q4', false, true],
      ['f32', true, false],
    ]);
    expect(view.target.textContent).toContain('Full fine-tuning trains every weight in f32');
    expect(toAnyRunConfig(lab.setup).models.policy.weightFormat).toBe('f32');
    vi.unstubAllGlobals();
  });

  it('loads the policy in the chosen format in the worker, and the stored run says so', async () => {
    const lab = await controller();
    lab.setup.policy = { source: 'hub', hubId: stories, localName: '', backend: 'cpu', weights: 'q8' };
    lab.setup.preset = makePreset('combined', { batch: { size: 2 }, finetune: { lora: { rank: 2 } }, judge: { maxNewTokens: 8 } });
    lab.setup.problems = { source: 'builtin', count: 2, order: 'reference' };
    lab.setup.schedule = { concurrentSessions: 2, steps: 1, evalEvery: 0, evalProblems: 1, evalVotes: 1 };
    lab.setup.sampling = { policy: { temperature: 1, topP: 1, topK: 0, maxNewTokens: 8 }, user: { temperature: 0.7, maxNewTokens: 8 } };
    await lab.start();
    expect(lab.error).toBeNull();
    const runId = lab.liveRunId!;
    await expect.poll(() => lab.policyInfo?.weightFormat, { timeout: 60_000, interval: 100 }).toBe('q8');
    lab.stop();
    await expect.poll(() => lab.phase, { timeout: 60_000, interval: 200 }).toBe('idle');
    const info = await lab.store.getRun(runId);
    expect(info?.config).toMatchObject({ models: { policy: { weightFormat: 'q8', backend: 'cpu' } }, modelRefs: { policy: { weightFormat: 'q8' } } });

    // Resuming reads the stored run's format, not the form's.
    lab.setup.policy.weights = 'f32';
    expect(lab.canResume(info!)).toBe(true);
    await lab.resumeRun(runId);
    expect(lab.error).toBeNull();
    await expect.poll(() => lab.policyInfo?.weightFormat, { timeout: 60_000, interval: 100 }).toBe('q8');
    lab.stop();
    await expect.poll(() => lab.phase, { timeout: 60_000, interval: 200 }).toBe('idle');
  }, 120_000);
});
