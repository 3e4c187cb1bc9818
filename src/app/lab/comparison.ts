/**
 * The paper's comparison in one action: the same setup once per method, run one after another and
 * overlaid on one chart. The step-0 evaluation every run starts with is the untrained base, so
 * three runs show the four rows of the paper's table. On the tool-call track the comparison is
 * its reward ablation: integrated step rewards against the outcome only.
 */
import { METHOD_TITLES, METHODS, presetSwitchedTo } from '../../rl/presets';
import { laptopOverrides } from '../../runtime/run-config';
import type { LabSetup } from './setup';
import { REWARD_MODE_CHOICES } from './toolcall-setup';

/**
 * One setup per method, each with that method's preset (votes, weights, teacher), keeping the
 * training settings the person chose (optimizer, batch, fine-tuning), so that only the method
 * differs between the runs.
 */
export function comparisonSetups(setup: LabSetup): LabSetup[] {
  if (setup.track === 'toolcall') return rewardModeSetups(setup);
  const group = setup.label.trim() || `${setup.scenario} comparison`;
  return METHODS.map((method) => {
    return { ...setup, method, label: `${group} · ${METHOD_TITLES[method]}`, preset: presetSwitchedTo(method, setup.preset, laptopOverrides(setup.scenario)) };
  });
}

/**
 * The tool-call track's comparison (the paper's step-reward ablation): the same setup with
 * integrated rewards (outcome plus the PRM's step votes) and with the outcome only.
 */
function rewardModeSetups(setup: LabSetup): LabSetup[] {
  const group = setup.label.trim() || 'toolcall comparison';
  return REWARD_MODE_CHOICES.map(({ id, title }) => ({ ...setup, label: `${group} · ${title}`, toolcall: { ...setup.toolcall, rewardMode: id } }));
}

/** A method comparison under way: the setups still to run and the runs already started. */
export class ComparisonQueue {
  private pending: LabSetup[] = [];
  private started: string[] = [];
  private running = false;

  get active(): boolean {
    return this.running;
  }

  /** Starts comparing the methods on `setup`; returns the first run's setup. */
  begin(setup: LabSetup): LabSetup {
    const [first, ...rest] = comparisonSetups(setup);
    this.pending = rest;
    this.started = [];
    this.running = true;
    return first;
  }

  /** Counts a run of the comparison as started; returns the runs before it, to overlay on its charts. */
  add(runId: string): string[] {
    const before = this.started;
    this.started = [...before, runId];
    return before;
  }

  /** The next setup to run, or null (and the comparison is over) when none is left. */
  next(): LabSetup | null {
    const setup = this.running ? this.pending.shift() : undefined;
    if (!setup) this.end();
    return setup ?? null;
  }

  end(): void {
    this.running = false;
    this.pending = [];
    this.started = [];
  }
}
