/**
 * The Setup's policy field shows the memory plan (gpu/plan.ts) before anything downloads: for a
 * hub model whose config.json the app ships, at once and without a single request.
 */
import '../app.css';
import { flushSync } from 'svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { labControllers } from '../../../test/support/app/lab-controllers';
import { render } from '../../../test/support/views/testing';
import PolicyModelField from './PolicyModelField.svelte';

const controller = labControllers('plan-test');

afterEach(() => vi.unstubAllGlobals());

describe('the memory plan in Setup', () => {
  it('plans Qwen/Qwen3-4B from the shipped config.json with no request, every category named', async () => {
    const fetchSpy = vi.fn(async () => new Response('', { status: 500 }));
    vi.stubGlobal('fetch', fetchSpy);
    const lab = await controller();
    lab.setup.policy.source = 'hub';
    lab.setup.policy.hubId = 'Qwen/Qwen3-4B';
    using view = render(PolicyModelField, { lab, shaderF16: true });
    flushSync();
    const plan = view.target.querySelector('[data-testid="memory-plan"]');
    expect(plan?.textContent).toMatch(/Qwen3ForCausalLM, 4,022,468,096 parameters \(from the config\.json shipped with the app, before any download\)/);
    for (const label of [
      'weights',
      'KV cache',
      'activations kept for the backward',
      'LoRA weights and gradient',
      'AdamW moments',
      'scratch',
      'Largest buffer',
    ]) {
      expect(plan?.textContent).toContain(label);
    }
    expect(view.target.textContent).toMatch(/With per-layer recomputation of activations \(an option of nextstate train --recompute layer\): about [\d.]+ GiB/);
    expect(fetchSpy).not.toHaveBeenCalled();

    // An unknown model shows nothing until its config.json is checked.
    lab.setup.policy.hubId = 'someone/some-model';
    flushSync();
    expect(view.target.querySelector('[data-testid="memory-plan"]')).toBeNull();
  });
});
