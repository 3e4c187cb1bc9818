/**
 * The arms of a comparison (`nextstate reproduce --methods`, the lab's compare): the paper's three
 * methods, the shuffled-hint control, the storyteller's other-child control (OPD and Combined with
 * the hints the judge would write for another child), and the untrained base. A trained arm is a
 * method and whose hint its teacher reads; the base arm trains nothing and scores the starting policy.
 */
import { METHOD_TITLES, METHODS, type HintSource, type MethodName } from '../rl/presets';

export const TRAINED_ARMS = [...METHODS, 'combined-shuffled', 'opd-other-child', 'combined-other-child'] as const;
export type TrainedArm = (typeof TRAINED_ARMS)[number];
export const ARMS = ['base', ...TRAINED_ARMS] as const;
export type Arm = (typeof ARMS)[number];

/** The controls, by the method they run and the hint source they change. */
const CONTROLS: Record<Exclude<TrainedArm, MethodName>, { method: MethodName; hintSource: HintSource }> = {
  'combined-shuffled': { method: 'combined', hintSource: 'shuffled' },
  'opd-other-child': { method: 'opd', hintSource: 'other-child' },
  'combined-other-child': { method: 'combined', hintSource: 'other-child' },
};

/** The method and hint source of a trained arm. */
export function armSetup(arm: TrainedArm): { method: MethodName; hintSource: HintSource } {
  return Object.hasOwn(CONTROLS, arm) ? { ...CONTROLS[arm as keyof typeof CONTROLS] } : { method: arm as MethodName, hintSource: 'judge' };
}

/** The arms that rewrite hints for another child: a storyteller's only (run-config-check). */
export const OTHER_CHILD_ARMS: readonly TrainedArm[] = ['opd-other-child', 'combined-other-child'];

/**
 * The trained arms a comparison runs unless asked for others: the three methods and the
 * shuffled-hint control. The other-child control is asked for (`--methods`, the lab's
 * "with another child's hints"), since it needs a storyteller.
 */
export const DEFAULT_TRAINED_ARMS: readonly TrainedArm[] = TRAINED_ARMS.filter((arm) => !OTHER_CHILD_ARMS.includes(arm));

export function isTrainedArm(name: string): name is TrainedArm {
  return (TRAINED_ARMS as readonly string[]).includes(name);
}

export function isArm(name: string): name is Arm {
  return (ARMS as readonly string[]).includes(name);
}

/** The arm a run's method and hint source make. */
export function armOf(method: MethodName, hintSource: HintSource): TrainedArm {
  if (hintSource === 'other-child' && method !== 'binary') return `${method}-other-child`;
  return hintSource === 'shuffled' && method === 'combined' ? 'combined-shuffled' : method;
}

export const ARM_TITLES: Record<Arm, string> = {
  base: 'Base (untrained)',
  ...METHOD_TITLES,
  'combined-shuffled': 'Combined, shuffled hints',
  'opd-other-child': "OPD, another child's hints",
  'combined-other-child': "Combined, another child's hints",
};
