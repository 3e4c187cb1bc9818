/**
 * How the Setup's policy is stored on the device: the "Weights" choice, as both tracks' run
 * configs carry it (models.policy.weightFormat, and modelRefs.policy for the run file's header).
 */
import type { WeightFormat } from '../../gpu/quant';
import type { PolicyModelConfig } from '../../runtime/run-config';
import type { ModelRef } from '../../storage/index';
import type { LabSetup } from './setup-shape';

/** The choices in the order the Setup offers them: the engine's WebGPU default first. */
export const LAB_WEIGHT_FORMATS: readonly WeightFormat[] = ['f16', 'q8', 'q4', 'f32'];

export const DEFAULT_LAB_WEIGHTS: WeightFormat = 'f16';

/** Full fine-tuning trains f32 weights (FullTrainer refuses packed ones), so it stores only f32. */
export function allowedWeightFormats(setup: Pick<LabSetup, 'preset'>): readonly WeightFormat[] {
  return setup.preset.finetune.mode === 'full' ? ['f32'] : LAB_WEIGHT_FORMATS;
}

/** The format a setup loads: its choice, where its preset allows it, else f32. */
export function labWeightFormat(setup: Pick<LabSetup, 'preset' | 'policy'>): WeightFormat {
  const allowed = allowedWeightFormats(setup);
  return allowed.includes(setup.policy.weights) ? setup.policy.weights : allowed[0];
}

/** The policy's entries in a run config: what to load, and what the run file's header names. */
export function labPolicy(setup: Pick<LabSetup, 'preset' | 'policy'>, model: string): { policy: PolicyModelConfig; ref: ModelRef } {
  const weightFormat = labWeightFormat(setup);
  return { policy: { model, backend: setup.policy.backend, weightFormat }, ref: { id: model, weightFormat } };
}
