/**
 * The paper's comparison in one action: the same setup once per method, run one after another and
 * overlaid on one chart. The step-0 evaluation every run starts with is the untrained base, so
 * three runs show the four rows of the paper's table.
 */
import { METHOD_TITLES, METHODS, presetSwitchedTo } from '../../rl/presets';
import { laptopOverrides } from '../../runtime/run-config';
import type { LabSetup } from './setup';

/**
 * One setup per method, each with that method's preset (votes, weights, teacher), keeping the
 * training settings the person chose (optimizer, batch, fine-tuning), so that only the method
 * differs between the runs.
 */
export function comparisonSetups(setup: LabSetup): LabSetup[] {
  const group = setup.label.trim() || `${setup.scenario} comparison`;
  return METHODS.map((method) => {
    return { ...setup, method, label: `${group} · ${METHOD_TITLES[method]}`, preset: presetSwitchedTo(method, setup.preset, laptopOverrides(setup.scenario)) };
  });
}
