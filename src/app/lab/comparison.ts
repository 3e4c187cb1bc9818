/**
 * The paper's comparison in one action: the same setup once per method, run one after another and
 * overlaid on one chart. The step-0 evaluation every run starts with is the untrained base, so
 * three runs show the four rows of the paper's table.
 */
import { METHODS, type MethodName } from '../../rl/presets';
import { presetFor, type LabSetup } from './setup';

const TITLES: Record<MethodName, string> = { binary: 'Binary RL', opd: 'OPD', combined: 'Combined' };

/**
 * One setup per method, each with that method's preset (votes, weights, teacher), keeping the
 * training settings the person chose (optimizer, batch, fine-tuning), so that only the method
 * differs between the runs.
 */
export function comparisonSetups(setup: LabSetup): LabSetup[] {
  const group = setup.label.trim() || `${setup.scenario} comparison`;
  return METHODS.map((method) => {
    const preset = presetFor(method, setup.scenario);
    return {
      ...setup,
      method,
      label: `${group} · ${TITLES[method]}`,
      preset: { ...preset, optimizer: setup.preset.optimizer, batch: setup.preset.batch, finetune: setup.preset.finetune, loss: { ...preset.loss, klCoef: setup.preset.loss.klCoef } },
    };
  });
}
