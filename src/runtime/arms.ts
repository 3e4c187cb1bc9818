/**
 * The arms of a comparison (`nextstate reproduce --methods`, the lab's compare): the paper's three
 * methods, the shuffled-hint control, and the untrained base. A trained arm is a method and whose
 * hint its teacher reads; the base arm trains nothing and scores the starting policy.
 */
import { METHOD_TITLES, METHODS, type HintSource, type MethodName } from '../rl/presets';

export const TRAINED_ARMS = [...METHODS, 'combined-shuffled'] as const;
export type TrainedArm = (typeof TRAINED_ARMS)[number];
export const ARMS = ['base', ...TRAINED_ARMS] as const;
export type Arm = (typeof ARMS)[number];

/** The method and hint source of a trained arm. */
export function armSetup(arm: TrainedArm): { method: MethodName; hintSource: HintSource } {
  return arm === 'combined-shuffled' ? { method: 'combined', hintSource: 'shuffled' } : { method: arm, hintSource: 'judge' };
}

export function isTrainedArm(name: string): name is TrainedArm {
  return (TRAINED_ARMS as readonly string[]).includes(name);
}

export function isArm(name: string): name is Arm {
  return (ARMS as readonly string[]).includes(name);
}

/** The arm a run's method and hint source make. */
export function armOf(method: MethodName, hintSource: HintSource): TrainedArm {
  return hintSource === 'shuffled' && method === 'combined' ? 'combined-shuffled' : method;
}

export const ARM_TITLES: Record<Arm, string> = { base: 'Base (untrained)', ...METHOD_TITLES, 'combined-shuffled': 'Combined, shuffled hints' };
