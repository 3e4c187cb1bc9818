import { afterEach, describe, expect, it } from 'vitest';
import { CpuBackend } from '../gpu/cpu/backend';
import { makePreset } from '../rl/presets';
import type { EnginePolicyService } from '../runtime/policy-service';
import { exampleConfig, type RunConfig } from '../runtime/run-config';
import { loadEnginePolicy } from '../runtime/services-node';
import { tinyModel } from '../../test/fixtures/tiny-model';
import { besideMemory, placeSteps, TrainerMemoryError, type StepsPlace } from './serve-trainer';

const places: StepsPlace[] = [];
afterEach(async () => {
  await Promise.all(places.splice(0).map((p) => p.trainer?.close()));
});

async function setup(): Promise<{ config: RunConfig; policy: EnginePolicyService }> {
  const { dir } = await tinyModel({ family: 'qwen3' });
  const config = exampleConfig('student', dir);
  config.models.policy = { ...config.models.policy, backend: 'cpu-reference', weightFormat: 'f32' };
  return { config, policy: await loadEnginePolicy(config, new CpuBackend()) };
}

describe('where serve trains its steps', () => {
  it('plans two copies of the weights, and the gradient, AdamW moments and activations only for the trainer', async () => {
    const { config, policy } = await setup();
    const model = policy.policy.config;
    const m = besideMemory(model, config);
    expect(m.total).toBe(m.serving.bytes.total + m.trainer.bytes.total);
    expect(m.trainer.bytes.weights).toBe(m.serving.bytes.weights);
    expect(m.serving.bytes).toMatchObject({ optimizer: 0, activations: 0, kvCache: 0 });
    expect(m.trainer.bytes.optimizer).toBeGreaterThan(0);
    expect(m.trainer.bytes.activations).toBeGreaterThan(0);
    expect(m.trainer.training).toBe('lora');
    // Smaller weights, as the message advises, make both copies smaller.
    const q8 = besideMemory(model, { ...config, models: { ...config.models, policy: { ...config.models.policy, weightFormat: 'q8' } } });
    expect(q8.serving.bytes.weights).toBeLessThan(m.serving.bytes.weights);
    expect(q8.total).toBeLessThan(m.total);
  });

  it('starts no trainer thread where the two copies exceed --max-memory: steps refuse requests, and the reason is said once and kept', async () => {
    const { config, policy } = await setup();
    const needed = besideMemory(policy.policy.config, config).total;

    const heard: Error[] = [];
    const over = placeSteps(policy, config, policy.policy.config, { thread: true, maxMemory: needed - 1, unavailable: (e) => heard.push(e) });
    places.push(over);
    expect(over.trainer).toBeNull();
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBeInstanceOf(TrainerMemoryError);
    expect(heard[0].message).toMatch(/over --max-memory .*503 with Retry-After.*Raise --max-memory/);
    expect(over.now()).toEqual({ thread: false, why: heard[0].message });
    expect(policy.trainsBeside).toBe(false);
    expect(policy.refusesDuringSteps).toBe(true);

    const { policy: roomy } = await setup();
    const fits = placeSteps(roomy, config, roomy.policy.config, { thread: true, maxMemory: needed, unavailable: (e) => heard.push(e) });
    places.push(fits);
    expect(fits.trainer).not.toBeNull();
    expect(fits.now()).toEqual({ thread: true });
    expect(roomy.refusesDuringSteps).toBe(false);
    expect(heard).toHaveLength(1);
  });

  it('trains on the serving thread, holding requests, when the thread is turned off or the run fine-tunes every weight', async () => {
    const { config, policy } = await setup();
    const heard: Error[] = [];
    const off = placeSteps(policy, config, policy.policy.config, { thread: false, maxMemory: 1, unavailable: (e) => heard.push(e) });
    expect(off.trainer).toBeNull();
    expect(off.now()).toEqual({ thread: false, why: expect.stringMatching(/--no-trainer-thread.*requests wait for each/) });

    const full = { ...config, preset: makePreset(config.preset.method, { finetune: { mode: 'full' } }) };
    const whole = placeSteps(policy, full, policy.policy.config, { thread: true, unavailable: (e) => heard.push(e) });
    expect(whole.trainer).toBeNull();
    expect(whole.now()).toEqual({ thread: false, why: expect.stringMatching(/^full fine-tuning .*requests wait for each/) });
    expect(heard).toEqual([]);
    expect(policy.refusesDuringSteps).toBe(false);
  });
});
